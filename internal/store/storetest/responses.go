package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// testResponses covers SaveResponseOwner and ResponseOwner: ownership is
// first come, idempotent for the owner, and never handed to another account.
func testResponses(t *testing.T, newStore func(t *testing.T) store.Store) {
	const (
		id1 = "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b"
		id2 = "resp_68af4030592c81938ec0a5fbab4a3e9f05438e46b5f69a3b"
	)
	type save struct {
		id, account string // account: "alice", "bob" or a name no account has
		err         error  // nil: success
	}
	tests := []struct {
		name  string
		saves []save
		want  map[string]string // id → owner name; ids not listed must be ErrNotFound
	}{
		{"none saved", nil, nil},
		{"one", []save{{id1, "alice", nil}}, map[string]string{id1: "alice"}},
		{"same owner twice", []save{{id1, "alice", nil}, {id1, "alice", nil}}, map[string]string{id1: "alice"}},
		{"other account conflicts", []save{{id1, "alice", nil}, {id1, "bob", store.ErrConflict}, {id1, "alice", nil}},
			map[string]string{id1: "alice"}},
		{"two ids two owners", []save{{id1, "alice", nil}, {id2, "bob", nil}}, map[string]string{id1: "alice", id2: "bob"}},
		{"ids are case-sensitive", []save{{id1, "alice", nil}, {"RESP_67CCD2BED1EC8190B14F964ABC0542670BB6A6B452D3795B", "bob", nil}},
			map[string]string{id1: "alice", "RESP_67CCD2BED1EC8190B14F964ABC0542670BB6A6B452D3795B": "bob"}},
		{"unknown account", []save{{id1, "nobody", store.ErrNotFound}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			accounts := map[string]string{"nobody": "acct_" + randHex(t, 8)}
			for i, name := range []string{"alice", "bob"} {
				a := newAccount(t, name, at(time.Duration(i)*time.Second))
				mustCreateAccount(t, s, a)
				accounts[name] = a.ID
			}
			for i, sv := range tc.saves {
				err := s.SaveResponseOwner(ctx(t), sv.id, accounts[sv.account], at(time.Duration(i)*time.Minute))
				if sv.err == nil && err != nil || sv.err != nil && !errors.Is(err, sv.err) {
					t.Fatalf("save %d (%s by %s): got %v, want %v", i, sv.id, sv.account, err, sv.err)
				}
			}
			for _, id := range []string{id1, id2, "RESP_67CCD2BED1EC8190B14F964ABC0542670BB6A6B452D3795B", "resp_unknown", ""} {
				got, err := s.ResponseOwner(ctx(t), id)
				name, ok := tc.want[id]
				switch {
				case !ok && !errors.Is(err, store.ErrNotFound):
					t.Errorf("ResponseOwner(%q) = %q, %v; want ErrNotFound", id, got, err)
				case ok && (err != nil || got != accounts[name]):
					t.Errorf("ResponseOwner(%q) = %q, %v; want %s's %q", id, got, err, name, accounts[name])
				}
			}
		})
	}
}

// testResponseSizes covers SaveResponse, SizeResponses and StoredResponse:
// a response is saved with its bound (and maybe its size), sized later,
// read back whole, and never taken over by another account.
func testResponseSizes(t *testing.T, newStore func(t *testing.T) store.Store) {
	const (
		id1 = "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b"
		id2 = "resp_68af4030592c81938ec0a5fbab4a3e9f05438e46b5f69a3b"
	)
	s := newStore(t)
	alice, bob := newAccount(t, "alice", at(0)), newAccount(t, "bob", at(time.Second))
	mustCreateAccount(t, s, alice)
	mustCreateAccount(t, s, bob)
	steps := []struct {
		name string
		do   func() error
		err  error
		want map[string]store.StoredResponse // id → expected record; others unchanged
	}{
		{"saved with a bound", func() error {
			return s.SaveResponse(ctx(t), store.StoredResponse{ID: id1, AccountID: alice.ID, CreatedAt: at(time.Minute), Bound: 120_000})
		}, nil, map[string]store.StoredResponse{id1: {ID: id1, AccountID: alice.ID, CreatedAt: at(time.Minute), Bound: 120_000}}},
		{"another account cannot take it", func() error {
			return s.SaveResponse(ctx(t), store.StoredResponse{ID: id1, AccountID: bob.ID, CreatedAt: at(time.Minute), Bound: 5, Sized: true, InputTokens: 1})
		}, store.ErrConflict, nil},
		{"sized later", func() error {
			return s.SizeResponses(ctx(t), []store.ResponseSize{{ID: id1, InputTokens: 40_000, OutputTokens: 20_040}, {ID: "resp_never_saved", InputTokens: 1}})
		}, nil, map[string]store.StoredResponse{id1: {ID: id1, AccountID: alice.ID, CreatedAt: at(time.Minute), Bound: 120_000,
			Sized: true, InputTokens: 40_000, OutputTokens: 20_040}}},
		{"saved again by its owner keeps bound and size", func() error {
			return s.SaveResponse(ctx(t), store.StoredResponse{ID: id1, AccountID: alice.ID, CreatedAt: at(time.Hour), Bound: 1, Sized: true, InputTokens: 7, OutputTokens: 7})
		}, nil, nil},
		{"saved sized at once", func() error {
			return s.SaveResponse(ctx(t), store.StoredResponse{ID: id2, AccountID: bob.ID, CreatedAt: at(2 * time.Minute), Bound: 900,
				Sized: true, InputTokens: 300, OutputTokens: 0})
		}, nil, map[string]store.StoredResponse{id2: {ID: id2, AccountID: bob.ID, CreatedAt: at(2 * time.Minute), Bound: 900,
			Sized: true, InputTokens: 300}}},
		{"the owner read by ResponseOwner too", func() error {
			owner, err := s.ResponseOwner(ctx(t), id2)
			if err == nil && owner != bob.ID {
				t.Errorf("ResponseOwner(%s) = %s; want bob", id2, owner)
			}
			return err
		}, nil, nil},
		{"saved with an unknown account", func() error {
			return s.SaveResponse(ctx(t), store.StoredResponse{ID: "resp_x", AccountID: "acct_" + randHex(t, 8), CreatedAt: at(0)})
		}, store.ErrNotFound, nil},
	}
	want := map[string]store.StoredResponse{}
	for _, st := range steps {
		err := st.do()
		if st.err == nil && err != nil || st.err != nil && !errors.Is(err, st.err) {
			t.Fatalf("%s: got %v, want %v", st.name, err, st.err)
		}
		for id, r := range st.want {
			want[id] = r
		}
		for id, w := range want {
			got, err := s.StoredResponse(ctx(t), id)
			if err != nil || got != w {
				t.Errorf("%s: StoredResponse(%s) = %+v, %v; want %+v", st.name, id, got, err, w)
			}
		}
	}
	for _, id := range []string{"resp_never_saved", "resp_x", ""} {
		if _, err := s.StoredResponse(ctx(t), id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("StoredResponse(%q) = %v; want ErrNotFound", id, err)
		}
	}
}
