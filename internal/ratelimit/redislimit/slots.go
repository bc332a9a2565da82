package redislimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/modelgate/modelgate/internal/ratelimit"
)

// DefaultLease is how long a replica's slots outlive its last heartbeat.
const DefaultLease = 10 * time.Second

// SlotOptions tune Slots; the zero value is usable.
type SlotOptions struct {
	Options
	// Instance names this replica's slots ("": a random id).
	Instance string
	// Lease is how long the heartbeat lives (0: DefaultLease); Run renews
	// it every Lease/3. A replica that dies frees its slots within Lease.
	Lease time.Duration
}

// Slots is a ratelimit.Concurrency kept in Redis whose slots are leased:
// each key's hash counts the slots of each instance, and an Acquire
// counts only the instances whose heartbeat key still lives (dropping the
// others' entries), so a replica that dies without releasing frees its
// slots within one Lease. The owner must run Run for as long as it holds
// slots.
type Slots struct {
	c        redis.UniversalClient
	o        Options
	lease    time.Duration
	instance string
	hbPrefix string
	fail     *failures

	// beat is held shared by Acquire and Release and exclusively by a
	// heartbeat, which so sees held equal to what Redis should hold.
	beat sync.RWMutex
	mu   sync.Mutex
	held map[string]int64 // this instance's slots in Redis, per key
	open map[string]int64 // slots allowed while Redis failed (nothing to release there)
	// pending counts releases not yet written to Redis (Admitter.Done):
	// the key's next Admit carries them, or the next flush writes held
	// over Redis's count.
	pending map[string]int64
	// stale are keys whose count in Redis may be wrong (a call carrying
	// releases failed): only a flush's absolute write may fix them.
	stale map[string]struct{}
}

var _ ratelimit.Concurrency = (*Slots)(nil)

// NewSlots returns Slots on c; call Run to keep its lease.
func NewSlots(c redis.UniversalClient, o SlotOptions) *Slots {
	opts := o.Options.withDefaults()
	if o.Instance == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.Instance = hex.EncodeToString(b[:])
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	return &Slots{c: c, o: opts, lease: o.Lease, instance: o.Instance, hbPrefix: opts.Prefix + "conc:hb:",
		fail: newFailures(opts, "conc"), held: make(map[string]int64), open: make(map[string]int64),
		pending: make(map[string]int64), stale: make(map[string]struct{})}
}

// Failures is how many calls Redis failed so far (each Acquire among them
// was allowed).
func (s *Slots) Failures() int64 { return s.fail.count() }

// Instance is the id this replica's slots are held under.
func (s *Slots) Instance() string { return s.instance }

// Key is the Redis hash counting key's slots per instance.
func (s *Slots) Key(key string) string { return s.o.Prefix + "conc:{" + key + "}" }

// acquireScript: KEYS: the key's hash. ARGV: the instance, the limit, the
// lease (ms), the heartbeat keys' prefix, the hash's TTL (ms). It renews
// the instance's heartbeat, drops the entries of instances whose
// heartbeat expired, and takes a slot if fewer than limit remain held.
var acquireScript = redis.NewScript(`
local h, me, limit, hbp = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[4]
redis.call('SET', hbp .. me, '1', 'PX', ARGV[3])
local all = redis.call('HGETALL', h)
local held = 0
for i = 1, #all, 2 do
  local inst = all[i]
  if inst == me or redis.call('EXISTS', hbp .. inst) == 1 then
    held = held + tonumber(all[i + 1])
  else
    redis.call('HDEL', h, inst)
  end
end
if held >= limit then return 0 end
redis.call('HINCRBY', h, me, 1)
redis.call('PEXPIRE', h, ARGV[5])
return 1
`)

// releaseScript: KEYS: the key's hash. ARGV: the instance.
var releaseScript = redis.NewScript(`
local n = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if n <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
return n
`)

// hashTTL is how long a key's hash outlives its last Acquire or heartbeat.
func (s *Slots) hashTTL() time.Duration { return 3 * s.lease }

// Acquire implements ratelimit.Concurrency: one script call. When Redis
// fails the slot is allowed (see the package doc).
func (s *Slots) Acquire(key string, limit int64) bool {
	s.beat.RLock()
	defer s.beat.RUnlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Timeout)
	defer cancel()
	ok, err := acquireScript.Run(ctx, s.c, []string{s.Key(key)}, s.instance, limit, s.lease.Milliseconds(),
		s.hbPrefix, s.hashTTL().Milliseconds()).Int64()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil:
		s.fail.fail("acquire", err)
		s.open[key]++
		return true
	case ok == 1:
		s.held[key]++
		return true
	}
	return false
}

