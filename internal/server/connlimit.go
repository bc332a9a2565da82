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

// connLimit tracks the server's connections by state and caps them. The
// idle list is in the order the connections became idle (accepted, for a
// new one; answered, for a keep-alive one), so its front is the one idle
// longest and no timestamps are needed.
type connLimit struct {
	max   int
	log   *slog.Logger
	now   func() time.Time
	every time.Duration                           // shortest time between two WARN lines
	after func(time.Duration, func()) func() bool // time.AfterFunc, returning Stop (tests replace it)

	mu    sync.Mutex
	conns map[net.Conn]*connEntry
	idle  *list.List    // of net.Conn: New or Idle, longest idle first
	open  int           // tracked connections not closed by the limit
	waitc chan struct{} // closed when a slot may have come free; nil while nobody waits

	closedIdle uint64      // idle connections closed to admit new ones, since start
	unlogged   uint64      // of which not logged yet
	lastLog    time.Time   // when the last WARN line about them was written
	stopLog    func() bool // stops the timer that writes the unlogged ones; nil when none is set
	stopped    bool        // the server stopped: the last line is written, no timer is set again
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
	return &connLimit{max: max, log: log, now: now, every: logEvery,
		after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop },
		conns: map[net.Conn]*connEntry{}, idle: list.New()}
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
	defer l.mu.Unlock()
	e := l.conns[c]
	if e == nil {
		return // hijacked earlier, or not accepted through the limit
	}
	switch st {
	case http.StateActive:
		if e.el != nil {
			l.idle.Remove(e.el)
			e.el = nil
		}
		return
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
	default:
		return // StateNew: tracked as idle since it was accepted
	}
	if l.waitc != nil { // a slot is free or freeable now: wake the accepters
		close(l.waitc)
		l.waitc = nil
	}
}

// roomLocked reports whether one more connection may come in: there is
// room, or an idle connection to close for it. l.mu is held.
func (l *connLimit) roomLocked() bool { return l.open < l.max || l.idle.Len() > 0 }

// waitLocked waits, with l.mu held and held again on return, until state
// reports a change; false when done is closed first.
func (l *connLimit) waitLocked(done <-chan struct{}) bool {
	if l.waitc == nil {
		l.waitc = make(chan struct{})
	}
	ch := l.waitc
	l.mu.Unlock()
	defer l.mu.Lock()
	select {
	case <-ch:
		return true
	case <-done:
		return false
	}
}

// admit tracks c, which starts idle (it has sent no request yet), closing
// the longest idle connection first when at the cap. While every
// connection is busy it waits for one to finish or go idle, holding c:
// the one connection past the cap; those behind it wait in the kernel's
// backlog, since Accept is not called meanwhile. It returns false when
// done is closed first.
func (l *connLimit) admit(c net.Conn, done <-chan struct{}) bool {
	l.mu.Lock()
	for !l.roomLocked() {
		if !l.waitLocked(done) {
			l.mu.Unlock()
			return false
		}
	}
	var victim net.Conn
	var line uint64 // closed connections to log now
	if l.open >= l.max {
		front := l.idle.Front()
		victim = front.Value.(net.Conn)
		e := l.conns[victim]
		l.idle.Remove(front)
		e.el, e.evicted = nil, true
		l.open--
		l.closedIdle++
		l.unlogged++
		line = l.takeLocked(false)
	}
	l.conns[c] = &connEntry{el: l.idle.PushBack(c)}
	l.open++
	l.mu.Unlock()
	if victim != nil {
		_ = victim.Close()
	}
	l.write(line)
	return true
}

// takeLocked returns how many closes to log now and starts counting
// afresh: all the unlogged ones when force or when the last line is
// logEvery old. Otherwise it sets a timer to log them when it is. l.mu is
// held.
func (l *connLimit) takeLocked(force bool) uint64 {
	if l.unlogged == 0 {
		return 0
	}
	now := l.now()
	if !force && !l.lastLog.IsZero() {
		if wait := l.lastLog.Add(l.every).Sub(now); wait > 0 {
			if l.stopLog == nil && !l.stopped {
				l.stopLog = l.after(wait, l.flushDue)
			}
			return 0
		}
	}
	n := l.unlogged
	l.unlogged, l.lastLog = 0, now
	return n
}

// flushDue is the timer's: it writes the closes counted since the last
// line, which is logEvery old now.
func (l *connLimit) flushDue() {
	l.mu.Lock()
	l.stopLog = nil
	n := l.takeLocked(true)
	l.mu.Unlock()
	l.write(n)
}

// stop writes the closes not logged yet, whatever the interval, and sets
// no timer again (when the server stops).
func (l *connLimit) stop() {
	l.mu.Lock()
	l.stopped = true
	if l.stopLog != nil {
		l.stopLog()
		l.stopLog = nil
	}
	n := l.takeLocked(true)
	l.mu.Unlock()
	l.write(n)
}

func (l *connLimit) write(closed uint64) {
	if closed == 0 {
		return
	}
	l.log.Warn("connections at max_connections: closed the longest idle to admit new ones",
		"closed", closed, "max_connections", l.max)
}

// limitListener makes room for each connection it accepts.
type limitListener struct {
	net.Listener
	l    *connLimit
	done chan struct{}
	once sync.Once
}

// Accept accepts the next connection, then makes room for it: at the cap
// it closes the longest idle one, and while every one is busy it holds the
// newcomer until one is not (the only connection held past the cap; the
// kernel's backlog holds the ones behind it). Making room only for a
// connection that has arrived keeps every idle one until it must go.
// (Waiting for room before accepting would not save that descriptor:
// Accept is mostly entered while there is room, and blocks in the kernel
// until the next connection, by when every one may be busy.) It returns
// net.ErrClosed once the listener is closed, waiting or not.
func (ln *limitListener) Accept() (net.Conn, error) {
	c, err := ln.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if !ln.l.admit(c, ln.done) {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	return c, nil
}

// Close closes the listener and ends any wait in Accept.
func (ln *limitListener) Close() error {
	ln.once.Do(func() { close(ln.done) })
	return ln.Listener.Close()
}

// limited wraps ln so that it accepts within the cap.
func (l *connLimit) limited(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, l: l, done: make(chan struct{})}
}
