package redislimit

// windowLua defines a sliding window kept in two keys, for the scripts
// that take from one: a list of buckets "end:units" (µs since 1970, oldest
// first; a bucket's units come back window after its end) and a head key
// "sum first lastEnd lastUnits" holding the list's total, its oldest end
// and its newest bucket. Each redis.call costs Redis about a microsecond
// (more than the Lua around it), so a window is read with one GET, changed
// in Lua, and written once (save): a take folded into the newest bucket is
// GET, LSET and SET. Only expiry pops, a new bucket pushes, and a refused
// take scans the list for its retry-after.
//
//	local w = open(list, head, at, window)
//	local allowed, remaining, reset, retry = w:take(cost, limit, ends)
//	w:save()
//
// take is Limiter.Take's semantics: a negative cost gives units back from
// the newest buckets, always allowed; a positive one is taken whole into
// the bucket ending at ends (or the newest, when a replica whose clock
// runs ahead made it end later: held longer, never shorter) if it fits
// under limit, else nothing, with the time until it would fit.
const windowLua = `
local function fmt(n) return string.format('%d', n) end
local function parse(b)
  local i = string.find(b, ':', 1, true)
  return tonumber(string.sub(b, 1, i - 1)), tonumber(string.sub(b, i + 1))
end
local W = {}
W.__index = W
local function open(list, head, at, window)
  local w = setmetatable({list = list, head = head, at = at, window = window, sum = 0}, W)
  local h = redis.call('GET', head)
  if h then
    local s, f, le, ln = string.match(h, '^(%d+) (%d+) (%d+) (%d+)$')
    w.sum, w.first, w.le, w.ln, w.had = tonumber(s), tonumber(f), tonumber(le), tonumber(ln), true
  else
    redis.call('DEL', list) -- a list without its head (evicted) is not trusted
  end
  while w.first and w.first + window <= at do
    local b = redis.call('LPOP', list)
    if not b then w.first = nil; break end
    local _, n = parse(b)
    w.sum, w.changed = w.sum - n, true
    b = redis.call('LINDEX', list, 0)
    if b then w.first = parse(b) else w.first = nil end
  end
  if not w.first then w.sum, w.le, w.ln = 0, nil, nil end
  return w
end
function W:flushLast()
  if self.dirty then
    redis.call('LSET', self.list, -1, fmt(self.le) .. ':' .. fmt(self.ln))
    self.dirty = false
  end
end
function W:take(cost, limit, ends)
  local allowed, retry = 1, 0
  if cost < 0 then
    local need = -cost
    while need > 0 and self.le do
      local d = math.min(need, self.ln)
      self.ln, self.sum, need, self.changed = self.ln - d, self.sum - d, need - d, true
      if self.ln > 0 then self.dirty = true; break end
      self.dirty = false
      redis.call('RPOP', self.list)
      local b = redis.call('LINDEX', self.list, -1)
      if b then self.le, self.ln = parse(b) else self.le, self.ln, self.first = nil, nil, nil end
    end
  elseif cost > 0 then
    if self.sum + cost <= limit then
      if self.le and self.le >= ends then
        self.ln, self.dirty = self.ln + cost, true
      else
        self:flushLast()
        redis.call('RPUSH', self.list, fmt(ends) .. ':' .. fmt(cost))
        self.le, self.ln, self.pushed = ends, cost, true
        self.first = self.first or ends
      end
      self.sum, self.changed = self.sum + cost, true
    else
      allowed, retry = 0, self.window
      self:flushLast()
      local need, i, found = self.sum + cost - limit, 0, false
      while not found do
        local bs = redis.call('LRANGE', self.list, i, i + 63)
        if #bs == 0 then break end
        for _, b in ipairs(bs) do
          local e, n = parse(b)
          need = need - n
          if need <= 0 then retry, found = e + self.window - self.at, true; break end
        end
        i = i + 64
      end
    end
  end
  local reset = 0
  if self.le and self.sum > 0 then reset = self.le + self.window - self.at end
  return allowed, math.max(limit - self.sum, 0), reset, retry
end
function W:save()
  self:flushLast()
  if not self.le or self.sum <= 0 then
    if self.had or self.pushed then redis.call('DEL', self.list, self.head) end
    return
  end
  if not self.changed then return end
  local h = fmt(self.sum) .. ' ' .. fmt(self.first) .. ' ' .. fmt(self.le) .. ' ' .. fmt(self.ln)
  if self.pushed or not self.had then
    -- both keys live until the newest bucket leaves, and a second
    local px = fmt(math.ceil((self.le + self.window - self.at) / 1000) + 1000)
    redis.call('SET', self.head, h, 'PX', px)
    redis.call('PEXPIRE', self.list, px)
  else
    redis.call('SET', self.head, h, 'KEEPTTL')
  end
end
`
