package usage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestConcurrentRecordsWrittenExactlyOnce(t *testing.T) {
	tests := []struct {
		name string
		opt  Options
	}{
		{"defaults", Options{}},
		{"small buffer backpressure", Options{BatchSize: 7, Buffer: 3, FlushInterval: time.Millisecond}},
		{"batch of one", Options{BatchSize: 1, Buffer: 1}},
		// Only a full buffer wakes the flusher here: the interval never fires.
		{"buffer smaller than a batch", Options{BatchSize: 64, Buffer: 5, FlushInterval: time.Hour}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &fakeWriter{}
			tc.opt.Logger, _ = newLogger()
			r := New(w, tc.opt)
			runErr := startRun(t.Context(), r)

			ids := recordConcurrently(r, 50, 100)
			if err := r.Close(closeCtx(t, hangGuard)); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := waitRun(t, runErr); err != nil {
				t.Fatalf("Run: %v", err)
			}
			_, batches := w.snapshot()
			assertExactlyOnce(t, batches, ids, r.opt.BatchSize)
		})
	}
}

func TestBatchesRespectBatchSize(t *testing.T) {
	tests := []struct {
		batchSize, full, rest int // records = full*batchSize + rest
	}{
		{batchSize: 1, full: 20, rest: 0},
		{batchSize: 10, full: 7, rest: 3},
		{batchSize: 256, full: 3, rest: 255},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("batch size %d", tc.batchSize), func(t *testing.T) {
			w := &fakeWriter{}
			log, _ := newLogger()
			// The interval never fires, so only a full batch triggers a write.
			r := New(w, Options{BatchSize: tc.batchSize, FlushInterval: time.Hour, Logger: log})
			runErr := startRun(t.Context(), r)

			var ids []string
			for i := range tc.full*tc.batchSize + tc.rest {
				id := fmt.Sprintf("req-%05d", i)
				ids = append(ids, id)
				r.Record(rec(id))
			}
			w.waitWritten(t, tc.full*tc.batchSize)
			_, before := w.snapshot()
			if len(before) != tc.full {
				t.Fatalf("%d batches written before Close, want %d", len(before), tc.full)
			}
			for i, b := range before {
				if len(b) != tc.batchSize {
					t.Errorf("batch %d has %d records, want exactly %d", i, len(b), tc.batchSize)
				}
			}

			if err := r.Close(closeCtx(t, hangGuard)); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := waitRun(t, runErr); err != nil {
				t.Fatalf("Run: %v", err)
			}
			_, all := w.snapshot()
			assertExactlyOnce(t, all, ids, tc.batchSize)
			if tc.rest > 0 && len(all[len(all)-1]) != tc.rest {
				t.Errorf("last batch has %d records, want the %d left over", len(all[len(all)-1]), tc.rest)
			}
		})
	}
}

