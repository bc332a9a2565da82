package server

import (
	"container/list"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Connection limits: each client connection holds a file descriptor, and
// so does each upstream connection, store file and journal segment. A
// process that runs out of descriptors fails whatever opens one next
// (EMFILE): an upstream dial, the database, an accept. So the server holds
// at most MaxConns client connections, and at the cap it closes the ones
// that have been idle longest (a keep-alive connection between requests,
// or one that has not sent a whole request yet) to admit new ones; only
// when every connection is busy does it stop accepting until one is not,
// and the kernel's backlog holds the newcomers.

// connHeadroom is the descriptors kept for everything but client
// connections when the cap comes from the file limit: the store, the
// journal, image files, logs, listeners.
const connHeadroom = 128

// minConns is the smallest cap DefaultMaxConns gives.
const minConns = 16

// DefaultMaxConns is the client connections a process whose descriptor
// limit is nofile may hold: half of what is left after connHeadroom,
// since each busy client connection has an upstream connection beside it
// (1024 → 448, 1048576 → 524224). It is at least minConns.
func DefaultMaxConns(nofile uint64) int {
	if nofile <= connHeadroom+2*minConns {
		return minConns
	}
	n := (nofile - connHeadroom) / 2
	if n > 1<<30 {
		n = 1 << 30
	}
	return int(n)
}

// connLimit tracks the server's connections by state and caps them.
type connLimit struct {
	max int
	log *slog.Logger
	now func() time.Time

	mu    sync.Mutex
	conns map[net.Conn]*connEntry
	idle  *list.List // of net.Conn: New or Idle, longest idle first
	open  int        // tracked connections not closed by the limit
	wake  chan struct{}

	closedIdle uint64    // idle connections closed to admit new ones, since start
	unlogged   uint64    // of which not logged yet
	lastLog    time.Time // when the last WARN line about them was written
}

// connEntry is a connection's place: el is its element in idle while it
// is idle, nil while it is busy.
type connEntry struct {
	el      *list.Element
	evicted bool // closed by the limit; no longer counted
}

// logEvery is the shortest time between two WARN lines about connections
// closed at the cap.
const logEvery = time.Minute

func newConnLimit(max int, log *slog.Logger, now func() time.Time) *connLimit {
	return &connLimit{max: max, log: log, now: now, conns: map[net.Conn]*connEntry{}, idle: list.New(),
		wake: make(chan struct{}, 1)}
}

// ClosedIdle is how many idle connections were closed at the cap to admit
// new ones since the server started (for metrics and tests).
func (s *Server) ClosedIdle() uint64 {
	if s.limit == nil {
		return 0
	}
	s.limit.mu.Lock()
	defer s.limit.mu.Unlock()
	return s.limit.closedIdle
}

// state is the http.Server's ConnState hook: it keeps each connection in
// or out of the idle list.
func (l *connLimit) state(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	e := l.conns[c]
	if e == nil {
		l.mu.Unlock()
		return // hijacked earlier, or not accepted through the limit
	}
	switch st {
	case http.StateActive:
		if e.el != nil {
			l.idle.Remove(e.el)
			e.el = nil
		}
	case http.StateIdle:
		if e.el == nil && !e.evicted {
			e.el = l.idle.PushBack(c)
		}
	case http.StateHijacked, http.StateClosed:
		if e.el != nil {
			l.idle.Remove(e.el)
		}
		delete(l.conns, c)
		if !e.evicted {
			l.open--
		}
	}
	l.mu.Unlock()
	if st != http.StateActive {
		select { // a slot may be free or freeable now
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// admit waits until one more connection may be tracked: there is room,
// or there is an idle connection to close for it. It returns false when
// done is closed first.
func (l *connLimit) admit(done <-chan struct{}) bool {
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.mu.Unlock()
			return true
		}
		if front := l.idle.Front(); front != nil {
			victim := front.Value.(net.Conn)
			e := l.conns[victim]
			l.idle.Remove(front)
			e.el, e.evicted = nil, true
			l.open--
			l.closedIdle++
			l.unlogged++
			logNow := l.lastLog.IsZero() || l.now().Sub(l.lastLog) >= logEvery
			var n uint64
			if logNow {
				n, l.unlogged, l.lastLog = l.unlogged, 0, l.now()
			}
			l.mu.Unlock()
			_ = victim.Close()
			if logNow {
				l.log.Warn("connections at max_connections: closed the longest idle to admit new ones",
					"closed", n, "max_connections", l.max)
			}
			return true
		}
		l.mu.Unlock()
		select {
		case <-l.wake:
		case <-done:
			return false
		}
	}
}

// track counts c, which starts idle (it has sent no request yet).
func (l *connLimit) track(c net.Conn) {
	l.mu.Lock()
	l.conns[c] = &connEntry{el: l.idle.PushBack(c)}
	l.open++
	l.mu.Unlock()
}

// limitListener makes room for each connection it accepts.
type limitListener struct {
	net.Listener
	l    *connLimit
	done chan struct{}
	once sync.Once
}

// Accept accepts the next connection, then makes room for it: at the cap
// it closes the longest idle one, and when every one is busy it holds the
// newcomer until one is not (the only time the server holds one past the
// cap; the kernel's backlog holds the ones behind it). Making room only
// for a connection that has arrived keeps every idle one until it must go.
func (ln *limitListener) Accept() (net.Conn, error) {
	c, err := ln.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if !ln.l.admit(ln.done) {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	ln.l.track(c)
	return c, nil
}

func (ln *limitListener) Close() error {
	ln.once.Do(func() { close(ln.done) })
	return ln.Listener.Close()
}

// limited wraps ln so that it accepts within the cap.
func (l *connLimit) limited(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, l: l, done: make(chan struct{})}
}
