package usage

import (
	"bufio"
	"encoding/json"
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
type Journal struct {
	dir string

	mu      sync.Mutex
	f       *os.File
	cur     int            // current segment number
	first   int            // this process's first segment; older ones are Replay's
	open    map[int]int    // segment → records not yet committed
	count   map[int]int    // segment → records appended
	bySeg   map[string]int // request id → segment, until committed
	buf     []byte
	segSize int
}

const (
	segmentRecords = 16384
	journalPrefix  = "usage-"
	journalSuffix  = ".journal"
)

// OpenJournal opens (creating it) the journal directory. Records left by
// an earlier process stay until Replay's caller has stored them and calls
// Clear.
func OpenJournal(dir string) (*Journal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("usage journal: %w", err)
	}
	j := &Journal{dir: dir, open: map[int]int{}, count: map[int]int{}, bySeg: map[string]int{}, segSize: segmentRecords}
	segs, err := j.segments()
	if err != nil {
		return nil, err
	}
	if len(segs) > 0 {
		j.cur = segs[len(segs)-1]
	}
	if err := j.rotate(); err != nil {
		return nil, err
	}
	j.first = j.cur
	return j, nil
}

// segments lists the segment numbers on disk, oldest first.
func (j *Journal) segments() ([]int, error) {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, fmt.Errorf("usage journal: %w", err)
	}
	var out []int
	for _, e := range entries {
		var n int
		name := e.Name()
		if !strings.HasPrefix(name, journalPrefix) || !strings.HasSuffix(name, journalSuffix) {
			continue
		}
		if _, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimPrefix(name, journalPrefix), journalSuffix), "%d", &n); err == nil {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

func (j *Journal) path(seg int) string {
	return filepath.Join(j.dir, fmt.Sprintf("%s%09d%s", journalPrefix, seg, journalSuffix))
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
// one, i.e. what an earlier process journaled. Lines cut short by a crash
// are skipped and counted in torn.
func (j *Journal) Replay() (recs []store.UsageRecord, torn int, err error) {
	segs, err := j.segments()
	if err != nil {
		return nil, 0, err
	}
	for _, seg := range segs {
		if seg >= j.first {
			break
		}
		f, err := os.Open(j.path(seg))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("usage journal: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var r store.UsageRecord
			if json.Unmarshal(sc.Bytes(), &r) != nil || r.RequestID == "" {
				torn++
				continue
			}
			recs = append(recs, r)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, 0, fmt.Errorf("usage journal: read %s: %w", j.path(seg), err)
		}
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
		if seg < j.first {
			if err := os.Remove(j.path(seg)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("usage journal: %w", err)
			}
		}
	}
	return nil
}

// Append writes rec as one JSON line with one write call.
func (j *Journal) Append(rec *store.UsageRecord) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("usage journal: encode: %w", err)
	}
	j.buf = append(append(j.buf[:0], b...), '\n')
	if _, err := j.f.Write(j.buf); err != nil {
		return fmt.Errorf("usage journal: write: %w", err)
	}
	j.open[j.cur]++
	j.count[j.cur]++
	j.bySeg[rec.RequestID] = j.cur
	if j.count[j.cur] >= j.segSize {
		return j.rotate()
	}
	return nil
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
		} else if j.count[seg] > 0 && j.f.Truncate(0) == nil {
			j.count[seg] = 0
		}
	}
}

// Close closes the current segment and removes it when nothing in it is
// left uncommitted (a clean shutdown leaves an empty directory).
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
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
