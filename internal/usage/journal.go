package usage

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
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
// Records are binary frames (journal_codec.go) in segment files, copied
// into the current segment through a shared memory mapping of the file
// (journal_region.go; on Linux, with the file's blocks allocated up
// front): an Append is a copy under a lock, with no system call, and what
// it copied is in the kernel's page cache at once, so it survives the
// process being killed like a write(2) would. Elsewhere a segment is
// buffered and each frame written with one pwrite.
//
// The journal writes through journalLanes lanes (journal_lane.go), each
// with its own lock and current segment, and an Append takes the first
// lane that is free: a lane's lock is held for a copy of ~150 bytes, but a
// thread descheduled while holding it would make every finishing request
// wait, one after another, for as long as the kernel kept it off the CPU.
// Lane i of n writes the segments whose numbers are i modulo n, so a
// Ticket (a segment number) names its lane. A segment is deleted once all
// its records are committed, and a lane's current one is zeroed when
// everything in it is.
//
// One Journal at a time has a directory open: it holds the directory's
// lock file (journal_lock.go) from OpenJournal to Close, and a second
// OpenJournal, in another process or this one, fails with ErrJournalInUse.
// Two would lose records, each taking the other's segments for a dead
// process's. The kernel drops the lock of a process that dies.
type Journal struct {
	dir   string
	lock  *dirLock
	lanes []*lane
	first int // this process's first segment; older ones are Replay's
}

const (
	journalLanes   = 4
	segmentRecords = 16384
	segmentBytes   = 8 << 20 // a segment file's size while it is written; 16384 records take ~4 MB
	journalPrefix  = "usage-"
	journalSuffix  = ".jbin"    // binary frames (journal_codec.go)
	legacySuffix   = ".journal" // JSON lines, written before the frames; read only
)

// OpenJournal opens (creating it) the journal directory and locks it for
// this Journal until Close; it fails with an error wrapping
// ErrJournalInUse while another Journal, in any process, has it open.
// Records left by an earlier process stay until Replay's caller has stored
// them and calls Clear.
func OpenJournal(dir string) (*Journal, error) { return openLanes(dir, journalLanes) }

// openLanes opens dir with n lanes, each starting a segment numbered after
// every segment on disk.
func openLanes(dir string, n int) (*Journal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("usage journal: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	j := &Journal{dir: dir, lock: lock}
	segs, err := j.segments()
	if err != nil {
		_ = j.Close()
		return nil, err
	}
	last := 0
	if len(segs) > 0 {
		last = segs[len(segs)-1].n
	}
	j.first = last + 1
	for i := range n {
		l := newLane(j, n)
		first := last + 1 + (i-(last+1)%n+n)%n // the first number past last that is i modulo n
		l.last = first - n                     // rotate takes last + n
		if err := l.rotate(); err != nil {
			_ = j.Close()
			return nil, err
		}
		j.lanes = append(j.lanes, l)
	}
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
// cache (not fsynced): copied into a segment's shared mapping, or written
// where there is none (journal_region.go). The frame is encoded and
// checksummed before any lock is taken; under a lane's lock is only the
// copy. It takes the first lane that is free, so lane 0 takes nearly every
// record and the others only those that would have waited; when every lane
// is busy it waits for a random one.
func (j *Journal) Append(rec *store.UsageRecord) (Ticket, error) {
	buf := frames.Get().(*[]byte)
	frame := appendFrame((*buf)[:0], rec)
	defer func() { *buf = frame[:0]; frames.Put(buf) }()
	for _, l := range j.lanes {
		if l.mu.TryLock() {
			return l.write(frame)
		}
	}
	l := j.lanes[rand.IntN(len(j.lanes))]
	l.mu.Lock()
	return l.write(frame)
}

// Committed marks the records Append gave these tickets as stored, each
// ticket once; segments with nothing left open go, and a lane's current
// one is emptied (zeroed) when everything in it is stored. A ticket of a
// segment already gone, or the zero Ticket, is ignored. The tickets are
// counted per segment first, so each lane's lock is taken once and held
// for a few map updates, not one per record.
func (j *Journal) Committed(tickets []Ticket) {
	runs := make([][]segmentCount, len(j.lanes))
	for _, t := range tickets {
		if t <= 0 {
			continue
		}
		seg := int(t)
		i := seg % len(j.lanes)
		if k := len(runs[i]) - 1; k >= 0 && runs[i][k].seg == seg {
			runs[i][k].n++
			continue
		}
		runs[i] = append(runs[i], segmentCount{seg: seg, n: 1})
	}
	for i, l := range j.lanes {
		if len(runs[i]) > 0 {
			l.committed(runs[i])
		}
	}
}

// segmentCount is how many of a batch's tickets name one segment.
type segmentCount struct{ seg, n int }

// Close closes every lane's current segment, waits for the work they do
// in the background, removes every segment with nothing left uncommitted
// (a clean shutdown leaves only the lock file), and then unlocks the
// directory for the next process.
func (j *Journal) Close() error {
	var err error
	for _, l := range j.lanes {
		err = errors.Join(err, l.close())
	}
	return errors.Join(err, j.lock.release())
}
