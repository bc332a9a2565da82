package usage

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// hangGuard bounds waits that should end quickly; it only catches hangs.
const hangGuard = time.Minute

// errFake is what fakeWriter returns when told to fail.
var errFake = errors.New("fake writer: failing as told")

// fakeWriter is an in-memory Writer that can fail its first calls, or all.
type fakeWriter struct {
	mu         sync.Mutex
	failFirst  int  // fail this many calls before succeeding
	failAlways bool // fail every call
	calls      int
	methods    []string              // "append" or "insert", per call
	batches    [][]store.UsageRecord // copies of the batches written
	written    int
}

func (w *fakeWriter) AppendUsage(ctx context.Context, recs []store.UsageRecord) error {
	return w.write(ctx, "append", recs)
}

func (w *fakeWriter) InsertUsage(ctx context.Context, recs []store.UsageRecord) error {
	return w.write(ctx, "insert", recs)
}

func (w *fakeWriter) write(ctx context.Context, method string, recs []store.UsageRecord) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	w.methods = append(w.methods, method)
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.failAlways || w.calls <= w.failFirst {
		return errFake
	}
	w.batches = append(w.batches, slices.Clone(recs))
	w.written += len(recs)
	return nil
}

// snapshot returns the calls made and copies of the batches written so far.
func (w *fakeWriter) snapshot() (calls int, batches [][]store.UsageRecord) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls, slices.Clone(w.batches)
}

// waitWritten polls until at least n records were written; it fails the
// test only if that takes longer than hangGuard.
func (w *fakeWriter) waitWritten(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		w.mu.Lock()
		got := w.written
		w.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d records written after %v", got, n, hangGuard)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitFull polls until r's channel is full; it fails the test only if that
// takes longer than hangGuard.
func waitFull(t *testing.T, r *Recorder) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for len(r.ch) < cap(r.ch) {
		if time.Now().After(deadline) {
			t.Fatalf("buffer not full after %v", hangGuard)
		}
		time.Sleep(time.Millisecond)
	}
}

// logBuffer collects JSON log lines; safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// logEntry is the part of a JSON log line the tests look at.
type logEntry struct {
	Level     string             `json:"level"`
	Msg       string             `json:"msg"`
	RequestID string             `json:"request_id"`
	Record    *store.UsageRecord `json:"record"`
}

// entries parses every line logged so far.
func (b *logBuffer) entries(t *testing.T) []logEntry {
	t.Helper()
	b.mu.Lock()
	data := slices.Clone(b.buf.Bytes())
	b.mu.Unlock()
	var out []logEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e logEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// newLogger returns a logger writing JSON lines at every level to a buffer.
func newLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// rec returns a record with a recognisable ID and some non-zero fields.
func rec(id string) store.UsageRecord {
	return store.UsageRecord{
		RequestID: id,
		Time:      time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		AccountID: "acct_1",
		KeyID:     "key_1",
		Model:     "gpt-4o-mini",
		Status:    200,
		Latency:   1500 * time.Microsecond,
	}
}

// recordConcurrently records perG records from each of g goroutines and
// returns all the IDs recorded.
func recordConcurrently(r *Recorder, g, perG int) []string {
	var wg sync.WaitGroup
	for i := range g {
		wg.Go(func() {
			for j := range perG {
				r.Record(rec(fmt.Sprintf("req-%02d-%04d", i, j)))
			}
		})
	}
	wg.Wait()
	ids := make([]string, 0, g*perG)
	for i := range g {
		for j := range perG {
			ids = append(ids, fmt.Sprintf("req-%02d-%04d", i, j))
		}
	}
	return ids
}

// startRun runs r.Run(ctx) in a goroutine and returns its result channel.
func startRun(ctx context.Context, r *Recorder) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- r.Run(ctx) }()
	return errc
}

// waitRun waits for Run's result, failing the test after hangGuard.
func waitRun(t *testing.T, errc <-chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(hangGuard):
		t.Fatalf("Run did not return within %v", hangGuard)
		return nil
	}
}

// closeCtx returns a context for Close with a deadline of d.
func closeCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}

// assertExactlyOnce checks that the batches hold every id exactly once and
// nothing else, and that no batch exceeds batchSize.
func assertExactlyOnce(t *testing.T, batches [][]store.UsageRecord, ids []string, batchSize int) {
	t.Helper()
	seen := make(map[string]int, len(ids))
	for i, b := range batches {
		if len(b) == 0 || len(b) > batchSize {
			t.Errorf("batch %d has %d records, want 1..%d", i, len(b), batchSize)
		}
		for _, r := range b {
			seen[r.RequestID]++
		}
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("record %s written %d times, want 1", id, seen[id])
		}
		delete(seen, id)
	}
	for id, n := range seen {
		t.Errorf("unexpected record %s written %d times", id, n)
	}
}
