package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/store"
)

// keyIDKey is WithKeyID's context key. It is unexported, so only code of
// this process can set it: no header, query or body member of a request
// maps to it.
type keyIDKey struct{}

// WithKeyID returns a copy of ctx in which Authenticate acts for the key
// with this id, ignoring the Authorization header: the console's
// playground runs a chat completion as a key its signed-in owner picked,
// without ever holding the key's secret. The caller must have checked that
// the key belongs to the user; Authenticate still applies every check a
// bearer key gets (revoked, disabled, expired, account disabled), on a
// fresh read of the key (no cache), so a key refused on the API is refused
// here too.
func WithKeyID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, keyIDKey{}, id)
}

// byID reads the key with id and verifies it like a bearer key.
func (a *Authenticator) byID(ctx context.Context, id string, now time.Time) (Principal, error) {
	if id == "" {
		return Principal{}, apierr.InvalidAPIKey(errors.New("empty key id"))
	}
	k, err := a.keys.KeyByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, apierr.InvalidAPIKey(fmt.Errorf("unknown key id %q", id))
	}
	if err != nil {
		return Principal{}, apierr.Internal(fmt.Errorf("gate: look up key %s: %w", id, err))
	}
	return verify(k, now)
}
