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
