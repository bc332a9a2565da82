package storetest

import (
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// testConsole covers store.Console: identities, sessions and webhook
// events here, top-ups and codes in console_money.go.
func testConsole(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Identities", func(t *testing.T) { testIdentities(t, newStore) })
	t.Run("Sessions", func(t *testing.T) { testSessions(t, newStore) })
	t.Run("RecordEvent", func(t *testing.T) { testRecordEvent(t, newStore) })
	t.Run("TopUps", func(t *testing.T) { testTopUps(t, newStore) })
	t.Run("PayTopUp", func(t *testing.T) { testPayTopUp(t, newStore) })
	t.Run("FirstTopUpBonus", func(t *testing.T) { testFirstTopUpBonus(t, newStore) })
	t.Run("PayTopUpRaces", func(t *testing.T) { testPayTopUpRaces(t, newStore) })
	t.Run("ReverseTopUp", func(t *testing.T) { testReverseTopUp(t, newStore) })
	t.Run("TopUpLimits", func(t *testing.T) { testTopUpLimits(t, newStore) })
	t.Run("Codes", func(t *testing.T) { testCodes(t, newStore) })
}

// newIdentity returns an identity of account a that is not stored yet.
func newIdentity(t *testing.T, provider string, a store.Account, created time.Time) store.Identity {
	t.Helper()
	return store.Identity{Provider: provider, Subject: randHex(t, 6), AccountID: a.ID,
		Login: "user-" + randHex(t, 2), Email: "u@example.com", CreatedAt: created}
}

func normIdentity(id store.Identity) store.Identity {
	id.CreatedAt, id.LastSeenAt = utc(id.CreatedAt), utc(id.LastSeenAt)
	return id
}

// wantErr fails unless err matches want: nil, or a sentinel in its chain.
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Errorf("%s: %v", what, err)
	case want != nil && !errors.Is(err, want):
		t.Errorf("%s: error %v, want %v", what, err, want)
	}
}

func testIdentities(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("SignUpRoundTrip", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		id := newIdentity(t, "github", a, at(0))
		if err := s.SignUp(ctx(t), a, id); err != nil {
			t.Fatalf("SignUp: %v", err)
		}
		got, err := s.IdentityByKey(ctx(t), id.Provider, id.Subject)
		if err != nil {
			t.Fatalf("IdentityByKey: %v", err)
		}
		assertEqual(t, "identity", normIdentity(got), normIdentity(id))
		acct, err := s.AccountByID(ctx(t), a.ID)
		if err != nil || acct.Name != "alice" {
			t.Errorf("AccountByID: %+v, %v", acct, err)
		}
		if _, err := s.IdentityByKey(ctx(t), "google", id.Subject); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("IdentityByKey of another provider: %v, want ErrNotFound", err)
		}
	})

	t.Run("SignUpConflicts", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		id := newIdentity(t, "github", a, at(0))
		if err := s.SignUp(ctx(t), a, id); err != nil {
			t.Fatalf("SignUp: %v", err)
		}
		cases := []struct {
			name     string
			acct     string // the new account's name
			sameID   bool   // reuse id's provider and subject
			newIdent bool   // whether the new identity must stay absent
		}{
			{name: "identity taken", acct: "bob", sameID: true},
			{name: "account name taken", acct: "alice", newIdent: true},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				b := newAccount(t, c.acct, at(time.Second))
				bid := newIdentity(t, "github", b, at(time.Second))
				if c.sameID {
					bid.Subject = id.Subject
				}
				wantErr(t, "SignUp", s.SignUp(ctx(t), b, bid), store.ErrConflict)
				// Nothing half-created: neither the account nor a new identity.
				if _, err := s.AccountByID(ctx(t), b.ID); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("account of the failed sign-up: %v, want ErrNotFound", err)
				}
				got, err := s.IdentityByKey(ctx(t), bid.Provider, bid.Subject)
				switch {
				case c.newIdent && !errors.Is(err, store.ErrNotFound):
					t.Errorf("identity of the failed sign-up: %+v, %v; want ErrNotFound", got, err)
				case !c.newIdent && (err != nil || got.AccountID != a.ID):
					t.Errorf("taken identity now %+v, %v; want it still on %s", got, err, a.ID)
				}
			})
		}
	})

	t.Run("LinkTouchList", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		b := newAccount(t, "bob", at(0))
		ida := newIdentity(t, "github", a, at(0))
		idb := newIdentity(t, "github", b, at(0))
		if err := s.SignUp(ctx(t), a, ida); err != nil {
			t.Fatal(err)
		}
		if err := s.SignUp(ctx(t), b, idb); err != nil {
			t.Fatal(err)
		}
		google := newIdentity(t, "google", a, at(time.Minute))
		stolen := idb
		stolen.AccountID = a.ID
		cases := []struct {
			name string
			id   store.Identity
			want error
		}{
			{"new identity", google, nil},
			{"again", google, store.ErrConflict},
			{"another account's identity", stolen, store.ErrConflict},
			{"missing account", store.Identity{Provider: "sso", Subject: "x", AccountID: "acct_missing", CreatedAt: at(0)}, store.ErrNotFound},
		}
		for _, c := range cases {
			wantErr(t, "LinkIdentity "+c.name, s.LinkIdentity(ctx(t), c.id), c.want)
		}
		if got, err := s.IdentityByKey(ctx(t), idb.Provider, idb.Subject); err != nil || got.AccountID != b.ID {
			t.Errorf("bob's identity after the stolen link: %+v, %v", got, err)
		}
		list, err := s.ListIdentities(ctx(t), a.ID)
		if err != nil {
			t.Fatalf("ListIdentities: %v", err)
		}
		if len(list) != 2 || list[0].Subject != ida.Subject || list[1].Subject != google.Subject {
			t.Errorf("ListIdentities: %+v, want github then google", list)
		}

		touch := ida
		touch.Login, touch.Email, touch.LastSeenAt = "alice2", "new@example.com", at(time.Hour)
		touch.CreatedAt = at(48 * time.Hour) // not changed by a touch
		if err := s.TouchIdentity(ctx(t), touch); err != nil {
			t.Fatalf("TouchIdentity: %v", err)
		}
		got, err := s.IdentityByKey(ctx(t), ida.Provider, ida.Subject)
		want := ida
		want.Login, want.Email, want.LastSeenAt = "alice2", "new@example.com", at(time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		assertEqual(t, "touched identity", normIdentity(got), normIdentity(want))
		if err := s.TouchIdentity(ctx(t), store.Identity{Provider: "github", Subject: "nobody", LastSeenAt: at(0)}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("TouchIdentity of a missing identity: %v, want ErrNotFound", err)
		}
	})
}

