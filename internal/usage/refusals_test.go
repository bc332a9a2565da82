package usage

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// refusalSink is a RefusalWriter that sums what it is given, and fails
// while fail is set.
type refusalSink struct {
	mu    sync.Mutex
	fail  bool
	calls int
	rows  map[string]int64 // "account key 15:04 reason status" → count
}

func (s *refusalSink) AddRefusals(ctx context.Context, cs []store.RefusalCount) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.fail {
		return errFake
	}
	if s.rows == nil {
		s.rows = map[string]int64{}
	}
	for _, c := range cs {
		s.rows[fmt.Sprintf("%s %s %s %s %d", c.AccountID, c.KeyID, c.Minute.Format("15:04"), c.Reason, c.Status)] += c.Count
	}
	return nil
}

func (s *refusalSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k, n := range s.rows {
		out = append(out, fmt.Sprintf("%s ×%d", k, n))
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

func TestRefusalsCountPerKeyReasonMinute(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 30, 0, time.UTC)
	refusal := func(key, reason string, status int, after time.Duration) store.RefusalCount {
		return store.RefusalCount{AccountID: "acct", KeyID: key, Reason: reason, Status: status, Minute: t0.Add(after), Count: 99}
	}
	tests := []struct {
		name string
		in   []store.RefusalCount
		want string
	}{
		{"one", []store.RefusalCount{refusal("k1", "insufficient_quota", 429, 0)},
			"acct k1 10:00 insufficient_quota 429 ×1"},
		{"same minute folds, Count ignored", []store.RefusalCount{refusal("k1", "insufficient_quota", 429, 0),
			refusal("k1", "insufficient_quota", 429, 29*time.Second)},
			"acct k1 10:00 insufficient_quota 429 ×2"},
		{"next minute, other key, other reason each their own", []store.RefusalCount{
			refusal("k1", "insufficient_quota", 429, 0), refusal("k1", "insufficient_quota", 429, 30*time.Second),
			refusal("k2", "insufficient_quota", 429, 0), refusal("k1", "model_not_found", 404, 0)},
			"acct k1 10:00 insufficient_quota 429 ×1; acct k1 10:00 model_not_found 404 ×1; acct k1 10:01 insufficient_quota 429 ×1; acct k2 10:00 insufficient_quota 429 ×1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &refusalSink{}
			r := NewRefusals(sink, time.Hour, nil)
			for _, c := range tt.in {
				r.Count(c)
			}
			if err := r.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := sink.String(); got != tt.want {
				t.Errorf("rows\n got %s\nwant %s", got, tt.want)
			}
			if err := r.Flush(t.Context()); err != nil || sink.calls != 1 {
				t.Errorf("an empty Flush wrote (calls %d, err %v)", sink.calls, err)
			}
		})
	}
}

func TestRefusalsKeptUntilWritten(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	sink := &refusalSink{fail: true}
	r := NewRefusals(sink, time.Hour, nil)
	c := store.RefusalCount{AccountID: "acct", KeyID: "k", Reason: "insufficient_quota", Status: 429, Minute: now}
	r.Count(c)
	if err := r.Flush(t.Context()); err == nil {
		t.Fatal("Flush to a failing writer returned nil")
	}
	r.Count(c) // arrives while the first is waiting to be written
	sink.fail = false
	if err := r.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := sink.String(); got != "acct k 10:00 insufficient_quota 429 ×2" {
		t.Errorf("rows %s; want both counts, once", got)
	}
}

func TestRefusalsCloseLogsWhatItCannotWrite(t *testing.T) {
	var logs bytes.Buffer
	sink := &refusalSink{fail: true}
	r := NewRefusals(sink, time.Hour, slog.New(slog.NewTextHandler(&logs, nil)))
	r.Count(store.RefusalCount{AccountID: "acct", KeyID: "k", Reason: "model_not_found", Status: 404, Minute: time.Now()})
	if err := r.Close(t.Context()); err == nil {
		t.Fatal("Close with a failing writer returned nil")
	}
	if !strings.Contains(logs.String(), "refusal count not written") || !strings.Contains(logs.String(), "reason=model_not_found") {
		t.Errorf("log does not name the lost count:\n%s", logs.String())
	}
}

func TestRefusalsRunWritesEarlyWhenFull(t *testing.T) {
	sink := &refusalSink{}
	r := NewRefusals(sink, time.Hour, nil) // the ticker never fires in this test
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for i := range maxRefusalRows {
		r.Count(store.RefusalCount{AccountID: "acct", KeyID: fmt.Sprint("k", i), Reason: "x", Status: 400, Minute: t0})
	}
	deadline := time.Now().Add(hangGuard)
	for {
		sink.mu.Lock()
		n := len(sink.rows)
		sink.mu.Unlock()
		if n == maxRefusalRows {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows written; want %d without waiting for the interval", n, maxRefusalRows)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
}
