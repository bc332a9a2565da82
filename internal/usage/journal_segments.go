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
// system calls, and every Append waits on j.mu meanwhile; done under the
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
// background; j.mu is held or j is not shared yet.
func (j *Journal) rotate() error {
	next := j.spare
	j.spare = nil
	if next == nil {
		var err error
		if next, err = j.makeSegment(j.newSegment, j.last+1, 0); err != nil {
			return err
		}
	}
	j.last = max(j.last, next.n)
	if j.f != nil {
		j.closeInBackground(openSegment{n: j.cur, f: j.f, mem: j.seg}, j.off)
	}
	j.f, j.seg, j.off, j.cur = next.f, next.mem, 0, next.n
	j.open[j.cur], j.count[j.cur] = 0, 0
	return nil
}

// makeSpareIfHalfFull starts making the next segment once the current one
// holds half the records or bytes it can, unless a spare is ready or being
// made already; j.mu is held.
func (j *Journal) makeSpareIfHalfFull() {
	if j.spare != nil || j.making || (2*j.count[j.cur] < j.segSize && 2*j.off < len(j.seg.mem)) {
		return
	}
	j.making = true
	// Half full now, so the next segment will take about twice what this
	// one holds; fault in that and an eighth more.
	n, fault, mk := j.last+1, 2*j.off+j.off/8, j.newSegment
	j.last = n
	j.bg.Add(1)
	go func() {
		defer j.bg.Done()
		sp, err := j.makeSegment(mk, n, fault)
		if err != nil {
			j.mu.Lock()
			j.making = false
			j.mu.Unlock()
			return // rotate makes one itself, and reports why it cannot
		}
		j.mu.Lock()
		j.making = false
		j.last = max(j.last, sp.n)
		late := sp.n < j.cur // rotate could not wait and made a later one
		if !late {
			j.spare = sp
		}
		j.mu.Unlock()
		if late { // segments are used in the order of their numbers
			j.noteBackground(sp.discard())
		}
	}()
}

// makeSegment creates segment file n (or the next number free, should a
// file n exist: another process's) and its region (mk), and faults in its first fault bytes so that
// Append's copies into them do not; j.mu need not be held.
func (j *Journal) makeSegment(mk func(*os.File, int) (*region, error), n, fault int) (*openSegment, error) {
	var f *os.File
	for tries := 0; ; tries++ {
		var err error
		f, err = os.OpenFile(j.path(n), os.O_CREATE|os.O_RDWR|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || tries == 100 {
			return nil, fmt.Errorf("usage journal: %w", err)
		}
		n++
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
// removes it once closed if nothing in it is left uncommitted. j.mu is
// held.
func (j *Journal) closeInBackground(s openSegment, off int) {
	j.closing[s.n] = true
	j.bg.Add(1)
	go func() {
		defer j.bg.Done()
		err := closeFile(s.f, s.mem, off)
		j.mu.Lock()
		defer j.mu.Unlock()
		delete(j.closing, s.n)
		j.bgErr = cmp.Or(j.bgErr, err)
		if j.open[s.n] == 0 {
			j.remove(s.n)
		}
	}()
}

// noteBackground keeps the first error of the background work for Close.
func (j *Journal) noteBackground(err error) {
	if err == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.bgErr = cmp.Or(j.bgErr, err)
}

// closeSegment closes the current segment; j.mu is held.
func (j *Journal) closeSegment() error {
	err := closeFile(j.f, j.seg, j.off)
	j.f, j.seg = nil, nil
	return err
}

// closeFile unmaps or drops mem and cuts f to its off bytes of frames.
func closeFile(f *os.File, mem *region, off int) error {
	if err := errors.Join(mem.close(), f.Truncate(int64(off)), f.Close()); err != nil {
		return fmt.Errorf("usage journal: close segment: %w", err)
	}
	return nil
}

func (j *Journal) remove(seg int) {
	delete(j.open, seg)
	delete(j.count, seg)
	_ = os.Remove(j.path(seg))
}
