package app

import (
	"errors"
	"testing"

	"github.com/modelgate/modelgate/internal/apierr"
)

// A failed provider test shows the vendor's or the connection's words,
// not the gateway's message to clients.
func TestTestFailure(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&apierr.Error{Status: 503, Code: apierr.CodeUpstreamUnavailable, Message: "The upstream provider is overloaded or unavailable; retry later.",
			Err: errors.New("provider a: HTTP 529: overloaded_error Overloaded")}, "provider a: HTTP 529: overloaded_error Overloaded"},
		{&apierr.Error{Status: 502, Code: apierr.CodeUpstreamError, Message: "no cause"}, "502 upstream_error: no cause"},
		{errors.New("dial tcp 10.0.0.1:443: connection refused"), "dial tcp 10.0.0.1:443: connection refused"},
	} {
		if got := testFailure(tt.err); got != tt.want {
			t.Errorf("testFailure(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
