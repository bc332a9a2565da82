package redislimit

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/modelgate/modelgate/internal/ratelimit"
)

// Limiter is a ratelimit.Limiter kept in Redis with exactly the in-memory
// limiter's semantics (ratelimit.Memory): a sliding Window counted in
// buckets of ratelimit.Resolution whose instants are rounded up; a unit
// comes back Window after its bucket; refunds take from the newest
// bucket. Times travel as Unix microseconds, exact in Lua's doubles.
type Limiter struct {
	c    redis.UniversalClient
	o    Options
	base string // prefix + "rl:" + name + ":"
	fail *failures
}

var _ ratelimit.Limiter = (*Limiter)(nil)

// NewLimiter returns a Limiter named name (requests and tokens are counted
// apart: "req", "tok") on c.
func NewLimiter(c redis.UniversalClient, name string, o Options) *Limiter {
	o = o.withDefaults()
	return &Limiter{c: c, o: o, base: o.Prefix + "rl:" + name + ":", fail: newFailures(o, "rl:"+name)}
}

// Failures is how many Takes Redis failed (and so were allowed) so far.
func (l *Limiter) Failures() int64 { return l.fail.count() }

// Key is the Redis list holding key's older buckets; its head (windowLua),
// with the total and the newest bucket, is Key(key)+":head".
func (l *Limiter) Key(key string) string { return l.base + "{" + key + "}" }

// keys are the window's list and head, as the scripts take them.
func (l *Limiter) keys(key string) []string {
	k := l.Key(key)
	return []string{k, k + ":head"}
}

// takeScript is one Take. KEYS: the window's list and head. ARGV: now
// (µs), the new bucket's end (µs), cost, limit, window (µs). It returns
// allowed (0/1), remaining, reset (µs) and retry-after (µs).
var takeScript = redis.NewScript(windowLua + `
local w = open(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[5]))
local a, r, s, t = w:take(tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[2]))
w:save()
return {a, r, s, t}
`)

// instants are a Take's times as the scripts want them: now and the new
// bucket's end (rounded up to the resolution, as Memory does), in µs.
func instants(now time.Time) (at, end int64) {
	ns := now.UnixNano()
	res := int64(ratelimit.Resolution)
	return ns / 1000, (ns + res - 1) / res * res / 1000
}

// windowMicros is ratelimit.Window in µs.
const windowMicros = int64(ratelimit.Window / time.Microsecond)

// result is a Result from take's four numbers, starting at v[0].
func result(v []int64, limit int64) ratelimit.Result {
	r := ratelimit.Result{Allowed: v[0] == 1, Limit: limit, Remaining: v[1], Reset: time.Duration(v[2]) * time.Microsecond}
	if !r.Allowed {
		r.RetryAfter = time.Duration(v[3]) * time.Microsecond
	}
	return r
}

// failedOpen is what a Take answers when Redis fails: allowed.
func failedOpen(cost, limit int64) ratelimit.Result {
	return ratelimit.Result{Allowed: true, Limit: limit, Remaining: max(limit-max(cost, 0), 0)}
}

// Take implements ratelimit.Limiter: one script call. When Redis fails
// the cost is allowed (see the package doc).
func (l *Limiter) Take(key string, cost, limit int64, now time.Time) ratelimit.Result {
	if limit <= 0 {
		return ratelimit.Result{Allowed: true}
	}
	cost = min(cost, limit)
	at, end := instants(now)
	ctx, cancel := context.WithTimeout(context.Background(), l.o.Timeout)
	defer cancel()
	v, err := takeScript.Run(ctx, l.c, l.keys(key),
		at, end, cost, limit, windowMicros).Int64Slice()
	if err == nil && len(v) != 4 {
		err = errShape
	}
	if err != nil {
		l.fail.fail("take", err)
		return failedOpen(cost, limit)
	}
	return result(v, limit)
}
