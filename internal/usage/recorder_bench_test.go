package usage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/server"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/sqlstore"
)

// The benchmarks below measure what persisting usage records costs: the
// whole Recorder path (journal + queue + batched inserts with charges)
// against the real SQLite store, and its two halves alone. Each reports
// cpu-µs/rec, the process CPU time (user + system, every thread: the
// SQLite driver is pure Go and runs in-process) per record, and rec/s.
//
//	go test -run '^$' -bench . -benchtime 20000x ./internal/usage/

// tenants are the funded accounts and their keys a benchmark's records
// are spread over, each record to a key drawn at random. ids[k] is key k's
// account and key id, built once: the gateway's records carry strings its
// key lookup already holds, so a benchmark of persisting records should
// not pay to format them.
type tenants struct {
	accounts, keys int
	ids            [][2]string
}

func newTenants(accounts, keys int) tenants {
	t := tenants{accounts: accounts, keys: keys, ids: make([][2]string, keys)}
	for k := range keys {
		t.ids[k] = [2]string{benchAccount(k % accounts), benchKey(k)}
	}
	return t
}

var (
	// fewTenants is the default: 8 accounts with 4 keys each, so a batch
	// of 1024 holds 8 accounts and 32 keys.
	fewTenants = newTenants(8, 32)
	// manyTenants is a reseller's gateway: 256 accounts with 4 keys
	// each, so a batch of 1024 holds ~250 accounts and ~650 keys, and
	// what the store writes per account and key (a block, a balance, a
	// key's spent, rollup rows) is paid for every few records.
	manyTenants = newTenants(256, 1024)
)

// cpuTime is the CPU time this process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// meter measures CPU and wall time from start to report.
type meter struct {
	cpu  time.Duration
	wall time.Time
}

func startMeter(b *testing.B) meter {
	b.ResetTimer()
	return meter{cpu: cpuTime(), wall: time.Now()}
}

func (m meter) report(b *testing.B, records int) {
	b.StopTimer()
	cpu, wall := cpuTime()-m.cpu, time.Since(m.wall)
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(records), "cpu-µs/rec")
	b.ReportMetric(float64(records)/wall.Seconds(), "rec/s")
	b.ReportMetric(0, "ns/op") // meaningless when an op is not one record
}

// benchStore opens a fresh SQLite store with the accounts and keys of t,
// as the gateway's would be.
func benchStore(b *testing.B, t tenants) *sqlstore.Store {
	b.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(b.TempDir(), "modelgate.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	now := time.Now().UTC()
	for a := range t.accounts {
		if err := st.CreateAccount(ctx, store.Account{ID: benchAccount(a), Name: fmt.Sprintf("team-%d", a), CreatedAt: now}); err != nil {
			b.Fatal(err)
		}
	}
	for k := range t.keys {
		hash := make([]byte, 32)
		hash[0], hash[1], hash[2] = byte(k), byte(k>>8), 0xaa
		key := store.Key{ID: t.ids[k][1], AccountID: t.ids[k][0], Prefix: fmt.Sprintf("sk-%04d", k),
			Hash: hash, CreatedAt: now, Name: "bench"}
		if err := st.CreateKey(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
	return st
}

func benchAccount(a int) string { return fmt.Sprintf("acct_%016x", a+1) }
func benchKey(k int) string     { return fmt.Sprintf("key_%016x", k+1) }

// benchRecord is a finished chat completion like internal/app records: a
// 24-character "req_" id, an account and key, a non-zero cost (so a charge
// is posted) and realistic token counts and timings.
func benchRecord(rng *rand.Rand, t tenants) store.UsageRecord {
	k := rng.IntN(t.keys)
	prompt, completion := int64(200+rng.IntN(3000)), int64(20+rng.IntN(800))
	now := time.Now()
	return store.UsageRecord{
		RequestID: server.NewRequestID(now), Time: now.UTC(), // time-ordered, as the gateway's
		AccountID: t.ids[k][0], KeyID: t.ids[k][1],
		Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "openai", UpstreamModel: "gpt-4o-mini-2024-07-18",
		Stream: rng.IntN(2) == 0, PromptTokens: prompt, CompletionTokens: completion, CachedTokens: prompt / 4,
		Cost: money.Micros(1 + prompt*150/1000 + completion*600/1000), Latency: time.Duration(300+rng.IntN(4000)) * time.Millisecond,
		TTFT: time.Duration(100+rng.IntN(400)) * time.Millisecond, Status: 200,
	}
}

// BenchmarkRecorder is the whole path: 32 goroutines per CPU call Record
// (journal on) while the flusher writes batches of BatchSize; the clock
// stops once Close has stored everything. The records go to fewTenants,
// and at the old (1024) and the current default batch size also to
// manyTenants ("batch=8192/accounts=256"). Records arrive faster here than
// any gateway sends them, so every batch is full: in the gateway a batch is
// what arrived within FlushInterval, or BatchSize if that comes first.
func BenchmarkRecorder(b *testing.B) {
	type run struct {
		name  string
		batch int
		t     tenants
	}
	var runs []run
	for _, batch := range []int{64, 256, 1024, DefaultBatchSize} {
		runs = append(runs, run{fmt.Sprintf("batch=%d", batch), batch, fewTenants})
	}
	for _, batch := range []int{1024, DefaultBatchSize} {
		runs = append(runs, run{fmt.Sprintf("batch=%d/accounts=256", batch), batch, manyTenants})
	}
	for _, tc := range runs {
		batch := tc.batch
		b.Run(tc.name, func(b *testing.B) {
			st := benchStore(b, tc.t)
			j, err := OpenJournal(filepath.Join(b.TempDir(), "journal"))
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			r := New(st, Options{BatchSize: batch, FlushInterval: 50 * time.Millisecond, Journal: j})
			go r.Run(context.Background())
			var seq atomic.Uint64
			b.SetParallelism(32)
			m := startMeter(b)
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewPCG(seq.Add(1), 7))
				for pb.Next() {
					r.Record(benchRecord(rng, tc.t))
				}
			})
			if err := r.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			m.report(b, b.N)
		})
	}
}

