package usage

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// lane is one of a Journal's writers: a current segment that Appends copy
// frames into under mu, the segments it filled before whose records are
// not all committed yet, and the next segment made ahead
// (journal_segments.go). Segment files are created at segmentBytes and
// cut to their frames when closed; the zeros after the last frame end the
// readable part.
type lane struct {
	j    *Journal
	step int // lanes in the journal: this lane's segment numbers are this far apart

	mu      sync.Mutex
	f       *os.File    // the current segment's file; nil once closed
	seg     *region     // the current segment's bytes
	off     int         // bytes of frames in the current segment
	cur     int         // current segment number
	open    map[int]int // segment → records not yet committed
	count   map[int]int // segment → records appended
	segSize int         // records per segment

	// The next segment is made ahead, in the background, once the current
	// one is half full (journal_segments.go): a rotation under mu then only
	// swaps it in, and the old segment is closed in the background too.
	spare   *openSegment   // the next segment, ready; nil if none
	making  bool           // a goroutine is making the spare
	failed  bool           // making the spare failed: no new try before the next rotation
	last    int            // the highest segment number taken
	closing map[int]bool   // old segments being closed in the background
	bg      sync.WaitGroup // the background work, waited for by close
	bgErr   error          // the first error of the background work

	// newSegment makes a segment file's region: mapSegment, or
	// bufferedSegment in tests of the buffered path.
	newSegment func(f *os.File, size int) (*region, error)
}

func newLane(j *Journal, n int) *lane {
	return &lane{j: j, step: n, open: map[int]int{}, count: map[int]int{}, closing: map[int]bool{},
		segSize: segmentRecords, newSegment: mapSegment}
}

// write copies frame into the current segment, rotating first if it is
// full, and unlocks mu, which the caller holds.
func (l *lane) write(frame []byte) (Ticket, error) {
	defer l.mu.Unlock()
	n := len(frame)
	if l.f == nil {
		return 0, errors.New("usage journal: closed")
	}
	if l.off+n > len(l.seg.mem) || l.count[l.cur] >= l.segSize {
		if err := l.rotate(); err != nil {
			return 0, err
		}
		if n > len(l.seg.mem) {
			return 0, fmt.Errorf("usage journal: a record of %d bytes", n)
		}
	}
	copy(l.seg.mem[l.off:], frame)
	if err := l.seg.written(l.off, l.off+n); err != nil {
		return 0, fmt.Errorf("usage journal: write: %w", err)
	}
	l.off += n
	l.open[l.cur]++
	l.count[l.cur]++
	l.makeSpareIfHalfFull()
	return Ticket(l.cur), nil
}

// committed marks runs' records, all of this lane's segments, as stored.
func (l *lane) committed(runs []segmentCount) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range runs {
		left := l.open[r.seg]
		if left <= 0 {
			continue
		}
		left = max(left-r.n, 0)
		l.open[r.seg] = left
		if left > 0 {
			continue
		}
		if r.seg != l.cur {
			if !l.closing[r.seg] { // else its closer removes it
				l.remove(r.seg)
			}
		} else if l.count[r.seg] > 0 && l.f != nil && l.seg.zero(l.off) == nil {
			l.off, l.count[r.seg] = 0, 0
		}
	}
}

// close closes the current segment, waits for the background work, and
// removes every segment of the lane with nothing left uncommitted.
func (l *lane) close() error {
	l.mu.Lock()
	if l.f == nil {
		l.mu.Unlock()
		return nil
	}
	err := l.closeSegment()
	l.mu.Unlock()
	l.bg.Wait() // makers and closers see l.f == nil and finish
	l.mu.Lock()
	defer l.mu.Unlock()
	if sp := l.spare; sp != nil {
		l.spare = nil
		err = errors.Join(err, sp.discard())
	}
	for seg, n := range l.open {
		if n == 0 {
			l.remove(seg)
		}
	}
	return errors.Join(err, l.bgErr)
}
