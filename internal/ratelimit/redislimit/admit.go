package redislimit

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/modelgate/modelgate/internal/ratelimit"
)

// DefaultFlush is how often an Admitter writes what Done counted and no
// later call of the same key carried.
const DefaultFlush = 20 * time.Millisecond

// Admitter is a ratelimit.Admitter on a requests Limiter, a tokens
// Limiter and Slots, with their keys, semantics and leases: a request
// costs one script call at admission (the token allowance read, the
// request counted, a slot taken) and one for its tokens, and nothing when
// it ends. Concurrent requests' calls share pipelines (see pipe). Done only counts in memory: the key's next Admit (releases)
// or TakeTokens (token corrections) on this replica carries what it
// counted to Redis, in the same script and before its own check, and Run
// writes the rest every Flush, so the other replicas see a slot come back
// within Flush.
type Admitter struct {
	req, tok *Limiter
	s        *Slots
	p        *pipe // Admit's and TakeTokens' calls
	flush    time.Duration

	mu   sync.Mutex
	toks map[string]int64 // token corrections Done counted, per key
	tpm  map[string]int64 // the limit each correction is counted against
	need map[string]int64 // what each key's last TakeTokens took, to take ahead
}

// maxNeed bounds Admitter.need: past it the map starts again empty (it
// only saves round trips).
const maxNeed = 1 << 16

var _ ratelimit.Admitter = (*Admitter)(nil)

// NewAdmitter returns an Admitter on req, tok and s (whose lease and
// heartbeat Run keeps: do not also run s.Run); flush 0 is DefaultFlush.
func NewAdmitter(req, tok *Limiter, s *Slots, flush time.Duration) *Admitter {
	if flush <= 0 {
		flush = DefaultFlush
	}
	return &Admitter{req: req, tok: tok, s: s, flush: flush, p: &pipe{c: s.c, timeout: s.o.Timeout},
		toks: make(map[string]int64), tpm: make(map[string]int64), need: make(map[string]int64)}
}

// Failures is how many calls Redis failed so far (each allowed).
func (a *Admitter) Failures() int64 {
	return a.req.Failures() + a.tok.Failures() + a.s.Failures()
}

// admitScript is one Admit. KEYS: the requests' list and head, the tokens'
// list and head, the slots' hash. ARGV: now (µs), the new bucket's end
// (µs), the window (µs), rpm, tpm, concurrency (0: none), the instance,
// the lease (ms, unused), the heartbeat keys' prefix, the hash's TTL
// (ms), the releases to write first, the token correction to write
// first, the tokens to take ahead (when the request is admitted and they
// fit twice). It returns {refused (0, 1 requests, 2 concurrency), the
// requests' take (4 numbers), the tokens' remaining and reset (before any
// taken ahead), slot taken (0/1), tokens taken ahead and the remaining
// and reset after them}.
var admitScript = redis.NewScript(windowLua + `
local at, ends, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local rpm, tpm, conc = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local h, me, hbp = KEYS[5], ARGV[7], ARGV[9]
local rel, ahead = tonumber(ARGV[11]), tonumber(ARGV[13])
local out = {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
local function release()
  if rel > 0 and redis.call('HINCRBY', h, me, -rel) <= 0 then redis.call('HDEL', h, me) end
end
local tok
if tpm > 0 then
  -- the correction Done counted, or a read: either answers what remains
  tok = open(KEYS[3], KEYS[4], at, window)
  local _, r, s = tok:take(tonumber(ARGV[12]), tpm, ends)
  out[6], out[7] = r, s
end
if rpm > 0 then
  local w = open(KEYS[1], KEYS[2], at, window)
  local a, r, s, t = w:take(1, rpm, ends)
  w:save()
  out[2], out[3], out[4], out[5] = a, r, s, t
  if a == 0 then
    out[1] = 1
    release()
    if tok then tok:save() end
    return out
  end
end
if conc > 0 then
  -- this instance's entry still counts the releases it carries
  local all = redis.call('HGETALL', h)
  local held, mine = 0, 0
  for i = 1, #all, 2 do
    local inst = all[i]
    if inst == me then
      mine = tonumber(all[i + 1])
      held = held + mine
    elseif redis.call('EXISTS', hbp .. inst) == 1 then
      held = held + tonumber(all[i + 1])
    else
      redis.call('HDEL', h, inst)
    end
  end
  if held - rel >= conc then
    out[1] = 2
    release()
    if tok then tok:save() end
    return out
  end
  -- the releases carried and the slot taken, in one write (none when they cancel out)
  local n = math.max(mine - rel, 0) + 1
  if n ~= mine then redis.call('HSET', h, me, n) end
  -- the heartbeat (Run) renews the hashes this instance holds slots in
  if mine == 0 then redis.call('PEXPIRE', h, ARGV[10]) end
  out[8] = 1
else
  release()
end
if tok then
  if ahead > 0 and out[6] >= 2 * ahead then
    local a, r, s = tok:take(ahead, tpm, ends)
    if a == 1 then out[9], out[10], out[11] = ahead, r, s end
  end
  tok:save()
end
return out
`)

