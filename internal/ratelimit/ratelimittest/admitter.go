package ratelimittest

import (
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/ratelimit"
)

// Separate is the reference Admitter: the limits checked one by one, as
// the request path does without a shared one (lifecycle.RateLimits).
type Separate struct {
	Requests, Tokens ratelimit.Limiter
	Running          ratelimit.Concurrency
}

var _ ratelimit.Admitter = (*Separate)(nil)

// NewSeparate returns a Separate on fresh in-memory limiters.
func NewSeparate() *Separate {
	return &Separate{Requests: ratelimit.NewMemory(), Tokens: ratelimit.NewMemory(), Running: ratelimit.NewSlots()}
}

// Admit implements ratelimit.Admitter.
func (s *Separate) Admit(key string, l ratelimit.Limits, now time.Time) ratelimit.Admission {
	var a ratelimit.Admission
	if l.TPM > 0 {
		a.Tokens = s.Tokens.Take(key, 0, l.TPM, now)
	}
	if l.RPM > 0 {
		if a.Requests = s.Requests.Take(key, 1, l.RPM, now); !a.Requests.Allowed {
			a.Refused = ratelimit.RefusedRequests
			return a
		}
	}
	if l.Concurrency > 0 {
		if !s.Running.Acquire(key, l.Concurrency) {
			a.Refused = ratelimit.RefusedConcurrency
			return a
		}
		a.Slot = true
	}
	return a
}

// TakeTokens implements ratelimit.Admitter.
func (s *Separate) TakeTokens(key string, n int64, _ ratelimit.Ahead, tpm int64, now time.Time) ratelimit.Result {
	return s.Tokens.Take(key, n, tpm, now)
}

// Done implements ratelimit.Admitter.
func (s *Separate) Done(key string, slot bool, tokens, tpm int64, now time.Time) {
	if slot {
		s.Running.Release(key)
	}
	if tokens != 0 && tpm > 0 {
		s.Tokens.Take(key, tokens, tpm, now)
	}
}

// admitStep is one call of an Admitter table: Admit, TakeTokens of n
// tokens, or Done of slot and n tokens more than the request took (the
// runner subtracts what Admit took ahead when TakeTokens did not run).
type admitStep struct {
	at   time.Duration
	op   string // "admit", "take", "done"
	n    int64  // take: the tokens; done: the correction after the take
	slot bool   // done: give back a slot

	refused   ratelimit.Refusal // admit
	gotSlot   bool              // admit
	remaining int64             // admit: requests remaining; take: tokens remaining
	tokens    int64             // admit: tokens remaining, when tpm is set
	allowed   bool              // take
	retry     time.Duration     // admit refused on requests, take refused
}