// newSession returns a session of account a expiring at expires.
func newSession(t *testing.T, a store.Account, expires time.Time) store.Session {
	t.Helper()
	sum := sha256.Sum256([]byte(randHex(t, 16)))
	return store.Session{ID: "sess_" + randHex(t, 8), Hash: sum[:], AccountID: a.ID, Role: store.RoleUser,
		CSRF: randHex(t, 16), CreatedAt: at(0), ExpiresAt: expires}
}

func normSession(s store.Session) store.Session {
	s.CreatedAt, s.ExpiresAt = utc(s.CreatedAt), utc(s.ExpiresAt)
	return s
}

func testSessions(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a := newAccount(t, "alice", at(0))
	mustCreateAccount(t, s, a)
	old := newSession(t, a, at(time.Hour))
	cur := newSession(t, a, at(48*time.Hour))
	cur.Role = store.RoleAdmin
	for _, sess := range []store.Session{old, cur} {
		if err := s.CreateSession(ctx(t), sess); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
	}
	sameHash := newSession(t, a, at(time.Hour))
	sameHash.Hash = old.Hash
	sameID := newSession(t, a, at(time.Hour))
	sameID.ID = old.ID
	noAcct := newSession(t, store.Account{ID: "acct_missing"}, at(time.Hour))
	cases := []struct {
		name string
		sess store.Session
		want error
	}{
		{"duplicate hash", sameHash, store.ErrConflict},
		{"duplicate id", sameID, store.ErrConflict},
		{"missing account", noAcct, store.ErrNotFound},
	}
	for _, c := range cases {
		wantErr(t, "CreateSession "+c.name, s.CreateSession(ctx(t), c.sess), c.want)
	}
	for _, want := range []store.Session{old, cur} {
		got, err := s.SessionByHash(ctx(t), want.Hash)
		if err != nil {
			t.Fatalf("SessionByHash: %v", err)
		}
		assertEqual(t, "session", normSession(got), normSession(want))
	}
	if _, err := s.SessionByHash(ctx(t), make([]byte, 32)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SessionByHash of an unknown hash: %v", err)
	}

	// Purge at old's expiry keeps it (expired *before*), an hour later not.
	purges := []struct {
		before time.Time
		want   int
	}{{at(time.Hour), 0}, {at(2 * time.Hour), 1}, {at(2 * time.Hour), 0}}
	for i, p := range purges {
		n, err := s.PurgeSessions(ctx(t), p.before)
		if err != nil || n != p.want {
			t.Errorf("purge %d: %d, %v; want %d", i, n, err, p.want)
		}
	}
	if _, err := s.SessionByHash(ctx(t), old.Hash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("purged session: %v, want ErrNotFound", err)
	}

	for i := range 2 { // deleting twice is no error
		if err := s.DeleteSession(ctx(t), cur.ID); err != nil {
			t.Errorf("DeleteSession %d: %v", i, err)
		}
	}
	if _, err := s.SessionByHash(ctx(t), cur.Hash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted session: %v, want ErrNotFound", err)
	}
}

func testRecordEvent(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	steps := []struct {
		provider, id string
		want         bool
	}{
		{"stripe", "evt_1", true},
		{"stripe", "evt_1", false},
		{"stripe", "evt_2", true},
		{"other", "evt_1", true},
		{"other", "evt_1", false},
	}
	for i, st := range steps {
		got, err := s.RecordEvent(ctx(t), st.provider, st.id, at(time.Duration(i)*time.Second))
		if err != nil || got != st.want {
			t.Errorf("RecordEvent %d (%s/%s): %v, %v; want %v", i, st.provider, st.id, got, err, st.want)
		}
	}
}
