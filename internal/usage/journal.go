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
// truncated when everything in it is.
//
// Records are binary frames (journal_codec.go). Concurrent Appends share
// write calls (group commit): while one write is in flight the others
// queue their frames in the next group, and whoever finds no write in
// flight writes the whole group with one call; every Append returns once
// its own frame reached the kernel.
type Journal struct {
	dir string

	mu      sync.Mutex
	done    sync.Cond // broadcast when a group's write has finished
	f       *os.File
	cur     int            // current segment number
	first   int            // this process's first segment; older ones are Replay's
	open    map[int]int    // segment → records not yet committed
	count   map[int]int    // segment → records appended
	bySeg   map[string]int // request id → segment, until committed
	segSize int

	next    *group // frames waiting for the next write
	writing bool   // a group's write is in flight (outside mu)
	spare   *group // a finished group's buffers, for reuse
}

// group is the frames that go out in one write call.
type group struct {
	buf  []byte
	ids  []string
	done bool  // written (or failed): err is final
	err  error // the write's error, shared by every record of the group
}

const (
	segmentRecords = 16384
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
	j := &Journal{dir: dir, open: map[int]int{}, count: map[int]int{}, bySeg: map[string]int{},
		segSize: segmentRecords, next: &group{}}
	j.done.L = &j.mu
	segs, err := j.segments()
	if err != nil {
		return nil, err
	}
	if len(segs) > 0 {
		j.cur = segs[len(segs)-1].n
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

// rotate starts a new segment; j.mu is held or j is not shared yet.
func (j *Journal) rotate() error {
	if j.f != nil {
		if err := j.f.Close(); err != nil {
			return fmt.Errorf("usage journal: close segment: %w", err)
		}
		if j.open[j.cur] == 0 {
			j.remove(j.cur)
		}
	}
	j.cur++
	f, err := os.OpenFile(j.path(j.cur), os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("usage journal: %w", err)
	}
	j.f = f
	j.open[j.cur], j.count[j.cur] = 0, 0
	return nil
}

func (j *Journal) remove(seg int) {
	delete(j.open, seg)
	delete(j.count, seg)
	_ = os.Remove(j.path(seg))
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

// Append journals rec and returns once its frame has reached the kernel
// (written, not fsynced). Concurrent calls share one write (see Journal).
func (j *Journal) Append(rec *store.UsageRecord) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("usage journal: closed")
	}
	g := j.next
	g.buf = appendFrame(g.buf, rec)
	g.ids = append(g.ids, rec.RequestID)
	for !g.done {
		if j.writing {
			j.done.Wait()
		} else {
			j.writeNext()
		}
	}
	return g.err
}

// writeNext writes the pending group with one call, with j.mu released
// during the write, then accounts its records to the current segment and
// rotates when that is full. j.mu is held and no write is in flight.
func (j *Journal) writeNext() {
	g := j.next
	j.next, j.spare = j.spare, nil
	if j.next == nil {
		j.next = &group{}
	}
	if j.f == nil { // closed while g waited
		g.err, g.done = errors.New("usage journal: closed"), true
		j.done.Broadcast()
		return
	}
	j.writing = true
	f := j.f
	j.mu.Unlock()
	_, err := f.Write(g.buf)
	j.mu.Lock()
	j.writing = false
	if err != nil {
		g.err = fmt.Errorf("usage journal: write: %w", err)
	} else {
		j.open[j.cur] += len(g.ids)
		j.count[j.cur] += len(g.ids)
		for _, id := range g.ids {
			j.bySeg[id] = j.cur
		}
		if j.count[j.cur] >= j.segSize {
			g.err = j.rotate()
		}
	}
	g.done = true
	j.spare = &group{buf: g.buf[:0], ids: g.ids[:0]}
	g.buf, g.ids = nil, nil
	j.done.Broadcast()
}

// Committed marks records as stored; segments with nothing left open go.
func (j *Journal) Committed(recs []store.UsageRecord) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range recs {
		seg, ok := j.bySeg[recs[i].RequestID]
		if !ok {
			continue
		}
		delete(j.bySeg, recs[i].RequestID)
		j.open[seg]--
		if j.open[seg] > 0 {
			continue
		}
		if seg != j.cur {
			j.remove(seg)
		} else if j.count[seg] > 0 && !j.writing && j.f.Truncate(0) == nil { // in flight: uncounted frames
			j.count[seg] = 0
		}
	}
}

// Close closes the current segment and removes it when nothing in it is
// left uncommitted (a clean shutdown leaves an empty directory).
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.writing {
		j.done.Wait()
	}
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	for seg, n := range j.open {
		if n == 0 {
			j.remove(seg)
		}
	}
	return err
}
