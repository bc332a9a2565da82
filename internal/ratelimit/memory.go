package ratelimit

import (
	"sync"
	"time"
)

// Memory is an in-memory Limiter counting a sliding window: each key keeps
// what it took in the last Window, in buckets of Resolution (at most
// Window/Resolution + 1 of them), and a Take is allowed when what the window
// holds plus its cost is at most the limit. So a key may spend its whole
// limit at once (the burst equals the limit), and never more than the
// limit in any Window: a unit comes back exactly Window after it was
// taken. A bucket's time is rounded up, so a unit is held a little longer
// than Window (at most Resolution), never shorter. A key whose window is
// empty is forgotten, so memory grows with the keys used in the last
// Window, each holding at most 601 buckets.
type Memory struct {
	mu        sync.Mutex
	keys      map[string]*window
	nextSweep int
	lastSweep time.Time
}

var _ Limiter = (*Memory)(nil)

// Resolution is the granularity of the windows' buckets.
const Resolution = Window / 600

// window is one key's takes in the last Window, oldest first.
type window struct {
	b   []bucket
	sum int64
}

// bucket holds the units taken in one Resolution, counted until end +
// Window (end is the bucket's instant rounded up, Unix nanoseconds).
type bucket struct {
	end int64
	n   int64
}

// minSweep is the size under which the map is never swept.
const minSweep = 1024

// NewMemory returns an empty in-memory limiter.
func NewMemory() *Memory {
	return &Memory{keys: make(map[string]*window), nextSweep: minSweep}
}

// Take implements Limiter.
func (m *Memory) Take(key string, cost, limit int64, now time.Time) Result {
	if limit <= 0 {
		return Result{Allowed: true}
	}
	cost = min(cost, limit)
	at := now.UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.keys[key]
	if w == nil {
		w = &window{}
	}
	w.expire(at)
	r := Result{Allowed: true, Limit: limit}
	switch {
	case cost < 0:
		w.refund(-cost)
	case cost == 0:
	case w.sum+cost <= limit:
		end := (at + int64(Resolution) - 1) / int64(Resolution) * int64(Resolution)
		if n := len(w.b); n > 0 && w.b[n-1].end == end {
			w.b[n-1].n += cost
		} else {
			w.b = append(w.b, bucket{end: end, n: cost})
		}
		w.sum += cost
	default:
		r.Allowed = false
		r.RetryAfter = w.freed(w.sum+cost-limit, at)
	}
	r.Remaining = max(limit-w.sum, 0)
	if n := len(w.b); n > 0 {
		r.Reset = time.Duration(w.b[n-1].end + int64(Window) - at)
	}
	if w.sum == 0 {
		delete(m.keys, key)
		return r
	}
	if m.keys[key] == nil {
		m.keys[key] = w
		if n := len(m.keys); n >= m.nextSweep || n > minSweep && now.Sub(m.lastSweep) > Window {
			m.sweep(at, now)
		}
	}
	return r
}

// expire drops the buckets no longer counted at at. It reslices rather
// than moves the rest; append moves them to the front of a new array once
// the old one is full.
func (w *window) expire(at int64) {
	i := 0
	for i < len(w.b) && w.b[i].end+int64(Window) <= at {
		w.sum -= w.b[i].n
		i++
	}
	w.b = w.b[i:]
}

// refund gives back n units, newest first (so they come back no sooner
// than the units they stand for would have).
func (w *window) refund(n int64) {
	for n > 0 && len(w.b) > 0 {
		last := &w.b[len(w.b)-1]
		d := min(n, last.n)
		last.n -= d
		w.sum -= d
		n -= d
		if last.n == 0 {
			w.b = w.b[:len(w.b)-1]
		}
	}
}

// freed is how long after at the oldest buckets holding need units leave
// the window.
func (w *window) freed(need, at int64) time.Duration {
	for _, b := range w.b {
		need -= b.n
		if need <= 0 {
			return time.Duration(b.end + int64(Window) - at)
		}
	}
	return Window // cannot happen: cost is at most the limit
}

// sweep forgets the keys whose window is empty at at; the next sweep comes
// when the map has doubled, or a Window later.
func (m *Memory) sweep(at int64, now time.Time) {
	for k, w := range m.keys {
		if w.expire(at); w.sum == 0 {
			delete(m.keys, k)
		}
	}
	m.nextSweep = max(2*len(m.keys), minSweep)
	m.lastSweep = now
}

// Len is the number of keys held (for tests of the memory bound).
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.keys)
}

// Slots is an in-memory Concurrency: a count per key of running requests;
// a key with none holds no memory.
type Slots struct {
	mu      sync.Mutex
	running map[string]int64
}

var _ Concurrency = (*Slots)(nil)

// NewSlots returns an empty in-memory Concurrency.
func NewSlots() *Slots {
	return &Slots{running: make(map[string]int64)}
}

// Acquire implements Concurrency.
func (s *Slots) Acquire(key string, limit int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.running[key]
	if n >= limit {
		return false
	}
	s.running[key] = n + 1
	return true
}

// Release implements Concurrency.
func (s *Slots) Release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.running[key]; n > 1 {
		s.running[key] = n - 1
	} else {
		delete(s.running, key)
	}
}
