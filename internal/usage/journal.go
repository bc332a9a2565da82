package usage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/modelgate/modelgate/internal/store"
)

// Journal is an append-only log of usage records in a local directory,
// written before a record is queued for the database. A process killed
// with SIGKILL loses what is buffered in memory but not what the kernel
// already has, so on the next start Replay hands back every record (and
// with it every charge) that had not reached the database; inserting them
// again is harmless because the store skips request ids it already has.
// (Records are not fsynced: a power loss can still lose the last moments.)
//
// The journal is split into segments of segmentRecords records; a segment
// is deleted once all its records are committed, and the current one is
// zeroed when everything in it is.
//
// Records are binary frames (journal_codec.go), copied into the current
// segment through a shared memory mapping of the file (journal_region.go;
// on Linux, with the file's blocks allocated up front): an Append is a copy
// under a lock, with no system call, and what it copied is in the kernel's
// page cache at once, so it survives the process being killed like a
// write(2) would. Elsewhere a segment is buffered and each frame written
// with one pwrite. Segment files are created at segmentBytes and cut to
// their frames when closed; the zeros after the last frame end the
// readable part.
type Journal struct {
	dir string

	mu      sync.Mutex
	f       *os.File    // the current segment's file; nil once closed
	seg     *region     // the current segment's bytes
	off     int         // bytes of frames in the current segment
	cur     int         // current segment number
	first   int         // this process's first segment; older ones are Replay's
	open    map[int]int // segment → records not yet committed
	count   map[int]int // segment → records appended
	segSize int         // records per segment

	// The next segment is made ahead, in the background, once the current
	// one is half full (journal_segments.go): a rotation under mu then only
	// swaps it in, and the old segment is closed in the background too.
	spare   *openSegment   // the next segment, ready; nil if none
	making  bool           // a goroutine is making the spare
	last    int            // the highest segment number taken
	closing map[int]bool   // old segments being closed in the background
	bg      sync.WaitGroup // the background work, waited for by Close
	bgErr   error          // the first error of the background work

	// newSegment makes a segment file's region: mapSegment, or
	// bufferedSegment in tests of the buffered path.
	newSegment func(f *os.File, size int) (*region, error)
}

const (
	segmentRecords = 16384
	segmentBytes   = 8 << 20 // a segment file's size while it is written; 16384 records take ~4 MB
	journalPrefix  = "usage-"
	journalSuffix  = ".jbin"    // binary frames (journal_codec.go)
	legacySuffix   = ".journal" // JSON lines, written before the frames; read only
)

// OpenJournal opens (creating it) the journal directory. Records left by
// an earlier process stay until Replay's caller has stored them and calls
// Clear.
func OpenJournal(dir string) (*Journal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("usage journal: %w", err)
	}
	j := &Journal{dir: dir, open: map[int]int{}, count: map[int]int{}, closing: map[int]bool{},
		segSize: segmentRecords, newSegment: mapSegment}
	segs, err := j.segments()
	if err != nil {
		return nil, err
	}
	if len(segs) > 0 {
		j.last = segs[len(segs)-1].n
	}
	if err := j.rotate(); err != nil {
		return nil, err
	}
	j.first = j.cur
	return j, nil
}

// segment is a segment file: its number and whether it is in the legacy
// (JSON lines) format.
type segment struct {
	n      int
	legacy bool
}

// segments lists the segment files on disk, oldest first.
func (j *Journal) segments() ([]segment, error) {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, fmt.Errorf("usage journal: %w", err)
	}
	var out []segment
	for _, e := range entries {
		name := e.Name()
		for _, sfx := range [...]string{journalSuffix, legacySuffix} {
			if !strings.HasPrefix(name, journalPrefix) || !strings.HasSuffix(name, sfx) {
				continue
			}
			var n int
			if _, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimPrefix(name, journalPrefix), sfx), "%d", &n); err == nil {
				out = append(out, segment{n: n, legacy: sfx == legacySuffix})
			}
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].n != out[b].n {
			return out[a].n < out[b].n
		}
		return out[a].legacy && !out[b].legacy
	})
	return out, nil
}

func (j *Journal) path(seg int) string { return j.pathOf(segment{n: seg}) }
func (j *Journal) pathOf(s segment) string {
	sfx := journalSuffix
	if s.legacy {
		sfx = legacySuffix
	}
	return filepath.Join(j.dir, fmt.Sprintf("%s%09d%s", journalPrefix, s.n, sfx))
}

