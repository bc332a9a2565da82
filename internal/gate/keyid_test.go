package gate

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/store"
)

// KeyByID finds a key of the fake by id.
func (f *fakeKeys) KeyByID(_ context.Context, id string) (store.Key, error) {
	f.lookups.Add(1)
	if f.fail != nil {
		return store.Key{}, f.fail
	}
	for _, k := range f.keys {
		if k.ID == id {
			return k, nil
		}
	}
	return store.Key{}, store.ErrNotFound
}

func TestWithKeyID(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	good, _, goodHash := apikey.Generate()
	keys := &fakeKeys{keys: map[string]store.Key{
		string(goodHash): {ID: "key_good", AccountID: "acct_1", Group: "basic", Hash: goodHash, SpendCap: 5},
		"h2":             {ID: "key_revoked", AccountID: "acct_1", Group: "basic", RevokedAt: now.Add(-time.Hour)},
		"h3":             {ID: "key_off", AccountID: "acct_1", Group: "basic", DisabledAt: now.Add(-time.Hour)},
		"h4":             {ID: "key_expired", AccountID: "acct_1", Group: "basic", ExpiresAt: now},
		"h5":             {ID: "key_acct_off", AccountID: "acct_2", Group: "basic", AccountDisabled: true},
	}}
	a := NewAuthenticator(keys, time.Hour, func() time.Time { return now })
	cases := []struct {
		id, header string
		want       string // key id, or "" for 401
	}{
		{"key_good", "", "key_good"},
		{"key_good", "Bearer sk-not-a-key", "key_good"}, // the header is not read
		{"key_revoked", "", ""},
		{"key_revoked", "Bearer " + good, ""}, // nor does a good header rescue a refused id
		{"key_off", "", ""},
		{"key_expired", "", ""},
		{"key_acct_off", "", ""},
		{"key_unknown", "", ""},
		{"", "Bearer " + good, ""},
	}
	for _, tc := range cases {
		t.Run(tc.id+tc.header, func(t *testing.T) {
			p, err := a.Authenticate(WithKeyID(context.Background(), tc.id), tc.header)
			if tc.want != "" {
				if err != nil || p.KeyID != tc.want || p.Group != "basic" {
					t.Fatalf("got %+v, %v; want key %s", p, err, tc.want)
				}
				return
			}
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != http.StatusUnauthorized || e.Code != apierr.CodeInvalidAPIKey {
				t.Fatalf("err = %v, want 401 invalid_api_key", err)
			}
		})
	}
	// Every request by id reads the key afresh: a key revoked a moment ago
	// is refused at once, cache or not.
	before := keys.lookups.Load()
	if _, err := a.Authenticate(WithKeyID(context.Background(), "key_good"), ""); err != nil {
		t.Fatal(err)
	}
	keys.revoke(goodHash, now)
	if _, err := a.Authenticate(WithKeyID(context.Background(), "key_good"), ""); err == nil {
		t.Fatal("a key revoked after its last request still authenticates by id")
	}
	if n := keys.lookups.Load() - before; n != 2 {
		t.Fatalf("%d lookups for 2 requests by id, want 2", n)
	}
}

// TestKeyIDNotFromHTTP: nothing a client sends sets the key id. A request
// naming a valid key's id in headers, query and cookies, without its
// secret, is refused; only WithKeyID, in process, acts for a key by id.
func TestKeyIDNotFromHTTP(t *testing.T) {
	keys := &fakeKeys{keys: map[string]store.Key{"h": {ID: "key_1", AccountID: "acct_1", Group: "basic"}}}
	a := NewAuthenticator(keys, 0, nil)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := a.Authenticate(r.Context(), r.Header.Get("Authorization")); err != nil {
			apierr.Write(w, err)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions?key_id=key_1&keyIDKey=key_1", nil)
	for _, name := range []string{"X-Key-Id", "Key-Id", "X-Modelgate-Key-Id", "keyIDKey"} {
		r.Header.Set(name, "key_1")
	}
	r.AddCookie(&http.Cookie{Name: "key_id", Value: "key_1"})
	r.Header.Set("Authorization", "Bearer key_1")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", w.Code)
	}
	// A context value under a look-alike key is not WithKeyID's either.
	type keyIDKey struct{}
	ctx := context.WithValue(context.Background(), keyIDKey{}, "key_1")
	if _, err := a.Authenticate(ctx, ""); err == nil {
		t.Fatal("a look-alike context key authenticated")
	}
	if _, err := a.Authenticate(WithKeyID(context.Background(), "key_1"), ""); err != nil {
		t.Fatalf("WithKeyID: %v", err)
	}
}
