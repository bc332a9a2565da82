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

// Key is the Redis key holding key's buckets (its sum is Key(key)+":sum").
func (l *Limiter) Key(key string) string { return l.base + "{" + key + "}" }

// takeLua defines take(list, sumk, at, ends, cost, limit, window), one
// Take on a bucket list ("end:units", oldest first) and its sum: at is now
// (µs), ends the new bucket's end (µs, rounded up to the resolution, as a
// string), window in µs. It returns allowed (0/1), remaining, reset (µs)
// and retry-after (µs). The scripts that take start with it.
const takeLua = `
local function parse(b)
  local i = string.find(b, ':', 1, true)
  return tonumber(string.sub(b, 1, i - 1)), tonumber(string.sub(b, i + 1))
end
-- Lua prints numbers with 14 digits; µs since 1970 have 16
local function fmt(n) return string.format('%d', n) end
local function take(list, sumk, at, ends, cost, limit, window)
  local raw = redis.call('GET', sumk)
  local sum = tonumber(raw or '0')
  local popped = false
  while true do
    local b = redis.call('LINDEX', list, 0)
    if not b then break end
    local e, n = parse(b)
    if e + window > at then break end
    redis.call('LPOP', list)
    sum, popped = sum - n, true
  end
  local last = redis.call('LINDEX', list, -1)
  local le, ln
  if last then le, ln = parse(last) end
  local allowed, retry, ttl = 1, 0, false
  if cost < 0 then
    local need = -cost
    while need > 0 and last do
      local d = math.min(need, ln)
      ln, sum, need, popped = ln - d, sum - d, need - d, true
      if ln > 0 then redis.call('LSET', list, -1, fmt(le) .. ':' .. fmt(ln)); break end
      redis.call('RPOP', list)
      last = redis.call('LINDEX', list, -1)
      if last then le, ln = parse(last) end
    end
  elseif cost > 0 then
    if sum + cost <= limit then
      -- a bucket from a replica whose clock runs ahead: fold into it (held longer, never shorter)
      if last and le >= tonumber(ends) then
        redis.call('LSET', list, -1, fmt(le) .. ':' .. fmt(ln + cost))
      else
        redis.call('RPUSH', list, ends .. ':' .. fmt(cost))
        le, last, ttl = tonumber(ends), true, true
      end
      sum, popped = sum + cost, true
    else
      allowed = 0
      retry = window
      local need, i, found = sum + cost - limit, 0, false
      while not found do
        local bs = redis.call('LRANGE', list, i, i + 63)
        if #bs == 0 then break end
        for _, b in ipairs(bs) do
          local e, n = parse(b)
          need = need - n
          if need <= 0 then retry, found = e + window - at, true; break end
        end
        i = i + 64
      end
    end
  end
  local reset = 0
  if not last or sum <= 0 then
    if raw or last then redis.call('DEL', list, sumk) end
    sum = 0
  else
    reset = le + window - at
    if ttl or not raw then
      -- a new bucket (or a sum that was lost): both keys live until it leaves, and a second
      local px = math.ceil(reset / 1000) + 1000
      redis.call('SET', sumk, fmt(sum), 'PX', fmt(px))
      redis.call('PEXPIRE', list, fmt(px))
    elseif popped then
      redis.call('SET', sumk, fmt(sum), 'KEEPTTL')
    end
  end
  return allowed, math.max(limit - sum, 0), reset, retry
end
`

// takeScript is one Take. KEYS: the bucket list and its sum. ARGV: now
// (µs), the new bucket's end (µs), cost, limit, window (µs). It returns
// take's four numbers.
var takeScript = redis.NewScript(takeLua + `
return {take(KEYS[1], KEYS[2], tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]))}
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
	v, err := takeScript.Run(ctx, l.c, []string{l.Key(key), l.Key(key) + ":sum"},
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
