package gate

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/store"
)

// A key's own limits reach the principal (and so the request path) from
// the cached key, with no read per request.
func TestAuthenticateLimits(t *testing.T) {
	secret, _, hash := apikey.Generate()
	keys := &fakeKeys{keys: map[string]store.Key{string(hash): {ID: "key_1", Hash: hash,
		Limits: store.KeyLimits{RPM: 3, TPM: 1000, Concurrency: 2}}}}
	a := NewAuthenticator(keys, time.Hour, nil)
	for i := range 2 {
		p, err := a.Authenticate(context.Background(), "Bearer "+secret)
		if err != nil || p.Limits != (Limits{RPM: 3, TPM: 1000, Concurrency: 2}) {
			t.Fatalf("request %d: %+v, %v", i, p.Limits, err)
		}
	}
}

func TestLimitsOr(t *testing.T) {
	group := Limits{RPM: 60, TPM: 10_000, Concurrency: 4}
	for _, tc := range []struct {
		name     string
		key, out Limits
	}{
		{"none of its own: the group's", Limits{}, group},
		{"its own override the group's", Limits{RPM: 3, TPM: 50, Concurrency: 1}, Limits{RPM: 3, TPM: 50, Concurrency: 1}},
		{"field by field", Limits{TPM: 500}, Limits{RPM: 60, TPM: 500, Concurrency: 4}},
		{"its own above the group's", Limits{RPM: 600}, Limits{RPM: 600, TPM: 10_000, Concurrency: 4}},
	} {
		if got := tc.key.Or(group); got != tc.out {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.out)
		}
	}
	if (Limits{}).Or(Limits{}).Any() || !(Limits{Concurrency: 1}).Any() {
		t.Error("Any")
	}
}
