package usage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// A frame decodes to the record it was made from, every field included.
func TestJournalFrameRoundTrip(t *testing.T) {
	full := store.UsageRecord{RequestID: "req_0123456789abcdef0123", Time: time.Date(2025, 2, 3, 4, 5, 6, 789, time.UTC),
		AccountID: "acct_1", KeyID: "key_1", Endpoint: "chat.completions", Model: "m", Provider: "p",
		UpstreamModel: "um", Stream: true, PromptTokens: 1 << 40, CompletionTokens: -3, CachedTokens: 5,
		ReasoningTokens: 6, Estimated: true, Cost: 123456789, Latency: 3 * time.Second, TTFT: time.Millisecond,
		Status: 499, ErrorCode: "client_closed"}
	for _, r := range []store.UsageRecord{full, {RequestID: "r"}} {
		b := appendFrame(nil, &r)
		got, err := decodePayload(b[frameHeader:])
		if err != nil || got != r {
			t.Errorf("round trip of %+v = %+v, %v", r, got, err)
		}
	}
}

// Segments an earlier version wrote (JSON lines, .journal) are replayed
// after an upgrade, oldest first, together with binary ones, and cleared.
func TestJournalReplaysLegacySegments(t *testing.T) {
	dir := t.TempDir()
	var lines []byte
	for i := range 3 {
		b, _ := json.Marshal(jrec(i))
		lines = append(append(lines, b...), '\n')
	}
	lines = append(lines, `{"RequestID":"req_cut`...)
	if err := os.WriteFile(filepath.Join(dir, "usage-000000001.journal"), lines, 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJournal(dir) // new process on the old directory: segment 2
	if err != nil {
		t.Fatal(err)
	}
	r := jrec(3)
	if _, err := j.Append(&r); err != nil {
		t.Fatal(err)
	}
	// crash; the next process replays both formats
	j2, err := OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	recs, torn, err := j2.Replay()
	if err != nil || torn != 1 || len(recs) != 4 {
		t.Fatalf("Replay = %d records, torn %d, %v", len(recs), torn, err)
	}
	for i, r := range recs {
		if want := jrec(i); r.RequestID != want.RequestID || r.Cost != want.Cost || !r.Time.Equal(want.Time) {
			t.Errorf("record %d = %+v, want %+v", i, r, want)
		}
	}
	if err := j2.Clear(); err != nil {
		t.Fatal(err)
	}
	_ = j.Close()
	_ = j2.Close()
	if names := listDir(t, dir); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
}

// Concurrent appends (group commit) lose and duplicate nothing, and every
// record is in the file when its Append returns.
func TestJournalConcurrentAppends(t *testing.T) {
	dir := t.TempDir()
	j, err := OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	j.setSegSize(100) // rotate under load
	const workers, each = 16, 200
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		tickets []Ticket
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := jrec(0)
				r.RequestID = fmt.Sprintf("req_%02d_%04d", w, i)
				tk, err := j.Append(&r)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				tickets = append(tickets, tk)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	j.settle()
	j2, err := OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	recs, torn, err := j2.Replay()
	if err != nil || torn != 0 || len(recs) != workers*each {
		t.Fatalf("Replay = %d records, torn %d, %v", len(recs), torn, err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[r.RequestID] {
			t.Fatalf("%s twice", r.RequestID)
		}
		seen[r.RequestID] = true
	}
	j.Committed(tickets)
	if err := errors.Join(j.Close(), j2.Close()); err != nil {
		t.Fatal(err)
	}
	if names := listDir(t, dir); len(names) != 0 {
		t.Errorf("all committed, yet left behind: %v", names)
	}
}
