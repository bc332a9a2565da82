package redislimit_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/modelgate/modelgate/internal/ratelimit"
	"github.com/modelgate/modelgate/internal/ratelimit/ratelimittest"
	"github.com/modelgate/modelgate/internal/ratelimit/redislimit"
)

// testRedis connects to MODELGATE_TEST_REDIS (skipping without it) and
// returns the client and a random key prefix of the test's own, so that
// tests share the database without seeing each other's keys.
func testRedis(t testing.TB) (*redis.Client, string) {
	t.Helper()
	c, err := redislimit.Open(context.Background(), redisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var b [6]byte
	_, _ = rand.Read(b[:])
	return c, "mgtest:" + hex.EncodeToString(b[:]) + ":"
}

// redisURL is MODELGATE_TEST_REDIS; the test skips without it.
func redisURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("MODELGATE_TEST_REDIS")
	if url == "" {
		t.Skip("MODELGATE_TEST_REDIS not set (e.g. redis://127.0.0.1:6379/15): skipping the Redis tests")
	}
	return url
}

func TestLimiterConformance(t *testing.T) {
	redisURL(t)
	ratelimittest.Run(t, func(t *testing.T) ratelimit.Limiter {
		c, prefix := testRedis(t)
		return redislimit.NewLimiter(c, "req", redislimit.Options{Prefix: prefix})
	})
}

func TestSlotsConformance(t *testing.T) {
	redisURL(t)
	ratelimittest.RunConcurrency(t, func(t *testing.T) ratelimit.Concurrency {
		c, prefix := testRedis(t)
		return redislimit.NewSlots(c, redislimit.SlotOptions{Options: redislimit.Options{Prefix: prefix}})
	})
}

func TestAdmitterConformance(t *testing.T) {
	redisURL(t)
	ratelimittest.RunAdmitter(t, func(t *testing.T) ratelimit.Admitter {
		return newAdmitter(t, "")
	})
}

