package redislimit

// windowLua defines a sliding window kept in two keys, for the scripts
// that take from one: a head "sum first lastEnd lastUnits older" (µs since
// 1970) holding the window's total, its oldest bucket's end and its newest
// bucket, and a list of the older buckets "end:units", oldest first
// (older counts them). A bucket's units come back window after its end.
// Each redis.call costs Redis about a microsecond (more than the Lua
// around it), so a window is read with one GET, changed in Lua, and
// written once (save): a take folded into the newest bucket is GET and
// SET. Only a new bucket (every 100 ms at most) pushes the newest onto
// the list, expiry pops it, and a refused take scans it for its
// retry-after.
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
  local w = setmetatable({list = list, head = head, at = at, window = window, sum = 0, older = 0}, W)
  local h = redis.call('GET', head)
  if h then
    local s, f, le, ln, o = string.match(h, '^(%d+) (%d+) (%d+) (%d+) (%d+)$')
    if s then
      w.sum, w.first, w.le, w.ln, w.older, w.had = tonumber(s), tonumber(f), tonumber(le), tonumber(ln), tonumber(o), true
    end
  end
  if not w.had then
    redis.call('DEL', list) -- older buckets without their head (evicted) are not trusted
  end
  while w.first and w.first + window <= at do
    w.changed = true
    if w.older == 0 then -- the newest bucket left too: the window is empty
      w.sum, w.first, w.le, w.ln = 0, nil, nil, nil
      break
    end
    local _, n = parse(redis.call('LPOP', list))
    w.sum, w.older = w.sum - n, w.older - 1
    if w.older > 0 then w.first = parse(redis.call('LINDEX', list, 0)) else w.first = w.le end
  end
  return w
end
function W:take(cost, limit, ends)
  local allowed, retry = 1, 0
  if cost < 0 then
    local need = -cost
    while need > 0 and self.le do
      local d = math.min(need, self.ln)
      self.ln, self.sum, need, self.changed = self.ln - d, self.sum - d, need - d, true
      if self.ln > 0 then break end
      if self.older > 0 then -- the newest is empty: the last older one is the newest now
        self.le, self.ln = parse(redis.call('RPOP', self.list))
        self.older = self.older - 1
      else
        self.le, self.ln, self.first = nil, nil, nil
      end
    end
  elseif cost > 0 then
    if self.sum + cost <= limit then
      if self.le and self.le >= ends then
        self.ln = self.ln + cost
      else
        if self.le then
          redis.call('RPUSH', self.list, fmt(self.le) .. ':' .. fmt(self.ln))
          self.older = self.older + 1
        end
        self.le, self.ln, self.pushed = ends, cost, true
        self.first = self.first or ends
      end
      self.sum, self.changed = self.sum + cost, true
    else
      allowed, retry = 0, self.window
      local need, i, found = self.sum + cost - limit, 0, false
      while not found and i < self.older do
        local bs = redis.call('LRANGE', self.list, i, i + 63)
        if #bs == 0 then break end
        for _, b in ipairs(bs) do
          local e, n = parse(b)
          need = need - n
          if need <= 0 then retry, found = e + self.window - self.at, true; break end
        end
        i = i + 64
      end
      if not found and self.le then retry = self.le + self.window - self.at end
    end
  end
  local reset = 0
  if self.le and self.sum > 0 then reset = self.le + self.window - self.at end
  return allowed, math.max(limit - self.sum, 0), reset, retry
end
function W:save()
  if not self.le or self.sum <= 0 then
    if self.had or self.pushed then redis.call('DEL', self.list, self.head) end
    return
  end
  if not self.changed then return end
  local h = fmt(self.sum) .. ' ' .. fmt(self.first) .. ' ' .. fmt(self.le) .. ' ' .. fmt(self.ln) .. ' ' .. fmt(self.older)
  if self.pushed or not self.had then
    -- both keys live until the newest bucket leaves, and a second
    local px = fmt(math.ceil((self.le + self.window - self.at) / 1000) + 1000)
    redis.call('SET', self.head, h, 'PX', px)
    if self.older > 0 then redis.call('PEXPIRE', self.list, px) end
  else
    redis.call('SET', self.head, h, 'KEEPTTL')
  end
end
`
