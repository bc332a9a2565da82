package usage

import (
	"fmt"
	"os"
	"slices"
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
		names = append(names, e.Name())
	}
	return names
}

// segmentModes are the two kinds of segment region: mapped (the default on
// Linux) and buffered (elsewhere, and where allocating or mapping fails).
var segmentModes = []string{"mapped", "buffered"}

// openJournal opens dir with segments of the given mode.
func openJournal(t *testing.T, dir, mode string) *Journal {
	t.Helper()
	j, err := OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if mode == "buffered" {
		j.mu.Lock()
		j.newSegment = bufferedSegment
		err = j.rotate()
		j.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	return j
}

// settle waits until the segments j made or closed in the background are
// made or closed, as a test must before it reads the directory as the
// next process would.
func (j *Journal) settle() { j.bg.Wait() }

// A process that dies leaves its uncommitted records for the next one, and
// only those; committed ones are gone from disk.
func TestJournalReplaysOnlyUncommitted(t *testing.T) {
	for _, mode := range segmentModes {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			j := openJournal(t, dir, mode)
			j.segSize = 4 // rotate often
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
			// "Crash": no Close. A new process opens the same directory.
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
			j := openJournal(t, dir, mode)
			r, cut := jrec(1), jrec(2)
			_, _ = j.Append(&r)
			frame := appendFrame(nil, &cut)
			copy(j.seg.mem[j.off:], frame[:len(frame)/2]) // killed mid-copy
			if err := j.seg.written(j.off, j.off+len(frame)/2); err != nil {
				t.Fatal(err)
			}
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
			j := openJournal(t, dir, mode)
			r := jrec(1)
			tk, _ := j.Append(&r)
			j.Committed([]Ticket{tk})
			if j.off != 0 || j.seg.mem[0] != 0 {
				t.Errorf("segment not emptied: %d bytes of frames, first byte %d", j.off, j.seg.mem[0])
			}
			j2, _ := OpenJournal(dir)
			if recs, torn, _ := j2.Replay(); len(recs) != 0 || torn != 0 {
				t.Errorf("replayed committed records: %v (torn %d)", recs, torn)
			}
			// Closing cuts a segment file to its frames.
			r2 := jrec(2)
			_, _ = j2.Append(&r2)
			path := j2.path(j2.cur)
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
			j := openJournal(t, dir, mode)
			j.segSize = 8
			first := j.cur
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
			if j.spare != nil {
				t.Fatalf("spare made at 3 of 8 records")
			}
			appendN(1) // half full
			j.settle()
			if j.spare == nil || j.spare.n != first+1 {
				t.Fatalf("no spare after half a segment: %+v", j.spare)
			}
			spare := j.spare
			appendN(5) // the 9th record rotates
			if j.cur != spare.n || j.spare != nil {
				t.Fatalf("rotated to segment %d, spare %+v; want the spare %d", j.cur, j.spare, spare.n)
			}
			j.Committed(tickets[:8])
			j.settle()
			if names := listDir(t, dir); len(names) != 1 {
				t.Errorf("the first segment, all committed, is not gone: %v", names)
			}
			appendN(4) // half of the second: a spare again
			j.settle()
			if j.spare == nil || j.spare.n <= j.cur {
				t.Fatalf("spare %+v after segment %d", j.spare, j.cur)
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
	j := openJournal(t, dir, "mapped")
	j.segSize = 4
	release := make(chan struct{})
	slow := j.newSegment
	j.mu.Lock()
	j.newSegment = func(f *os.File, size int) (*region, error) {
		<-release
		return slow(f, size)
	}
	j.mu.Unlock()
	for i := range 2 { // half full: the maker starts and waits on release
		r := jrec(i)
		if _, err := j.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	j.mu.Lock()
	j.newSegment = slow
	j.mu.Unlock()
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
	if j.spare != nil || int(last) != j.cur || j.cur != 3 {
		t.Fatalf("current %d (last ticket %d), spare %+v; want 3 and no spare", j.cur, last, j.spare)
	}
	if names := listDir(t, dir); !slices.Equal(names, []string{"usage-000000001.jbin", "usage-000000003.jbin"}) {
		t.Errorf("segment files %v, want 1 and 3 (the late spare 2 discarded)", names)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}