// Release implements ratelimit.Concurrency: one script call, none for a
// slot allowed while Redis failed.
func (s *Slots) Release(key string) {
	s.beat.RLock()
	defer s.beat.RUnlock()
	s.mu.Lock()
	if s.open[key] > 0 {
		dec(s.open, key)
		s.mu.Unlock()
		return
	}
	if s.held[key] == 0 {
		s.mu.Unlock()
		return
	}
	dec(s.held, key)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Timeout)
	defer cancel()
	if err := releaseScript.Run(ctx, s.c, []string{s.Key(key)}, s.instance).Err(); err != nil {
		// The next heartbeat writes the count held here over Redis's.
		s.fail.fail("release", err)
	}
}

func dec(m map[string]int64, key string) {
	if m[key] > 1 {
		m[key]--
	} else {
		delete(m, key)
	}
}

// Run keeps this instance's lease until ctx ends: every Lease/3 it renews
// the heartbeat, and writes the slots it holds over their Redis entries
// (restoring them after a Redis restart or a lapsed lease) and renews
// their hashes' TTL. On return, the heartbeat is deleted if no slot is
// held, so the others need not wait for it to expire.
func (s *Slots) Run(ctx context.Context) error {
	t := time.NewTicker(s.lease / 3)
	defer t.Stop()
	s.heartbeat(ctx)
	for {
		select {
		case <-ctx.Done():
			s.stop()
			return nil
		case <-t.C:
			s.heartbeat(ctx)
		}
	}
}

// heartbeat is one renewal, in one pipeline: the heartbeat key, and every
// count this instance holds (and those pending or stale) written over
// Redis's.
func (s *Slots) heartbeat(ctx context.Context) {
	s.write(ctx, true)
}

// flush writes the counts of the keys with releases pending or a stale
// count, if any, over Redis's.
func (s *Slots) flush(ctx context.Context) {
	s.mu.Lock()
	idle := len(s.pending) == 0 && len(s.stale) == 0
	s.mu.Unlock()
	if !idle {
		s.write(ctx, false)
	}
}

// write is heartbeat (beat) or flush, exclusive of every call that
// sends this instance's counts, so that what it writes is what this
// instance holds; Done may run meanwhile (it only counts here, and
// what it counts waits for the next write).
func (s *Slots) write(ctx context.Context, beat bool) {
	s.beat.Lock()
	defer s.beat.Unlock()
	pctx, cancel := context.WithTimeout(ctx, s.o.Timeout) // Acquire and Release wait for it
	defer cancel()
	p := s.c.Pipeline()
	s.mu.Lock()
	if beat {
		p.Set(pctx, s.hbPrefix+s.instance, "1", s.lease)
		for k, n := range s.held {
			p.HSet(pctx, s.Key(k), s.instance, n)
			p.PExpire(pctx, s.Key(k), s.hashTTL())
		}
	}
	for k := range s.pending {
		s.stale[k] = struct{}{}
	}
	clear(s.pending)
	written := make([]string, 0, len(s.stale))
	for k := range s.stale {
		if n := s.held[k]; n > 0 {
			if !beat {
				p.HSet(pctx, s.Key(k), s.instance, n)
			}
		} else {
			p.HDel(pctx, s.Key(k), s.instance)
		}
		written = append(written, k)
	}
	clear(s.stale)
	s.mu.Unlock()
	if p.Len() == 0 {
		return
	}
	if _, err := p.Exec(pctx); err != nil {
		s.mu.Lock()
		for _, k := range written {
			s.stale[k] = struct{}{} // for the next write
		}
		s.mu.Unlock()
		if ctx.Err() == nil {
			s.fail.fail("heartbeat", err)
		}
	}
}

// stop deletes the heartbeat when no slot is held.
func (s *Slots) stop() {
	s.flush(context.Background())
	s.mu.Lock()
	idle := len(s.held) == 0
	s.mu.Unlock()
	if !idle {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Timeout)
	defer cancel()
	if err := s.c.Del(ctx, s.hbPrefix+s.instance).Err(); err != nil {
		s.fail.fail("stop", err)
	}
}
