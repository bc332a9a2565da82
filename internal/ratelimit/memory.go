package ratelimit

import (
	"sync"
	"time"
)

// Memory is an in-memory Limiter using the generic cell rate algorithm
// (GCRA): each key keeps one instant, the theoretical arrival time (tat),
// when its allowance will be whole again. A unit costs Window/limit; a Take
// is allowed when, after it, tat is at most Window ahead of now. So a key
// may spend its whole limit at once (the burst equals the limit), and the
// allowance then comes back continuously, one unit every Window/limit, as
// OpenAI's limits do. A key whose
// tat has passed holds nothing and is forgotten, so memory grows with the
// keys used in the last Window, not with every key ever seen.
type Memory struct {
	mu        sync.Mutex
	tat       map[string]time.Time
	nextSweep int
	lastSweep time.Time
}

var _ Limiter = (*Memory)(nil)

// minSweep is the size under which the map is never swept.
const minSweep = 1024

// NewMemory returns an empty in-memory limiter.
func NewMemory() *Memory {
	return &Memory{tat: make(map[string]time.Time), nextSweep: minSweep}
}

// Take implements Limiter.
func (m *Memory) Take(key string, cost, limit int64, now time.Time) Result {
	if limit <= 0 {
		return Result{Allowed: true}
	}
	cost = min(cost, limit)
	m.mu.Lock()
	defer m.mu.Unlock()
	tat, ok := m.tat[key]
	if !ok || tat.Before(now) {
		tat = now
	}
	next := tat.Add(span(cost, limit))
	if next.Before(now) {
		next = now
	}
	ahead := next.Sub(now)
	if ahead > Window {
		// Not allowed: the cost fits once tat is Window - span(cost) ahead.
		full := tat.Sub(now)
		return Result{Limit: limit, Remaining: remaining(full, limit), Reset: full, RetryAfter: ahead - Window}
	}
	if next.Equal(now) {
		delete(m.tat, key)
	} else {
		m.tat[key] = next
		if n := len(m.tat); n >= m.nextSweep || n > minSweep && now.Sub(m.lastSweep) > Window {
			m.sweep(now)
		}
	}
	return Result{Allowed: true, Limit: limit, Remaining: remaining(ahead, limit), Reset: ahead}
}

// sweep forgets the keys whose allowance is whole at now; the next sweep
// comes when the map has doubled, or a Window later.
func (m *Memory) sweep(now time.Time) {
	for k, t := range m.tat {
		if !t.After(now) {
			delete(m.tat, k)
		}
	}
	m.nextSweep = max(2*len(m.tat), minSweep)
	m.lastSweep = now
}

// Len is the number of keys held (for tests of the memory bound).
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tat)
}

// span is the time cost units of a limit per Window stand for (negative
// for a negative cost). Computed in floating point: cost * Window
// overflows int64 for large token counts.
func span(cost, limit int64) time.Duration {
	return time.Duration(float64(Window) * float64(cost) / float64(limit))
}

// remaining is how many whole units fit when tat is ahead of now.
func remaining(ahead time.Duration, limit int64) int64 {
	n := int64(float64(Window-ahead) * float64(limit) / float64(Window))
	return min(max(n, 0), limit)
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