// RunAdmitter runs the Admitter suite: every case against newAdmitter's
// fresh, empty Admitter and against Separate, which must agree on every
// answer. Done's effects must be seen by the same key's next call at
// once (a client that waits for each answer never meets its own slot or
// tokens still held).
func RunAdmitter(t *testing.T, newAdmitter func(t *testing.T) ratelimit.Admitter) {
	lim := ratelimit.Limits{RPM: 3, TPM: 100, Concurrency: 1}
	cases := []struct {
		name  string
		l     ratelimit.Limits
		steps []admitStep
	}{
		{"requests per minute", ratelimit.Limits{RPM: 2}, []admitStep{
			{op: "admit", remaining: 1},
			{op: "admit", remaining: 0},
			{at: 10 * time.Second, op: "admit", refused: ratelimit.RefusedRequests, retry: 50 * time.Second},
			{at: 60 * time.Second, op: "admit", remaining: 1},
		}},
		{"a slot comes back with done", ratelimit.Limits{Concurrency: 1}, []admitStep{
			{op: "admit", gotSlot: true},
			{op: "admit", refused: ratelimit.RefusedConcurrency},
			{op: "done", slot: true},
			{op: "admit", gotSlot: true},
			{op: "done", slot: true},
			{op: "done", slot: true}, // nothing more to give back
			{op: "admit", gotSlot: true},
			{op: "admit", refused: ratelimit.RefusedConcurrency},
		}},
		{"tokens taken, refunded, read at admission", ratelimit.Limits{TPM: 100}, []admitStep{
			{op: "admit", tokens: 100},
			{op: "take", n: 80, allowed: true, remaining: 20},
			{op: "take", n: 30, allowed: false, remaining: 20, retry: 60 * time.Second},
			{op: "done", n: -60},
			{op: "take", n: 30, allowed: true, remaining: 50},
			{op: "done", n: -10},
			{op: "admit", tokens: 60},
			{op: "take", n: 30, allowed: true, remaining: 30},
			{op: "done", n: 500}, // used more than the bound: taken only if it fits
			{op: "admit", tokens: 30},
			{op: "take", n: 25, allowed: true, remaining: 5},
			{op: "done", n: -25},
			{op: "admit", tokens: 30},
			{op: "take", n: 50, allowed: false, remaining: 30, retry: 60 * time.Second}, // more than was taken ahead, refused: all of it back
			{op: "admit", tokens: 30},
		}},
		{"tokens taken ahead, then more", ratelimit.Limits{TPM: 1000}, []admitStep{
			{op: "admit", tokens: 1000},
			{op: "take", n: 100, allowed: true, remaining: 900},
			{op: "done"},
			{op: "admit", tokens: 900},
			{op: "take", n: 300, allowed: true, remaining: 600},
			{op: "done", n: -50},
			{op: "admit", tokens: 650},
			{op: "take", n: 200, allowed: true, remaining: 450},
			{op: "done", n: -200},
			{op: "admit", tokens: 650},
			{op: "done"}, // refused before its tokens were known: what was taken ahead goes back
			{op: "admit", tokens: 650},
			{at: 70 * time.Second, op: "admit", tokens: 1000},
			{at: 70 * time.Second, op: "take", n: 1, allowed: true, remaining: 999},
		}},
		{"all three; refused on requests takes no slot", lim, []admitStep{
			{op: "admit", remaining: 2, tokens: 100, gotSlot: true},
			{op: "take", n: 40, allowed: true, remaining: 60},
			{op: "admit", remaining: 1, tokens: 60, refused: ratelimit.RefusedConcurrency},
			{op: "done", slot: true, n: -40},
			{op: "admit", remaining: 0, tokens: 100, gotSlot: true},
			{op: "done", slot: true},
			{at: time.Second, op: "admit", tokens: 100, refused: ratelimit.RefusedRequests, retry: 59 * time.Second},
			{at: time.Second, op: "take", n: 10, allowed: true, remaining: 90},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, impl := range []struct {
				name string
				a    ratelimit.Admitter
			}{{"reference", NewSeparate()}, {"implementation", newAdmitter(t)}} {
				var ahead ratelimit.Ahead // as lifecycle keeps it for the request
				for i, st := range tc.steps {
					now := start.Add(st.at)
					switch st.op {
					case "admit":
						got := impl.a.Admit("k", tc.l, now)
						ahead = got.Ahead
						rem := got.Requests.Remaining
						if got.Refused != st.refused || got.Slot != st.gotSlot || rem != st.remaining ||
							(tc.l.TPM > 0 && got.Tokens.Remaining != st.tokens) {
							t.Fatalf("%s step %d: admit = refused %d, slot %v, remaining %d, tokens %d; want %d, %v, %d, %d",
								impl.name, i, got.Refused, got.Slot, rem, got.Tokens.Remaining, st.refused, st.gotSlot, st.remaining, st.tokens)
						}
						if st.refused == ratelimit.RefusedRequests && !near(got.Requests.RetryAfter, st.retry) {
							t.Fatalf("%s step %d: retry after %v, want %v", impl.name, i, got.Requests.RetryAfter, st.retry)
						}
						if tc.l.RPM > 0 && got.Requests.Limit != tc.l.RPM {
							t.Fatalf("%s step %d: requests limit %d, want %d", impl.name, i, got.Requests.Limit, tc.l.RPM)
						}
					case "take":
						got := impl.a.TakeTokens("k", st.n, ahead, tc.l.TPM, now)
						ahead = ratelimit.Ahead{}
						if got.Allowed != st.allowed || got.Remaining != st.remaining || (!st.allowed && !near(got.RetryAfter, st.retry)) {
							t.Fatalf("%s step %d: take %d = %+v, want allowed %v, remaining %d, retry %v",
								impl.name, i, st.n, got, st.allowed, st.remaining, st.retry)
						}
					case "done":
						impl.a.Done("k", st.slot, st.n-ahead.Tokens, tc.l.TPM, now)
						ahead = ratelimit.Ahead{}
					}
				}
			}
		})
	}
	t.Run("concurrent admissions never exceed the slots", func(t *testing.T) {
		a := newAdmitter(t)
		var mu sync.Mutex
		held, most := 0, 0
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 25 {
					if !a.Admit("k", ratelimit.Limits{Concurrency: 3}, time.Now()).Slot {
						continue
					}
					mu.Lock()
					held++
					most = max(most, held)
					mu.Unlock()
					time.Sleep(time.Millisecond) // hold it while the others try
					mu.Lock()
					held--
					mu.Unlock()
					a.Done("k", true, 0, 0, time.Now())
				}
			}()
		}
		wg.Wait()
		if most > 3 || most == 0 {
			t.Fatalf("at most %d slots held at once, want 1 to 3", most)
		}
	})
}
