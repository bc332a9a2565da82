package usage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

func jrec(i int) store.UsageRecord {
	return store.UsageRecord{RequestID: fmt.Sprintf("req_%05d", i), Time: time.Unix(1700000000, 0).UTC(),
		AccountID: "acct_1", Model: "gpt-4o-mini", Cost: 42, PromptTokens: int64(i), Latency: time.Millisecond}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		if e.Name() != lockName { // stays, unlocked, after Close
			names = append(names, e.Name())
		}
	}
	return names
}

// segmentModes are the two kinds of segment region: mapped (the default on
// Linux) and buffered (elsewhere, and where allocating or mapping fails).
var segmentModes = []string{"mapped", "buffered"}

// openJournal opens dir with one lane, whose segments are of the given
// mode, and returns the journal and its lane.
func openJournal(t *testing.T, dir, mode string) (*Journal, *lane) {
	t.Helper()
	j, err := openLanes(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	l := j.lanes[0]
	if mode == "buffered" {
		l.mu.Lock()
		l.newSegment = bufferedSegment
		err = l.rotate()
		l.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	return j, l
}

// settle waits until the segments j made or closed in the background are
// made or closed, as a test must before it reads the directory as the
// next process would.
func (j *Journal) settle() {
	for _, l := range j.lanes {
		l.bg.Wait()
	}
}

// crash stands for j's process dying: the kernel drops its lock on the
// directory, and its files stay as they are for the next process.
func (j *Journal) crash() { _ = j.lock.release() }

// setSegSize sets how many records each of j's lanes puts in a segment.
func (j *Journal) setSegSize(n int) {
	for _, l := range j.lanes {
		l.mu.Lock()
		l.segSize = n
		l.mu.Unlock()
	}
}

// A process that dies leaves its uncommitted records for the next one, and
// only those; committed ones are gone from disk.
func TestJournalReplaysOnlyUncommitted(t *testing.T) {
	for _, mode := range segmentModes {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			j, l := openJournal(t, dir, mode)
			l.segSize = 4 // rotate often
			var tickets []Ticket
			for i := range 10 {
				r := jrec(i)
				tk, err := j.Append(&r)
				if err != nil {
					t.Fatal(err)
				}
				tickets = append(tickets, tk)
			}
			j.Committed(tickets[:6]) // segments 1 (0-3) done, 2 (4-7) half done
			j.Committed(tickets[:4]) // again: ignored, segment 2 stays
			j.settle()
			j.crash() // no Close; a new process opens the same directory
			j2, err := OpenJournal(dir)
			if err != nil {
				t.Fatal(err)
			}
			recs, torn, err := j2.Replay()
			if err != nil || torn != 0 {
				t.Fatalf("Replay: %v torn=%d", err, torn)
			}
			if len(recs) != 6 { // segment 2 is replayed whole (4-7), segment 3 (8-9)
				t.Fatalf("replayed %d records: %+v", len(recs), recs)
			}
			if recs[0].RequestID != "req_00004" || recs[5].RequestID != "req_00009" || recs[5].Cost != 42 || recs[5].PromptTokens != 9 {
				t.Errorf("replayed %+v", recs)
			}
			if err := j2.Clear(); err != nil {
				t.Fatal(err)
			}
			if err := j2.Close(); err != nil {
				t.Fatal(err)
			}
			if names := listDir(t, dir); len(names) != 0 {
				t.Errorf("left behind: %v", names)
			}
		})
	}
}

func TestJournalSkipsTornFrames(t *testing.T) {
	for _, mode := range segmentModes {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			j, l := openJournal(t, dir, mode)
			r, cut := jrec(1), jrec(2)
			_, _ = j.Append(&r)
			frame := appendFrame(nil, &cut)
			copy(l.seg.mem[l.off:], frame[:len(frame)/2]) // killed mid-copy
			if err := l.seg.written(l.off, l.off+len(frame)/2); err != nil {
				t.Fatal(err)
			}
			j.crash()
			j2, _ := OpenJournal(dir)
			recs, torn, err := j2.Replay()
			if err != nil || len(recs) != 1 || torn != 1 {
				t.Errorf("Replay = %d records, torn %d, %v", len(recs), torn, err)
			}
		})
	}
}

