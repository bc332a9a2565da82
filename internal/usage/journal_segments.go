package usage

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Segments come and go off the Append path. Making one (create the file,
// allocate its blocks, map it, fault its pages in) and closing one (unmap,
// cut the file to its frames, close) each take a millisecond or more of
// system calls, and every Append waits on l.mu meanwhile; done under the
// lock at each rotation, that was a stall of every request finishing at
// that moment. So once the current segment is half full a goroutine makes
// the next one (the spare), a rotation only swaps it in, and the old
// segment is closed by another goroutine. When no spare is ready (a
// burst filled half a segment faster than one could be made), rotate makes
// one itself, as before.

// openSegment is a segment file in use or made ahead: its number, file
// and bytes.
type openSegment struct {
	n   int
	f   *os.File
	mem *region
}

// discard closes an unused spare and removes its file.
func (s *openSegment) discard() error {
	err := errors.Join(s.mem.close(), s.f.Close(), os.Remove(s.f.Name()))
	if err != nil {
		return fmt.Errorf("usage journal: discard spare segment: %w", err)
	}
	return nil
}

// rotate puts the next segment in use and closes the current one in the
// background; l.mu is held or l is not shared yet.
func (l *lane) rotate() error {
	next := l.spare
	l.spare = nil
	if next == nil {
		var err error
		if next, err = l.makeSegment(l.newSegment, l.last+l.step, 0); err != nil {
			return err
		}
	}
	l.last = max(l.last, next.n)
	if l.f != nil {
		l.closeInBackground(openSegment{n: l.cur, f: l.f, mem: l.seg}, l.off)
	}
	l.f, l.seg, l.off, l.cur = next.f, next.mem, 0, next.n
	l.open[l.cur], l.count[l.cur] = 0, 0
	l.failed = false
	return nil
}

// makeSpareIfHalfFull starts making the next segment once the current one
// holds half the records or bytes it can, unless a spare is ready or being
// made already, or making one failed since the last rotation (a full disk
// would otherwise be tried again after every record); l.mu is held.
func (l *lane) makeSpareIfHalfFull() {
	if l.spare != nil || l.making || l.failed || (2*l.count[l.cur] < l.segSize && 2*l.off < len(l.seg.mem)) {
		return
	}
	l.making = true
	// Half full now, so the next segment will take about twice what this
	// one holds; fault in that and an eighth more.
	n, fault, mk := l.last+l.step, 2*l.off+l.off/8, l.newSegment
	l.last = n
	l.bg.Add(1)
	go func() {
		defer l.bg.Done()
		sp, err := l.makeSegment(mk, n, fault)
		l.mu.Lock()
		l.making = false
		if err != nil {
			l.failed = true // rotate makes one itself, and reports why it cannot
			l.mu.Unlock()
			return
		}
		l.last = max(l.last, sp.n)
		late := sp.n < l.cur // rotate could not wait and made a later one
		if !late {
			l.spare = sp
		}
		l.mu.Unlock()
		if late { // segments are used in the order of their numbers
			l.noteBackground(sp.discard())
		}
	}()
}

// makeSegment creates segment file n (or the lane's next number free,
// should a file n exist: another process's) and its region (mk), and
// faults in its first fault bytes so that Append's copies into them do
// not; l.mu need not be held.
func (l *lane) makeSegment(mk func(*os.File, int) (*region, error), n, fault int) (*openSegment, error) {
	var f *os.File
	for tries := 0; ; tries++ {
		var err error
		f, err = os.OpenFile(l.j.path(n), os.O_CREATE|os.O_RDWR|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || tries == 100 {
			return nil, fmt.Errorf("usage journal: %w", err)
		}
		n += l.step // the lane's next number
	}
	mem, err := mk(f, segmentBytes)
	if err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, fmt.Errorf("usage journal: %w", err)
	}
	mem.prefault(fault)
	return &openSegment{n: n, f: f, mem: mem}, nil
}

// closeInBackground closes segment s, which holds off bytes of frames, in
// a goroutine; Committed leaves its file to the goroutine meanwhile, which
// removes it once closed if nothing in it is left uncommitted. l.mu is
// held.
func (l *lane) closeInBackground(s openSegment, off int) {
	l.closing[s.n] = true
	l.bg.Add(1)
	go func() {
		defer l.bg.Done()
		err := closeFile(s.f, s.mem, off)
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.closing, s.n)
		l.bgErr = cmp.Or(l.bgErr, err)
		if l.open[s.n] == 0 {
			l.remove(s.n)
		}
	}()
}

// noteBackground keeps the first error of the background work for Close.
func (l *lane) noteBackground(err error) {
	if err == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bgErr = cmp.Or(l.bgErr, err)
}

// closeSegment closes the current segment; l.mu is held.
func (l *lane) closeSegment() error {
	err := closeFile(l.f, l.seg, l.off)
	l.f, l.seg = nil, nil
	return err
}

// closeFile unmaps or drops mem and cuts f to its off bytes of frames.
func closeFile(f *os.File, mem *region, off int) error {
	if err := errors.Join(mem.close(), f.Truncate(int64(off)), f.Close()); err != nil {
		return fmt.Errorf("usage journal: close segment: %w", err)
	}
	return nil
}

func (l *lane) remove(seg int) {
	delete(l.open, seg)
	delete(l.count, seg)
	_ = os.Remove(l.j.path(seg))
}