// Replay returns the records of segments older than this process's first
// one, i.e. what an earlier process journaled, in either format. Records
// cut short by a crash are skipped and counted in torn.
func (j *Journal) Replay() (recs []store.UsageRecord, torn int, err error) {
	segs, err := j.segments()
	if err != nil {
		return nil, 0, err
	}
	for _, seg := range segs {
		if seg.n >= j.first {
			break
		}
		read := readFrames
		if seg.legacy {
			read = readLegacy
		}
		got, t, err := read(j.pathOf(seg))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("usage journal: read %s: %w", j.pathOf(seg), err)
		}
		recs, torn = append(recs, got...), torn+t
	}
	return recs, torn, nil
}

// Clear deletes the segments Replay read; call it once they are stored.
func (j *Journal) Clear() error {
	segs, err := j.segments()
	if err != nil {
		return err
	}
	for _, seg := range segs {
		if seg.n < j.first {
			if err := os.Remove(j.pathOf(seg)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("usage journal: %w", err)
			}
		}
	}
	return nil
}

// Ticket names the segment a record was journaled in: Append gives one
// and Committed takes it back once the record is stored, so the journal
// needs no index of its own. The zero Ticket names none (a record that was
// not journaled) and Committed ignores it.
type Ticket int

// frames holds the buffers Append encodes frames into before taking the
// lock (*[]byte; a usual frame is ~150 bytes). A pool rather than the
// stack: the checksum's assembly makes the buffer escape.
var frames = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// Append journals rec and returns once its frame is in the kernel's page
// cache (not fsynced): copied into the segment's shared mapping, or written
// where there is none (journal_region.go). The frame is encoded and
// checksummed before the lock is taken; under it is only the copy.
func (j *Journal) Append(rec *store.UsageRecord) (Ticket, error) {
	buf := frames.Get().(*[]byte)
	frame := appendFrame((*buf)[:0], rec)
	defer func() { *buf = frame[:0]; frames.Put(buf) }()
	n := len(frame)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return 0, errors.New("usage journal: closed")
	}
	if j.off+n > len(j.seg.mem) || j.count[j.cur] >= j.segSize {
		if err := j.rotate(); err != nil {
			return 0, err
		}
		if n > len(j.seg.mem) {
			return 0, fmt.Errorf("usage journal: a record of %d bytes", n)
		}
	}
	copy(j.seg.mem[j.off:], frame)
	if err := j.seg.written(j.off, j.off+n); err != nil {
		return 0, fmt.Errorf("usage journal: write: %w", err)
	}
	j.off += n
	j.open[j.cur]++
	j.count[j.cur]++
	j.makeSpareIfHalfFull()
	return Ticket(j.cur), nil
}

// Committed marks the records Append gave these tickets as stored, each
// ticket once; segments with nothing left open go, and the current one is
// emptied (zeroed) when everything in it is stored. A ticket of a segment
// already gone, or the zero Ticket, is ignored.
func (j *Journal) Committed(tickets []Ticket) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, t := range tickets {
		seg := int(t)
		if j.open[seg] <= 0 {
			continue
		}
		j.open[seg]--
		if j.open[seg] > 0 {
			continue
		}
		if seg != j.cur {
			if !j.closing[seg] { // else its closer removes it
				j.remove(seg)
			}
		} else if j.count[seg] > 0 && j.f != nil && j.seg.zero(j.off) == nil {
			j.off, j.count[seg] = 0, 0
		}
	}
}

// Close closes the current segment, waits for the background work, and
// removes every segment with nothing left uncommitted (a clean shutdown
// leaves an empty directory).
func (j *Journal) Close() error {
	j.mu.Lock()
	if j.f == nil {
		j.mu.Unlock()
		return nil
	}
	err := j.closeSegment()
	j.mu.Unlock()
	j.bg.Wait() // makers and closers see j.f == nil and finish
	j.mu.Lock()
	defer j.mu.Unlock()
	if sp := j.spare; sp != nil {
		j.spare = nil
		err = errors.Join(err, sp.discard())
	}
	for seg, n := range j.open {
		if n == 0 {
			j.remove(seg)
		}
	}
	return errors.Join(err, j.bgErr)
}
