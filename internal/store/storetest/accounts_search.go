package storetest

import (
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

func testSearchAccounts(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	alpha := fundedAccount(t, s, "alpha")
	names := []string{"bravo", "charlie_x", "charliex", "delta"}
	accts := map[string]store.Account{"alpha": alpha}
	for _, n := range names {
		a := newAccount(t, n, at(time.Minute))
		mustCreateAccount(t, s, a)
		accts[n] = a
	}
	if err := s.SetAccountAdmin(ctx(t), accts["delta"].ID, true); err != nil {
		t.Fatal(err)
	}
	gh := newIdentity(t, "github", alpha, at(time.Hour))
	gh.Subject, gh.Login, gh.Email = "4242", "OctoCat", "Alpha@Example.com"
	sso := newIdentity(t, "sso", alpha, at(2*time.Hour))
	sso.Subject, sso.Login, sso.Email = "sso-subject-1", "", ""
	bravoID := newIdentity(t, "google", accts["bravo"], at(time.Hour))
	bravoID.Subject, bravoID.Login, bravoID.Email = "sub-98765", "bee", "b@corp.test"
	for _, id := range []store.Identity{gh, sso, bravoID} {
		if err := s.LinkIdentity(ctx(t), id); err != nil {
			t.Fatal(err)
		}
	}

	search := func(q store.AccountQuery) []string {
		t.Helper()
		rows, err := s.SearchAccounts(ctx(t), q)
		if err != nil {
			t.Fatalf("SearchAccounts(%+v): %v", q, err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, r.Name)
		}
		return out
	}
	cases := []struct {
		name string
		q    store.AccountQuery
		want []string
	}{
		{"all", store.AccountQuery{Limit: 10}, []string{"alpha", "bravo", "charlie_x", "charliex", "delta"}},
		{"first page", store.AccountQuery{Limit: 2}, []string{"alpha", "bravo"}},
		{"next page", store.AccountQuery{After: "bravo", Limit: 2}, []string{"charlie_x", "charliex"}},
		{"last page", store.AccountQuery{After: "charliex", Limit: 2}, []string{"delta"}},
		{"name", store.AccountQuery{Q: "RLIE", Limit: 10}, []string{"charlie_x", "charliex"}},
		{"underscore is literal", store.AccountQuery{Q: "e_", Limit: 10}, []string{"charlie_x"}},
		{"percent is literal", store.AccountQuery{Q: "%", Limit: 10}, nil},
		{"login", store.AccountQuery{Q: "octocat", Limit: 10}, []string{"alpha"}},
		{"e-mail", store.AccountQuery{Q: "example.COM", Limit: 10}, []string{"alpha"}},
		{"subject", store.AccountQuery{Q: "98765", Limit: 10}, []string{"bravo"}},
		{"query and cursor", store.AccountQuery{Q: "charlie", After: "charlie_x", Limit: 10}, []string{"charliex"}},
		{"nothing", store.AccountQuery{Q: "zulu", Limit: 10}, nil},
	}
	for _, tc := range cases {
		assertEqual(t, tc.name, search(tc.q), tc.want)
	}

	rows, err := s.SearchAccounts(ctx(t), store.AccountQuery{Limit: 10})
	if err != nil || len(rows) != 5 {
		t.Fatalf("SearchAccounts: %d rows, %v", len(rows), err)
	}
	if r := rows[0]; r.Balance != money.Unit || len(r.Identities) != 2 ||
		r.Identities[0].Provider != "github" || r.Identities[0].Login != "OctoCat" || r.Identities[1].Subject != "sso-subject-1" {
		t.Errorf("alpha's row %+v", r)
	}
	if r := rows[1]; len(r.Identities) != 1 || r.Identities[0].Subject != "sub-98765" {
		t.Errorf("bravo's row %+v", r)
	}
	if r := rows[4]; !r.Admin || len(r.Identities) != 0 {
		t.Errorf("delta's row %+v", r)
	}
	for _, limit := range []int{0, 501} {
		if _, err := s.SearchAccounts(ctx(t), store.AccountQuery{Limit: limit}); err == nil {
			t.Errorf("limit %d: no error", limit)
		}
	}
}