func TestJournalEmptiesWhenAllCommitted(t *testing.T) {
	for _, mode := range segmentModes {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			j, l := openJournal(t, dir, mode)
			r := jrec(1)
			tk, _ := j.Append(&r)
			j.Committed([]Ticket{tk})
			if l.off != 0 || l.seg.mem[0] != 0 {
				t.Errorf("segment not emptied: %d bytes of frames, first byte %d", l.off, l.seg.mem[0])
			}
			j.crash()
			j2, _ := OpenJournal(dir)
			if recs, torn, _ := j2.Replay(); len(recs) != 0 || torn != 0 {
				t.Errorf("replayed committed records: %v (torn %d)", recs, torn)
			}
			// Closing cuts a segment file to its frames.
			r2 := jrec(2)
			tk2, _ := j2.Append(&r2)
			path := j2.path(int(tk2))
			_ = j2.Close()
			if fi, err := os.Stat(path); err != nil || fi.Size() != int64(len(appendFrame(nil, &r2))) {
				t.Errorf("closed segment: %v, %v", fi, err)
			}
		})
	}
}

// Once a segment is half full the next one is made in the background, so
// the rotation takes it rather than making one under the lock; the old
// segment is closed and, all its records committed, removed in the
// background; segments are used in the order of their numbers, and Close
// removes an unused spare.
func TestJournalMakesNextSegmentAhead(t *testing.T) {
	for _, mode := range segmentModes {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			j, l := openJournal(t, dir, mode)
			l.segSize = 8
			first := l.cur
			var tickets []Ticket
			appendN := func(n int) {
				for range n {
					r := jrec(len(tickets))
					tk, err := j.Append(&r)
					if err != nil {
						t.Fatal(err)
					}
					tickets = append(tickets, tk)
				}
			}
			appendN(3)
			j.settle()
			if l.spare != nil {
				t.Fatalf("spare made at 3 of 8 records")
			}
			appendN(1) // half full
			j.settle()
			if l.spare == nil || l.spare.n != first+1 {
				t.Fatalf("no spare after half a segment: %+v", l.spare)
			}
			spare := l.spare
			appendN(5) // the 9th record rotates
			if l.cur != spare.n || l.spare != nil {
				t.Fatalf("rotated to segment %d, spare %+v; want the spare %d", l.cur, l.spare, spare.n)
			}
			j.Committed(tickets[:8])
			j.settle()
			if names := listDir(t, dir); len(names) != 1 {
				t.Errorf("the first segment, all committed, is not gone: %v", names)
			}
			appendN(4) // half of the second: a spare again
			j.settle()
			if l.spare == nil || l.spare.n <= l.cur {
				t.Fatalf("spare %+v after segment %d", l.spare, l.cur)
			}
			if ts := tickets[len(tickets)-5:]; slices.ContainsFunc(ts, func(tk Ticket) bool { return tk != Ticket(spare.n) }) {
				t.Errorf("tickets %v, want all %d", ts, spare.n)
			}
			j.Committed(tickets[8:])
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if names := listDir(t, dir); len(names) != 0 {
				t.Errorf("closed with everything committed, yet left behind: %v", names)
			}
		})
	}
}

