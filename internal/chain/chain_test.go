package chain

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/internal/store"
)

// memStore keeps stored responses in a map; fail makes SizeResponses fail.
type memStore struct {
	mu   sync.Mutex
	rs   map[string]store.StoredResponse
	fail bool
}

func (m *memStore) StoredResponse(_ context.Context, id string) (store.StoredResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rs[id]
	if !ok {
		return r, store.ErrNotFound
	}
	return r, nil
}

func (m *memStore) SizeResponses(_ context.Context, sizes []store.ResponseSize) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errors.New("store down")
	}
	for _, z := range sizes {
		if r, ok := m.rs[z.ID]; ok {
			r.Sized, r.InputTokens, r.OutputTokens = true, z.InputTokens, z.OutputTokens
			m.rs[z.ID] = r
		}
	}
	return nil
}

func TestSizes(t *testing.T) {
	ctx := context.Background()
	st := &memStore{rs: map[string]store.StoredResponse{
		"resp_a": {ID: "resp_a", AccountID: "acct_1", Bound: 50_000},
		"resp_b": {ID: "resp_b", AccountID: "acct_1", Bound: 7},
	}}
	s := New(st, Options{MaxPending: 2})
	tokens := func(id string) int64 {
		t.Helper()
		r, err := s.Lookup(ctx, id)
		if err != nil {
			t.Fatalf("Lookup(%s): %v", id, err)
		}
		return Tokens(r, -1)
	}
	if got := tokens("resp_a"); got != 50_000 {
		t.Errorf("before its size: %d tokens; want the bound, 50000", got)
	}
	s.Record("resp_a", 40_000, 20_040)
	if got := tokens("resp_a"); got != 60_040 {
		t.Errorf("recorded, not written: %d tokens; want 60040 at once", got)
	}
	st.fail = true
	if err := s.Flush(ctx); err == nil {
		t.Error("Flush with the store down: no error")
	}
	if got := tokens("resp_a"); got != 60_040 {
		t.Errorf("after a failed flush: %d tokens; want 60040 (still pending)", got)
	}
	st.fail = false
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if r := st.rs["resp_a"]; !r.Sized || r.InputTokens != 40_000 || r.OutputTokens != 20_040 || len(s.pending) != 0 {
		t.Errorf("after a flush: store %+v, %d pending; want the size written, none pending", r, len(s.pending))
	}
	s.Record("resp_b", 1, 1)
	s.Record("resp_c", 1, 1)
	s.Record("resp_d", 1, 1) // past MaxPending: dropped
	if len(s.pending) != 2 {
		t.Errorf("%d pending; want MaxPending (2)", len(s.pending))
	}
	if _, err := s.Lookup(ctx, "resp_unknown"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Lookup of an unknown id: %v; want ErrNotFound", err)
	}
	if got := Tokens(store.StoredResponse{}, 123); got != 123 {
		t.Errorf("Tokens of an unbounded, unsized response = %d; want the fallback", got)
	}
}

func TestRunFlushesAtStop(t *testing.T) {
	st := &memStore{rs: map[string]store.StoredResponse{"resp_a": {ID: "resp_a", AccountID: "acct_1"}}}
	s := New(st, Options{Every: 1 << 40})
	s.Record("resp_a", 3, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r := st.rs["resp_a"]; !r.Sized || r.InputTokens != 3 || r.OutputTokens != 4 {
		t.Errorf("after Run stopped: %+v; want the pending size written", r)
	}
}