// BenchmarkJournalAppend is the journal alone, from 1 and from 32
// goroutines per CPU; every 256 records are marked committed, as the
// flusher would.
func BenchmarkJournalAppend(b *testing.B) {
	for _, par := range []int{0, 32} {
		b.Run(fmt.Sprintf("par=%d", par), func(b *testing.B) {
			j, err := OpenJournal(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			var seq atomic.Uint64
			appendSome := func(pb interface{ Next() bool }) {
				rng := rand.New(rand.NewPCG(seq.Add(1), 7))
				done := make([]Ticket, 0, 256)
				for pb.Next() {
					rec := benchRecord(rng, fewTenants)
					tk, err := j.Append(&rec)
					if err != nil {
						b.Error(err)
						return
					}
					if done = append(done, tk); len(done) == cap(done) {
						j.Committed(done)
						done = done[:0]
					}
				}
				j.Committed(done)
			}
			m := startMeter(b)
			if par == 0 {
				appendSome(&loopN{n: b.N})
			} else {
				b.SetParallelism(par)
				b.RunParallel(func(pb *testing.PB) { appendSome(pb) })
			}
			m.report(b, b.N)
		})
	}
}

// loopN counts down like testing.PB for the single-goroutine case.
type loopN struct{ n int }

func (l *loopN) Next() bool { l.n--; return l.n >= 0 }

// BenchmarkInsertUsage is the database alone: one call per op with a
// batch of records, each with a charge, at the old default batch size and
// the new one; cpu-µs/rec is per record. -benchtime Nx is N batches.
// "append" is the Recorder's first attempt (AppendUsage, new records),
// "insert" a retry of new records (InsertUsage: looks for stored ones
// first) and "replay" InsertUsage of records all stored already, as a
// journal replayed after a crash brings them back. "append" also runs
// with manyTenants.
func BenchmarkInsertUsage(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// stored: the batches are appended before the clock starts, so
		// the timed call finds every record stored (a journal replay).
		stored bool
		write  func(*sqlstore.Store) func(context.Context, []store.UsageRecord) error
	}{
		{"append", false, func(s *sqlstore.Store) func(context.Context, []store.UsageRecord) error { return s.AppendUsage }},
		{"insert", false, func(s *sqlstore.Store) func(context.Context, []store.UsageRecord) error { return s.InsertUsage }},
		{"replay", true, func(s *sqlstore.Store) func(context.Context, []store.UsageRecord) error { return s.InsertUsage }},
	} {
		sizes := []struct {
			name  string
			batch int
			t     tenants
		}{{"batch=256", 256, fewTenants}, {"batch=1024", 1024, fewTenants}}
		if tc.name == "append" {
			sizes = append(sizes, struct {
				name  string
				batch int
				t     tenants
			}{"batch=1024/accounts=256", 1024, manyTenants})
		}
		for _, size := range sizes {
			batch := size.batch
			b.Run(tc.name+"/"+size.name, func(b *testing.B) {
				st := benchStore(b, size.t)
				rng := rand.New(rand.NewPCG(1, 2))
				batches := make([][]store.UsageRecord, b.N)
				for i := range batches {
					batches[i] = make([]store.UsageRecord, batch)
					for k := range batches[i] {
						batches[i][k] = benchRecord(rng, size.t)
					}
					if tc.stored {
						if err := st.AppendUsage(ctx, batches[i]); err != nil {
							b.Fatal(err)
						}
					}
				}
				write := tc.write(st)
				m := startMeter(b)
				for i := range b.N {
					if err := write(ctx, batches[i]); err != nil {
						b.Fatal(err)
					}
				}
				m.report(b, b.N*batch)
			})
		}
	}
}

// discard is a Writer that stores nothing, so a benchmark measures the
// Recorder's own queue and flusher.
type discard struct{}

func (discard) AppendUsage(context.Context, []store.UsageRecord) error { return nil }
func (discard) InsertUsage(context.Context, []store.UsageRecord) error { return nil }

// BenchmarkRecorderTrickle is the queue alone, fed as the gateway feeds it:
// one record at a time, with other work between (requests finish one by
// one), into a Writer that stores nothing and without the journal. It
// measures what handing a record to the flusher costs when the flusher is
// not already busy; until 2026-11-25 every record woke it. The work between
// records is a 50 µs busy wait on the recording goroutine; cpu-µs/rec is
// the process's CPU per record less that wait, so it is the Recorder's
// cost (its Record call, its flusher, the scheduler waking it).
func BenchmarkRecorderTrickle(b *testing.B) {
	const pause = 50 * time.Microsecond
	recs := make([]store.UsageRecord, b.N)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range recs {
		recs[i] = benchRecord(rng, fewTenants)
	}
	r := New(discard{}, Options{})
	go r.Run(context.Background())
	b.ResetTimer()
	cpu := cpuTime()
	for i := range recs {
		r.Record(recs[i])
		for until := time.Now().Add(pause); time.Now().Before(until); {
		}
	}
	if err := r.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	spent := cpuTime() - cpu - time.Duration(b.N)*pause
	b.ReportMetric(float64(spent.Nanoseconds())/1e3/float64(b.N), "cpu-µs/rec")
	b.ReportMetric(0, "ns/op")
}