// A spare that rotate could not wait for (a burst filled the segment
// while the spare was being made) is discarded when it arrives: the
// segment made in its place has a later number, and segments are used in
// the order of their numbers.
func TestJournalDiscardsLateSpare(t *testing.T) {
	dir := t.TempDir()
	j, l := openJournal(t, dir, "mapped")
	l.segSize = 4
	release := make(chan struct{})
	slow := l.newSegment
	l.mu.Lock()
	l.newSegment = func(f *os.File, size int) (*region, error) {
		<-release
		return slow(f, size)
	}
	l.mu.Unlock()
	for i := range 2 { // half full: the maker starts and waits on release
		r := jrec(i)
		if _, err := j.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	l.mu.Lock()
	l.newSegment = slow
	l.mu.Unlock()
	var last Ticket
	for i := 2; i < 5; i++ { // the 5th rotates without the spare
		r := jrec(i)
		tk, err := j.Append(&r)
		if err != nil {
			t.Fatal(err)
		}
		last = tk
	}
	close(release)
	j.settle()
	if l.spare != nil || int(last) != l.cur || l.cur != 3 {
		t.Fatalf("current %d (last ticket %d), spare %+v; want 3 and no spare", l.cur, last, l.spare)
	}
	if names := listDir(t, dir); !slices.Equal(names, []string{"usage-000000001.jbin", "usage-000000003.jbin"}) {
		t.Errorf("segment files %v, want 1 and 3 (the late spare 2 discarded)", names)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// Lane i of n writes the segments numbered i modulo n, all after the
// segments on disk; an Append takes a free lane when others are busy, and
// Committed finds a ticket's lane by its number.
func TestJournalLanes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "usage-000000006.jbin"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := openLanes(dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	var curs []int
	for _, l := range j.lanes {
		curs = append(curs, l.cur)
	}
	if want := []int{8, 9, 10, 7}; !slices.Equal(curs, want) || j.first != 7 {
		t.Fatalf("lanes start at segments %v (first %d), want %v (first 7)", curs, j.first, want)
	}
	for _, l := range j.lanes[1:] {
		l.mu.Lock() // busy: every Append must take lane 0
	}
	var tickets []Ticket
	for i := range 5 {
		r := jrec(i)
		tk, err := j.Append(&r)
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	for _, l := range j.lanes[1:] {
		l.mu.Unlock()
	}
	if slices.ContainsFunc(tickets, func(tk Ticket) bool { return tk != 8 }) {
		t.Fatalf("tickets %v, want all 8 (lane 0)", tickets)
	}
	j.lanes[0].mu.Lock() // lane 0 busy: the next free one, lane 1, takes it
	r := jrec(5)
	tk, err := j.Append(&r)
	j.lanes[0].mu.Unlock()
	if err != nil || tk != 9 {
		t.Fatalf("with lane 0 busy, Append = %d, %v; want 9 (lane 1)", tk, err)
	}
	j.Committed(append(tickets, 0, 10)) // the zero ticket and an empty lane's: ignored
	if l := j.lanes[0]; l.off != 0 || l.count[8] != 0 {
		t.Errorf("lane 0 not emptied once its records were committed: %d bytes, %d records", l.off, l.count[8])
	}
	if l := j.lanes[1]; l.off == 0 || l.open[9] != 1 {
		t.Errorf("lane 1 emptied with its record not committed: %d bytes, %d open", l.off, l.open[9])
	}
	j.Committed([]Ticket{tk})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if names := listDir(t, dir); !slices.Equal(names, []string{"usage-000000006.jbin"}) {
		t.Errorf("after Close: %v, want only the earlier process's segment", names)
	}
}

// When making the spare fails (a full disk), the lane does not try again
// after every record but at the next rotation, which makes one itself
// and reports its error through Append.
func TestJournalSpareFailureWaitsForRotation(t *testing.T) {
	dir := t.TempDir()
	j, l := openJournal(t, dir, "mapped")
	l.segSize = 8
	var tries atomic.Int32
	full := errors.New("no space left on device")
	l.mu.Lock()
	l.newSegment = func(*os.File, int) (*region, error) { tries.Add(1); return nil, full }
	l.mu.Unlock()
	for i := range 8 {
		r := jrec(i)
		if _, err := j.Append(&r); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		j.settle()
	}
	if n := tries.Load(); n != 1 {
		t.Errorf("%d tries to make a spare over records 4-8 of a segment, want 1", n)
	}
	r := jrec(8) // the 9th rotates: no spare, and making one fails
	if _, err := j.Append(&r); !errors.Is(err, full) {
		t.Errorf("Append at the rotation = %v, want the segment's error", err)
	}
	if n := tries.Load(); n != 2 {
		t.Errorf("%d tries after the rotation, want 2", n)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}