// newAdmitter is an Admitter on a fresh prefix (or prefix, to share one
// with another replica) whose Run the test's end stops.
func newAdmitter(t testing.TB, prefix string) *redislimit.Admitter {
	c, fresh := testRedis(t)
	if prefix == "" {
		prefix = fresh
	}
	o := redislimit.Options{Prefix: prefix}
	a := redislimit.NewAdmitter(redislimit.NewLimiter(c, "req", o), redislimit.NewLimiter(c, "tok", o),
		redislimit.NewSlots(c, redislimit.SlotOptions{Options: o}), 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return a
}

// TestAdmitterAfterScriptFlush: a Redis that lost its script cache (a
// restart, SCRIPT FLUSH) answers the pipelined calls NOSCRIPT; each is
// sent again whole and answered, nothing fails open.
func TestAdmitterAfterScriptFlush(t *testing.T) {
	redisURL(t)
	a := newAdmitter(t, "")
	c, _ := testRedis(t)
	l := ratelimit.Limits{RPM: 2, TPM: 100, Concurrency: 1}
	for i, want := range []ratelimit.Refusal{ratelimit.NotRefused, ratelimit.RefusedConcurrency} {
		if err := c.ScriptFlush(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		if got := a.Admit("k", l, time.Now()); got.Refused != want {
			t.Fatalf("admission %d after SCRIPT FLUSH: %+v, want refused %d", i, got, want)
		}
	}
	if n := a.Failures(); n != 0 {
		t.Errorf("%d calls failed open", n)
	}
}

// TestAdmitterFlushesToOtherReplicas: what Done counted on one replica
// (a slot, a refund) reaches another within the flush interval, without
// the first replica calling again.
func TestAdmitterFlushesToOtherReplicas(t *testing.T) {
	redisURL(t)
	_, prefix := testRedis(t)
	a, b := newAdmitter(t, prefix), newAdmitter(t, prefix)
	l := ratelimit.Limits{TPM: 100, Concurrency: 1}
	now := time.Now()
	if ad := a.Admit("k", l, now); !ad.Slot || !a.TakeTokens("k", 90, ad.Ahead, 100, now).Allowed {
		t.Fatal("replica a: first request refused")
	}
	if got := b.Admit("k", l, now); got.Refused != ratelimit.RefusedConcurrency {
		t.Fatalf("replica b while a holds the slot: %+v, want refused on concurrency", got)
	}
	a.Done("k", true, -80, 100, now)
	deadline := time.Now().Add(5 * time.Second) // a hang guard: the flush runs every 20 ms
	for {
		got := b.Admit("k", l, time.Now())
		if got.Slot {
			if got.Tokens.Remaining != 90 {
				t.Fatalf("replica b: %d tokens remaining, want 90 (a's refund flushed with its slot)", got.Tokens.Remaining)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("replica a's slot never reached replica b")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTwoReplicasShareALimit: two limiters on one Redis (two replicas),
// each with its own client and goroutines taking at once, never allow
// more than the limit together; requests and tokens are counted apart.
func TestTwoReplicasShareALimit(t *testing.T) {
	c1, prefix := testRedis(t)
	c2, _ := testRedis(t)
	a := redislimit.NewLimiter(c1, "req", redislimit.Options{Prefix: prefix})
	b := redislimit.NewLimiter(c2, "req", redislimit.Options{Prefix: prefix})
	now := time.Now()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for i := range 8 {
		l := a
		if i%2 == 1 {
			l = b
		}
		wg.Go(func() {
			for range 25 {
				if l.Take("k", 1, 60, now).Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 60 {
		t.Fatalf("%d takes allowed across two replicas, want 60", n)
	}
	tok := redislimit.NewLimiter(c1, "tok", redislimit.Options{Prefix: prefix})
	if r := tok.Take("k", 1, 60, now); !r.Allowed || r.Remaining != 59 {
		t.Fatalf("tokens share the requests' counter: %+v", r)
	}
	// Every key written expires (the list of older buckets exists once
	// a second bucket has begun).
	for _, k := range []string{a.Key("k"), a.Key("k") + ":head"} {
		if c1.Exists(context.Background(), k).Val() == 0 && k == a.Key("k") {
			continue
		}
		if ttl := c1.PTTL(context.Background(), k).Val(); ttl <= 0 || ttl > ratelimit.Window+2*time.Second {
			t.Errorf("%s: TTL %v", k, ttl)
		}
	}
}

// TestWindowKeys: a window is a head (total, oldest end, newest bucket,
// how many older ones) and a list of the older buckets; takes into the
// newest bucket rewrite only the head, a new bucket moves the newest onto
// the list, and a list whose head is gone (evicted) is dropped rather than
// trusted.
func TestWindowKeys(t *testing.T) {
	c, prefix := testRedis(t)
	ctx := context.Background()
	l := redislimit.NewLimiter(c, "req", redislimit.Options{Prefix: prefix})
	now := time.UnixMicro(1_796_371_200_123_456)        // 2026-12-04, between two buckets
	end, next := "1796371200200000", "1796371200300000" // rounded up to the next 100 ms, to the µs
	for i := range 3 {
		if r := l.Take("k", 2, 10, now); !r.Allowed || r.Remaining != int64(8-2*i) {
			t.Fatalf("take %d: %+v", i, r)
		}
	}
	list, head := l.Key("k"), l.Key("k")+":head"
	check := func(wantList []string, wantHead string) {
		t.Helper()
		if got := c.LRange(ctx, list, 0, -1).Val(); strings.Join(got, ",") != strings.Join(wantList, ",") {
			t.Errorf("older buckets %q, want %q", got, wantList)
		}
		if got := c.Get(ctx, head).Val(); got != wantHead {
			t.Errorf("head %q, want %q", got, wantHead)
		}
	}
	check(nil, "6 "+end+" "+end+" 6 0")
	if r := l.Take("k", 1, 10, now.Add(100*time.Millisecond)); !r.Allowed || r.Remaining != 3 {
		t.Fatalf("take in the next bucket: %+v", r)
	}
	check([]string{end + ":6"}, "7 "+end+" "+next+" 1 1")
	if r := l.Take("k", -3, 10, now.Add(100*time.Millisecond)); !r.Allowed || r.Remaining != 6 {
		t.Fatalf("refund across two buckets: %+v", r)
	}
	check(nil, "4 "+end+" "+end+" 4 0")
	c.Del(ctx, head)
	c.RPush(ctx, list, "1:1") // a stray older bucket
	if r := l.Take("k", 1, 10, now); !r.Allowed || r.Remaining != 9 {
		t.Fatalf("after the head was lost: %+v, want the window started afresh", r)
	}
	check(nil, "1 "+end+" "+end+" 1 0")
}

// TestDeadReplicaSlotsFreed: a replica that dies holding slots (it stops
// renewing its heartbeat) frees them within its lease; a live one keeps
// them past it.
func TestDeadReplicaSlotsFreed(t *testing.T) {
	c, prefix := testRedis(t)
	const lease = 300 * time.Millisecond
	o := redislimit.Options{Prefix: prefix}
	alive := redislimit.NewSlots(c, redislimit.SlotOptions{Options: o, Instance: "alive", Lease: lease})
	dead := redislimit.NewSlots(c, redislimit.SlotOptions{Options: o, Instance: "dead", Lease: lease})
	other := redislimit.NewSlots(c, redislimit.SlotOptions{Options: o, Instance: "other", Lease: lease})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- alive.Run(ctx) }()
	defer func() { cancel(); <-done }()

	if !alive.Acquire("live", 1) || !dead.Acquire("dead", 2) || !dead.Acquire("dead", 2) {
		t.Fatal("first acquires refused")
	}
	if other.Acquire("live", 1) || other.Acquire("dead", 2) {
		t.Fatal("a slot beyond the limit across replicas")
	}
	time.Sleep(lease + 200*time.Millisecond)
	if other.Acquire("live", 1) {
		t.Fatal("a live replica's slot was taken over after its lease")
	}
	if !other.Acquire("dead", 2) || !other.Acquire("dead", 2) {
		t.Fatal("a dead replica's slots were not freed after its lease")
	}
	if other.Acquire("dead", 2) {
		t.Fatal("more slots than the limit after the takeover")
	}
	// The dead replica's late release must not free the others' slots.
	dead.Release("dead")
	if other.Acquire("dead", 2) {
		t.Fatal("a dead replica's release freed another's slot")
	}
	alive.Release("live")
	if !other.Acquire("live", 1) {
		t.Fatal("no slot after the live replica released it")
	}
}

// TestHeartbeatRestoresSlots: slots lost from Redis (a flush, a restart)
// are written back by the next heartbeat.
func TestHeartbeatRestoresSlots(t *testing.T) {
	c, prefix := testRedis(t)
	o := redislimit.Options{Prefix: prefix}
	s := redislimit.NewSlots(c, redislimit.SlotOptions{Options: o, Instance: "a", Lease: 150 * time.Millisecond})
	other := redislimit.NewSlots(c, redislimit.SlotOptions{Options: o, Instance: "b", Lease: 150 * time.Millisecond})
	if !s.Acquire("k", 1) {
		t.Fatal("acquire refused")
	}
	c.Del(context.Background(), s.Key("k"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	time.Sleep(120 * time.Millisecond)
	if other.Acquire("k", 1) {
		t.Fatal("a lost slot was not restored by the heartbeat")
	}
	s.Release("k")
	cancel()
	<-done
	if n := c.Exists(context.Background(), prefix+"conc:hb:a").Val(); n != 0 {
		t.Error("the heartbeat outlived a stop with nothing held")
	}
	if !other.Acquire("k", 1) {
		t.Fatal("no slot after the release")
	}
}

// TestFailOpen: with Redis unreachable, takes and acquires are allowed,
// counted, and logged as a WARN at most once per WarnEvery.
func TestFailOpen(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: 100 * time.Millisecond})
	defer c.Close()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	o := redislimit.Options{Log: log, Timeout: 200 * time.Millisecond}
	l := redislimit.NewLimiter(c, "req", o)
	for range 3 {
		if r := l.Take("k", 1, 1, time.Now()); !r.Allowed || r.Limit != 1 {
			t.Fatalf("take with Redis down: %+v", r)
		}
	}
	if l.Failures() != 3 {
		t.Errorf("%d failures counted, want 3", l.Failures())
	}
	if n := strings.Count(buf.String(), "level=WARN"); n != 1 || !strings.Contains(buf.String(), "fail-open") {
		t.Errorf("%d WARNs, want 1:\n%s", n, buf.String())
	}
	s := redislimit.NewSlots(c, redislimit.SlotOptions{Options: o})
	if !s.Acquire("k", 1) || !s.Acquire("k", 1) {
		t.Fatal("acquire with Redis down refused")
	}
	s.Release("k")
	s.Release("k")
	if s.Failures() != 2 {
		t.Errorf("%d slot failures, want 2 (a fail-open slot's release needs no Redis)", s.Failures())
	}
	if _, err := redislimit.Open(context.Background(), "redis://127.0.0.1:1/0"); err == nil ||
		!strings.Contains(err.Error(), "does not answer") {
		t.Errorf("Open of an unreachable Redis: %v", err)
	}
	if _, err := redislimit.Open(context.Background(), "redis://:secret@127.0.0.1:1/x"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("Open of a bad URL: %v", err)
	}
}