// tokensScript is one TakeTokens. KEYS: the tokens' list and head. ARGV:
// now (µs), the new bucket's end (µs), the window (µs), the correction to
// write first, the cost, the limit. It returns take's four numbers.
var tokensScript = redis.NewScript(windowLua + `
local w = open(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[3]))
local ends, limit, d = tonumber(ARGV[2]), tonumber(ARGV[6]), tonumber(ARGV[4])
if d ~= 0 then w:take(d, limit, ends) end
local a, r, s, t = w:take(tonumber(ARGV[5]), limit, ends)
w:save()
return {a, r, s, t}
`)

// Admit implements ratelimit.Admitter: one script call, carrying the
// key's releases and token correction Done counted. When Redis fails the
// request is allowed (see the package doc).
func (a *Admitter) Admit(key string, l ratelimit.Limits, now time.Time) ratelimit.Admission {
	s := a.s
	s.beat.RLock()
	defer s.beat.RUnlock()
	rel := a.takeReleases(key)
	d, ahead := a.takeCorrection(key, l.TPM)
	at, end := instants(now)
	keys := append(append(make([]string, 0, 5), a.req.keys(key)...), a.tok.keys(key)...)
	keys = append(keys, s.Key(key))
	v, err := a.p.run(admitScript, keys, at, end, windowMicros, l.RPM, l.TPM, l.Concurrency,
		s.instance, s.lease.Milliseconds(), s.hbPrefix, s.hashTTL().Milliseconds(), rel, d, ahead)
	if err == nil && len(v) != 11 {
		err = errShape
	}
	if err != nil {
		a.failed(key, rel, "admit", err)
		var ad ratelimit.Admission
		if l.RPM > 0 {
			ad.Requests = failedOpen(1, l.RPM)
		}
		if l.TPM > 0 {
			ad.Tokens = failedOpen(0, l.TPM)
		}
		if l.Concurrency > 0 {
			s.mu.Lock()
			s.open[key]++
			s.mu.Unlock()
			ad.Slot = true
		}
		return ad
	}
	ad := ratelimit.Admission{Refused: ratelimit.Refusal(v[0])}
	if l.RPM > 0 {
		ad.Requests = result(v[1:5], l.RPM)
	}
	if l.TPM > 0 {
		ad.Tokens = ratelimit.Result{Allowed: true, Limit: l.TPM, Remaining: v[5], Reset: time.Duration(v[6]) * time.Microsecond}
	}
	if v[7] == 1 {
		s.mu.Lock()
		s.held[key]++
		s.mu.Unlock()
		ad.Slot = true
	}
	if v[8] > 0 {
		ad.Ahead = ratelimit.Ahead{Tokens: v[8], Remaining: v[9], Reset: time.Duration(v[10]) * time.Microsecond}
	}
	return ad
}

// TakeTokens implements ratelimit.Admitter: nothing to send when Admit
// took enough ahead (what is left over goes back with the key's next
// call), else one script call carrying the key's token correction and
// giving back what was taken ahead before taking n.
func (a *Admitter) TakeTokens(key string, n int64, ahead ratelimit.Ahead, tpm int64, now time.Time) ratelimit.Result {
	if tpm <= 0 {
		return ratelimit.Result{Allowed: true}
	}
	n = min(n, tpm)
	if ahead.Tokens > 0 && n <= ahead.Tokens {
		a.mu.Lock()
		a.noteNeed(key, n)
		if d := n - ahead.Tokens; d != 0 {
			a.toks[key] += d
			a.tpm[key] = tpm
		}
		a.mu.Unlock()
		return ratelimit.Result{Allowed: true, Limit: tpm, Remaining: ahead.Remaining + ahead.Tokens - n, Reset: ahead.Reset}
	}
	a.s.beat.RLock()
	defer a.s.beat.RUnlock()
	d, _ := a.takeCorrection(key, tpm)
	a.mu.Lock()
	a.noteNeed(key, n)
	a.mu.Unlock()
	at, end := instants(now)
	v, err := a.p.run(tokensScript, a.tok.keys(key),
		at, end, windowMicros, d-ahead.Tokens, n, tpm)
	if err == nil && len(v) != 4 {
		err = errShape
	}
	if err != nil {
		// What was taken ahead stays taken: the window forgets it
		// within a minute.
		a.tok.fail.fail("take", err)
		return failedOpen(n, tpm)
	}
	return result(v, tpm)
}