func TestIntervalFlushWithoutFullBatch(t *testing.T) {
	w := &fakeWriter{}
	log, _ := newLogger()
	r := New(w, Options{BatchSize: 1000, FlushInterval: 5 * time.Millisecond, Logger: log})
	runErr := startRun(t.Context(), r)

	ids := []string{"req-1", "req-2", "req-3"}
	for _, id := range ids {
		r.Record(rec(id))
	}
	w.waitWritten(t, len(ids)) // no Close yet: only the interval can flush
	_, batches := w.snapshot()
	assertExactlyOnce(t, batches, ids, 1000)

	if err := r.Close(closeCtx(t, hangGuard)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := waitRun(t, runErr); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestFailingWriterGetsEveryRecordEventually(t *testing.T) {
	for _, failFirst := range []int{1, 3, 10} {
		t.Run(fmt.Sprintf("fails %d times", failFirst), func(t *testing.T) {
			w := &fakeWriter{failFirst: failFirst}
			log, logs := newLogger()
			r := New(w, Options{
				BatchSize: 10, Buffer: 16, FlushInterval: time.Millisecond,
				RetryBackoff: time.Millisecond, MaxRetryBackoff: 4 * time.Millisecond, Logger: log,
			})
			runErr := startRun(t.Context(), r)

			ids := recordConcurrently(r, 5, 40)
			if err := r.Close(closeCtx(t, hangGuard)); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := waitRun(t, runErr); err != nil {
				t.Fatalf("Run: %v", err)
			}
			calls, batches := w.snapshot()
			assertExactlyOnce(t, batches, ids, 10)
			if want := failFirst + len(batches); calls != want {
				t.Errorf("%d InsertUsage calls, want %d failures + %d batches", calls, failFirst, len(batches))
			}
			// A batch is appended first; only its retries insert (and
			// skip what a failed attempt may have stored).
			want := []string{"append"}
			for range failFirst {
				want = append(want, "insert")
			}
			for range len(batches) - 1 {
				want = append(want, "append")
			}
			w.mu.Lock()
			methods := slices.Clone(w.methods)
			w.mu.Unlock()
			if !slices.Equal(methods, want) {
				t.Errorf("writer calls %v, want %v", methods, want)
			}
			warnings := 0
			for _, e := range logs.entries(t) {
				if e.Level == "WARN" {
					warnings++
				}
				if e.Level == "ERROR" {
					t.Errorf("unexpected error log: %+v", e)
				}
			}
			if warnings != failFirst {
				t.Errorf("%d retry warnings logged, want %d", warnings, failFirst)
			}
		})
	}
}

func TestCloseGivesUpAndLogsUnwrittenRecords(t *testing.T) {
	tests := []struct {
		name string
		opt  Options
	}{
		{"all buffered", Options{BatchSize: 8, Buffer: 1024}},
		// A tiny buffer leaves Record calls blocked when Close gives up.
		{"blocked recorders", Options{BatchSize: 2, Buffer: 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &fakeWriter{failAlways: true}
			log, logs := newLogger()
			tc.opt.Logger = log
			tc.opt.FlushInterval = time.Millisecond
			tc.opt.RetryBackoff = time.Millisecond
			tc.opt.MaxRetryBackoff = 10 * time.Millisecond
			r := New(w, tc.opt)
			runErr := startRun(t.Context(), r)

			idsc := make(chan []string, 1)
			go func() { idsc <- recordConcurrently(r, 5, 20) }()
			var ids []string
			if tc.opt.Buffer >= 100 {
				ids = <-idsc // everything fits: close only once all are recorded
			} else {
				waitFull(t, r) // the writer is stuck: Record calls start to block
			}

			const deadline = 100 * time.Millisecond
			closeErr := make(chan error, 1)
			start := time.Now()
			go func() { closeErr <- r.Close(closeCtx(t, deadline)) }()
			var err error
			select {
			case err = <-closeErr:
			case <-time.After(hangGuard):
				t.Fatalf("Close with an always-failing writer did not return within %v", hangGuard)
			}
			t.Logf("Close returned after %v (deadline %v): %v", time.Since(start), deadline, err)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Close: got %v, want an error wrapping context.DeadlineExceeded", err)
			}
			if err := waitRun(t, runErr); err == nil {
				t.Errorf("Run returned nil although records were not written")
			}
			if ids == nil {
				select {
				case ids = <-idsc:
				case <-time.After(hangGuard):
					t.Fatalf("Record calls still blocked %v after Close returned", hangGuard)
				}
			}

			t.Logf("%d records given up on after Close was called", r.lost.Load())
			if _, batches := w.snapshot(); len(batches) != 0 {
				t.Fatalf("always-failing writer stored %d batches", len(batches))
			}
			logged := map[string]int{}
			for _, e := range logs.entries(t) {
				if e.Level == "ERROR" && e.Record != nil {
					if e.Record.RequestID != e.RequestID || e.Record.Model != "gpt-4o-mini" {
						t.Errorf("logged record does not round-trip as JSON: %+v", e)
					}
					logged[e.RequestID]++
				}
			}
			for _, id := range ids {
				if logged[id] != 1 {
					t.Errorf("record %s logged %d times at ERROR, want 1", id, logged[id])
				}
			}
			if len(logged) != len(ids) {
				t.Errorf("%d distinct records logged, want %d", len(logged), len(ids))
			}
		})
	}
}

func TestRecordAfterCloseIsLoggedNotWritten(t *testing.T) {
	w := &fakeWriter{}
	log, logs := newLogger()
	r := New(w, Options{Logger: log})
	runErr := startRun(t.Context(), r)
	r.Record(rec("before"))
	if err := r.Close(closeCtx(t, hangGuard)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := waitRun(t, runErr); err != nil {
		t.Fatalf("Run: %v", err)
	}
	r.Record(rec("after")) // must not panic
	if err := r.Close(closeCtx(t, hangGuard)); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	_, batches := w.snapshot()
	assertExactlyOnce(t, batches, []string{"before"}, r.opt.BatchSize)
	found := false
	for _, e := range logs.entries(t) {
		if e.Level == "ERROR" && e.RequestID == "after" && e.Record != nil {
			found = true
		}
	}
	if !found {
		t.Errorf("record after Close was not logged at ERROR")
	}
}

func TestCloseWithoutRunFlushes(t *testing.T) {
	w := &fakeWriter{}
	log, _ := newLogger()
	r := New(w, Options{Logger: log})
	ids := recordConcurrently(r, 4, 25)
	if err := r.Close(closeCtx(t, hangGuard)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, batches := w.snapshot()
	assertExactlyOnce(t, batches, ids, r.opt.BatchSize)
	// A late Run just reports the flusher's result.
	if err := waitRun(t, startRun(t.Context(), r)); err != nil {
		t.Fatalf("Run after Close: %v", err)
	}
}

func TestRunKeepsFlushingAfterContextEndsUntilClose(t *testing.T) {
	w := &fakeWriter{}
	log, _ := newLogger()
	r := New(w, Options{BatchSize: 100, FlushInterval: time.Millisecond, Logger: log})
	ctx, cancel := context.WithCancel(t.Context())
	runErr := startRun(ctx, r)

	r.Record(rec("before-cancel"))
	cancel()
	// Records still arrive while the server drains its requests; that they
	// get written proves the flusher still runs.
	r.Record(rec("after-cancel"))
	w.waitWritten(t, 2)
	select {
	case err := <-runErr:
		t.Fatalf("Run returned before Close: %v", err)
	default:
	}
	r.Record(rec("just-before-close"))
	if err := r.Close(closeCtx(t, hangGuard)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := waitRun(t, runErr); err != nil {
		t.Fatalf("Run: %v", err)
	}
	_, batches := w.snapshot()
	assertExactlyOnce(t, batches, []string{"before-cancel", "after-cancel", "just-before-close"}, 100)
}

// The Recorder hands each stored batch's journal tickets back, so what is
// stored leaves the journal (segments deleted, the current one emptied)
// and what is not stays for the next process's Replay; over many segments
// and concurrent Records, with retried and with never-stored batches.
func TestRecorderCommitsToJournal(t *testing.T) {
	tests := []struct {
		name       string
		w          *fakeWriter
		closeAfter time.Duration
		replayed   int // records a new process finds
	}{
		{"all stored", &fakeWriter{}, hangGuard, 0},
		{"stored after retries", &fakeWriter{failFirst: 3}, hangGuard, 0},
		{"never stored", &fakeWriter{failAlways: true}, 50 * time.Millisecond, 20 * 25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j, err := OpenJournal(dir)
			if err != nil {
				t.Fatal(err)
			}
			j.setSegSize(16) // ~30 segments
			log, _ := newLogger()
			r := New(tc.w, Options{BatchSize: 37, FlushInterval: time.Millisecond,
				RetryBackoff: time.Millisecond, Journal: j, Logger: log})
			runErr := startRun(t.Context(), r)
			recordConcurrently(r, 20, 25)
			closeErr := r.Close(closeCtx(t, tc.closeAfter))
			_ = waitRun(t, runErr)
			if (closeErr != nil) != (tc.replayed > 0) {
				t.Fatalf("Close: %v", closeErr)
			}
			j.settle()
			j.crash()
			j2, err := OpenJournal(dir) // the next process
			if err != nil {
				t.Fatal(err)
			}
			recs, torn, err := j2.Replay()
			if err != nil || torn != 0 || len(recs) != tc.replayed {
				t.Fatalf("Replay = %d records, torn %d, %v; want %d", len(recs), torn, err, tc.replayed)
			}
			if err := errors.Join(j.Close(), j2.Clear(), j2.Close()); err != nil {
				t.Fatal(err)
			}
			if names := listDir(t, dir); len(names) != 0 {
				t.Errorf("left behind: %v", names)
			}
		})
	}
}
