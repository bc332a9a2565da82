package gate

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/store"
)

type fakeKeys struct {
	keys    map[string]store.Key // by string(hash)
	lookups atomic.Int64
	fail    error
}

func (f *fakeKeys) KeyByHash(_ context.Context, h []byte) (store.Key, error) {
	f.lookups.Add(1)
	if f.fail != nil {
		return store.Key{}, f.fail
	}
	k, ok := f.keys[string(h)]
	if !ok {
		return store.Key{}, store.ErrNotFound
	}
	return k, nil
}

func TestAuthenticate(t *testing.T) {
	good, _, goodHash := apikey.Generate()
	revoked, _, revokedHash := apikey.Generate()
	disabled, _, disabledHash := apikey.Generate()
	unknown, _, _ := apikey.Generate()
	keys := &fakeKeys{keys: map[string]store.Key{
		string(goodHash):     {ID: "key_1", AccountID: "acct_1", Group: "basic", Hash: goodHash},
		string(revokedHash):  {ID: "key_2", AccountID: "acct_1", Group: "basic", Hash: revokedHash, RevokedAt: time.Unix(5, 0)},
		string(disabledHash): {ID: "key_3", AccountID: "acct_2", Group: "basic", Hash: disabledHash, AccountDisabled: true},
	}}
	a := NewAuthenticator(keys, 0, nil)
	cases := []struct {
		name   string
		header string
		want   string // key id, or "" for 401
	}{
		{"good", "Bearer " + good, "key_1"},
		{"missing", "", ""},
		{"malformed", "Token " + good, ""},
		{"unknown", "Bearer " + unknown, ""},
		{"revoked", "Bearer " + revoked, ""},
		{"account disabled", "Bearer " + disabled, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := a.Authenticate(context.Background(), tc.header)
			if tc.want != "" {
				if err != nil || p.KeyID != tc.want || p.Group != "basic" || p.AccountID != "acct_1" {
					t.Fatalf("got %+v, %v", p, err)
				}
				return
			}
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != http.StatusUnauthorized || e.Code != apierr.CodeInvalidAPIKey {
				t.Fatalf("err = %v, want 401 invalid_api_key", err)
			}
		})
	}
	// A disabled account's key is refused like a revoked one, and the
	// internal reason (logged, never shown) says why.
	if _, err := a.Authenticate(context.Background(), "Bearer "+disabled); err == nil ||
		!strings.Contains(apierr.From(err).Err.Error(), "acct_2") || !strings.Contains(apierr.From(err).Err.Error(), "disabled") {
		t.Fatalf("disabled account: %v, want a reason naming the disabled account", err)
	}
	keys.fail = errors.New("disk on fire")
	if _, err := a.Authenticate(context.Background(), "Bearer "+good); apierr.From(err).Status != http.StatusInternalServerError {
		t.Fatalf("store failure: %v", err)
	}
}

func TestAuthenticateCache(t *testing.T) {
	secret, _, hash := apikey.Generate()
	keys := &fakeKeys{keys: map[string]store.Key{string(hash): {ID: "key_1", Hash: hash}}}
	now := time.Unix(1000, 0)
	a := NewAuthenticator(keys, 5*time.Second, func() time.Time { return now })
	for range 3 {
		if _, err := a.Authenticate(context.Background(), "Bearer "+secret); err != nil {
			t.Fatal(err)
		}
	}
	if n := keys.lookups.Load(); n != 1 {
		t.Fatalf("store read %d times within the TTL, want 1", n)
	}
	// Revocation is seen once the entry expires.
	k := keys.keys[string(hash)]
	k.RevokedAt = now
	keys.keys[string(hash)] = k
	now = now.Add(6 * time.Second)
	if _, err := a.Authenticate(context.Background(), "Bearer "+secret); err == nil {
		t.Fatal("revoked key still accepted after the TTL")
	}
}

// An expiring key works until its expiry and is refused from then on, even
// while it sits in the cache.
func TestAuthenticateExpiry(t *testing.T) {
	secret, _, hash := apikey.Generate()
	now := time.Unix(1000, 0)
	keys := &fakeKeys{keys: map[string]store.Key{string(hash): {ID: "key_1", Hash: hash, ExpiresAt: now.Add(time.Minute), SpendCap: 7}}}
	a := NewAuthenticator(keys, time.Hour, func() time.Time { return now })
	p, err := a.Authenticate(context.Background(), "Bearer "+secret)
	if err != nil || p.SpendCap != 7 || !p.ExpiresAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("before expiry: %+v, %v", p, err)
	}
	for _, d := range []time.Duration{time.Minute, time.Hour * 2} { // cached, then read again
		now = time.Unix(1000, 0).Add(d)
		_, err := a.Authenticate(context.Background(), "Bearer "+secret)
		if e := apierr.From(err); err == nil || e.Status != http.StatusUnauthorized || e.Code != apierr.CodeInvalidAPIKey {
			t.Fatalf("after %v: %v", d, err)
		}
	}
}

func TestPolicy(t *testing.T) {
	p := NewPolicy(map[string][]string{
		"default": {"*"},
		"basic":   {"gpt-4o-mini", "deepseek-*"},
		"broken":  {"[", "demo-chat"},
		"llama":   {"meta-llama/*"},
	}, []string{"gpt-4o", "gpt-4o-mini", "deepseek-chat", "demo-chat", "meta-llama/llama-4-scout"})
	cases := []struct {
		group, model string
		want         bool
	}{
		{"default", "gpt-4o", true},
		{"default", "unknown", false},
		{"default", "meta-llama/llama-4-scout", true}, // a lone * matches ids with a slash
		{"llama", "meta-llama/llama-4-scout", true},
		{"basic", "meta-llama/llama-4-scout", false},
		{"basic", "gpt-4o-mini", true},
		{"basic", "deepseek-chat", true},
		{"basic", "gpt-4o", false},
		{"broken", "demo-chat", true},
		{"broken", "gpt-4o", false},
		{"nosuchgroup", "gpt-4o", false},
	}
	for _, tc := range cases {
		if got := p.Allows(tc.group, tc.model); got != tc.want {
			t.Errorf("Allows(%q, %q) = %v, want %v", tc.group, tc.model, got, tc.want)
		}
	}
}