// noteNeed remembers n as key's need, for its next Admit to take ahead
// (a.mu held).
func (a *Admitter) noteNeed(key string, n int64) {
	if len(a.need) >= maxNeed {
		clear(a.need)
	}
	a.need[key] = n
}

// Done implements ratelimit.Admitter: it only counts; see Admitter.
func (a *Admitter) Done(key string, slot bool, tokens, tpm int64, _ time.Time) {
	if slot {
		s := a.s
		s.mu.Lock()
		switch {
		case s.open[key] > 0:
			dec(s.open, key) // allowed while Redis failed: nothing there
		case s.held[key] > 0:
			dec(s.held, key)
			s.pending[key]++
		}
		s.mu.Unlock()
	}
	if tokens != 0 && tpm > 0 {
		a.mu.Lock()
		a.toks[key] += tokens
		a.tpm[key] = tpm
		a.mu.Unlock()
	}
}

// takeReleases takes the releases pending for key, for a call to carry
// (the caller holds beat shared).
func (a *Admitter) takeReleases(key string) int64 {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.pending[key]
	if n != 0 {
		delete(s.pending, key)
	}
	return n
}

// takeCorrection takes key's pending token correction for a call to
// carry against tpm (0 without one): a refund in full, more tokens at
// most tpm, as Limiter.Take counts them; and what its Admit may take
// ahead.
func (a *Admitter) takeCorrection(key string, tpm int64) (d, ahead int64) {
	if tpm <= 0 {
		return 0, 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	ahead = a.need[key]
	d, ok := a.toks[key]
	if !ok {
		return 0, ahead
	}
	delete(a.toks, key)
	delete(a.tpm, key)
	return min(d, tpm), ahead
}

// failed notes a failed call that carried rel releases of key: Redis may
// or may not have them, so only an absolute write may fix its count. A
// token correction it carried is not sent again (a refund lost comes back
// with the window, within a minute).
func (a *Admitter) failed(key string, rel int64, op string, err error) {
	s := a.s
	if rel > 0 {
		s.mu.Lock()
		s.stale[key] = struct{}{}
		s.mu.Unlock()
	}
	s.fail.fail(op, err)
}

// Run keeps the slots' lease (Slots.Run's heartbeat) and writes what Done
// counted every Flush, until ctx ends.
func (a *Admitter) Run(ctx context.Context) error {
	hb := time.NewTicker(a.s.lease / 3)
	defer hb.Stop()
	fl := time.NewTicker(a.flush)
	defer fl.Stop()
	a.s.heartbeat(ctx)
	for {
		select {
		case <-ctx.Done():
			a.flushTokens(context.Background())
			a.s.stop() // flushes the releases
			return nil
		case <-hb.C:
			a.s.heartbeat(ctx)
		case <-fl.C:
			a.flushTokens(ctx) // first: a slot seen back elsewhere comes with its refund
			a.s.flush(ctx)
		}
	}
}

// flushTokens writes the token corrections no call has carried, in one
// pipeline, exclusive of the calls that carry them.
func (a *Admitter) flushTokens(ctx context.Context) {
	a.mu.Lock()
	idle := len(a.toks) == 0
	a.mu.Unlock()
	if idle {
		return
	}
	a.s.beat.Lock()
	defer a.s.beat.Unlock()
	a.mu.Lock()
	toks, tpm := a.toks, a.tpm
	a.toks, a.tpm = make(map[string]int64), make(map[string]int64)
	a.mu.Unlock()
	pctx, cancel := context.WithTimeout(ctx, a.s.o.Timeout)
	defer cancel()
	at, end := instants(time.Now())
	p := a.s.c.Pipeline()
	for k, d := range toks {
		limit := tpm[k]
		_ = takeScript.Eval(pctx, p, a.tok.keys(k), at, end, min(d, limit), limit, windowMicros)
	}
	if _, err := p.Exec(pctx); err != nil && ctx.Err() == nil {
		a.tok.fail.fail("correct", err) // a correction lost: the window forgets it within a minute
	}
}
