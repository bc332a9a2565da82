package usage

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// A frame decodes to the record it was made from, every field included,
// attempts too; a record without attempts decodes with nil Attempts.
func TestJournalFrameRoundTrip(t *testing.T) {
	full := store.UsageRecord{RequestID: "req_0123456789abcdef0123", Time: time.Date(2025, 2, 3, 4, 5, 6, 789, time.UTC),
		AccountID: "acct_1", KeyID: "key_1", Endpoint: "chat.completions", Model: "m", Provider: "p",
		UpstreamModel: "um", Stream: true, PromptTokens: 1 << 40, CompletionTokens: -3, CachedTokens: 5,
		ReasoningTokens: 6, Estimated: true, Cost: 123456789, Latency: 3 * time.Second, TTFT: time.Millisecond,
		Status: 499, ErrorCode: "client_closed"}
	tried := full
	tried.Attempts = []store.Attempt{
		{Provider: "openai-eu", Status: 0, Error: "dial tcp: connection refused", Duration: 3 * time.Millisecond},
		{Provider: "openai-us", Status: 503, Error: "upstream 503: overloaded", Duration: -1},
		{Provider: "p", Status: 200, Duration: 2*time.Second + 7},
	}
	failedOnce := store.UsageRecord{RequestID: "r1", Provider: "p", Status: 502,
		Attempts: []store.Attempt{{Provider: "p", Status: 502, Error: "bad gateway", Duration: time.Second}}}
	emptyStrings := store.UsageRecord{RequestID: "r2", Attempts: []store.Attempt{{}}}
	for _, r := range []store.UsageRecord{full, {RequestID: "r"}, tried, failedOnce, emptyStrings} {
		b := appendFrame(nil, &r)
		got, err := decodePayload(b[frameHeader:])
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Errorf("round trip of %+v = %+v, %v", r, got, err)
		}
	}
	// An empty, non-nil Attempts is written as none: not a byte more.
	empty := full
	empty.Attempts = []store.Attempt{}
	b := appendFrame(nil, &empty)
	if want := appendFrame(nil, &full); !bytes.Equal(b, want) {
		t.Errorf("frame with empty Attempts differs from one without:\n%x\n%x", b, want)
	}
	if got, err := decodePayload(b[frameHeader:]); err != nil || got.Attempts != nil {
		t.Errorf("empty Attempts read back as %#v, %v", got.Attempts, err)
	}
}

// oldPayload is a frame's payload as the version before attempts wrote it
// (the record in TestJournalDecodesOldFrame).
const oldPayload = "01077265715f6f6c64e48182fa0c950606616363745f31056b65795f3110636861742e636f6d706c6574696f6e73016d01" +
	"7002756d011428000001a41380f882ad1600ec070e757073747265616d5f6572726f72"

// Frames written before attempts existed decode as they did, with nil
// Attempts, and a record without attempts is still written as they were.
func TestJournalDecodesOldFrame(t *testing.T) {
	p, err := hex.DecodeString(oldPayload)
	if err != nil {
		t.Fatal(err)
	}
	want := store.UsageRecord{RequestID: "req_old", Time: time.Date(2025, 2, 3, 4, 5, 6, 789, time.UTC),
		AccountID: "acct_1", KeyID: "key_1", Endpoint: "chat.completions", Model: "m", Provider: "p",
		UpstreamModel: "um", Stream: true, PromptTokens: 10, CompletionTokens: 20, Estimated: true,
		Cost: 1234, Latency: 3 * time.Second, Status: 502, ErrorCode: "upstream_error"}
	got, err := decodePayload(p)
	if err != nil || !reflect.DeepEqual(got, want) || got.Attempts != nil {
		t.Errorf("old payload = %+v, %v; want %+v", got, err, want)
	}
	if b := appendFrame(nil, &want); !bytes.Equal(b[frameHeader:], p) {
		t.Errorf("record without attempts written as\n%x, want\n%x", b[frameHeader:], p)
	}
}

// Attempts that are cut short or garbage make the frame bad: decoding
// fails, and in a segment it ends the readable part as one torn record.
func TestJournalBadAttempts(t *testing.T) {
	base := jrec(1)
	one := base
	one.Attempts = []store.Attempt{{Provider: "p", Status: 500, Error: "boom", Duration: time.Second}}
	plain := appendFrame(nil, &base)[frameHeader:]
	withOne := appendFrame(nil, &one)[frameHeader:]
	extra := func(tail ...byte) []byte { return append(slices.Clip(plain), tail...) }
	cases := map[string][]byte{
		"count zero":            extra(0),
		"count without attempt": extra(1),
		"count past the data":   extra(2, 1, 'p', 0, 0, 0),
		"huge count":            extra(binary.AppendUvarint(nil, 1<<62)...),
		"bad count varint":      extra(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
		"attempt cut short":     withOne[:len(withOne)-1],
		"provider past the end": extra(1, 9, 'p', 0, 0),
		"bytes after attempts":  append(slices.Clip(withOne), 0),
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			if r, err := decodePayload(p); err == nil {
				t.Fatalf("decoded %+v", r)
			}
			// The same payload in a frame with a good checksum, after a good frame.
			seg := appendFrame(nil, &base)
			frame := binary.LittleEndian.AppendUint32(nil, uint32(len(p)))
			frame = binary.LittleEndian.AppendUint32(frame, crc32.Checksum(p, crcTable))
			seg = append(append(seg, frame...), p...)
			path := filepath.Join(t.TempDir(), "seg")
			if err := os.WriteFile(path, seg, 0o600); err != nil {
				t.Fatal(err)
			}
			recs, torn, err := readFrames(path)
			if err != nil || len(recs) != 1 || torn != 1 {
				t.Errorf("readFrames = %d records, torn %d, %v", len(recs), torn, err)
			}
		})
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
	j.crash() // the next process replays both formats
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
	j.crash()
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
