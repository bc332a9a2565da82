package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/redact"
)

// Causes used with context.WithCancelCause so a cancelled upstream call can
// be told apart from a client that went away.
var (
	ErrIdleTimeout  = errors.New("upstream idle timeout")
	ErrTotalTimeout = errors.New("upstream request timeout")
)

// VendorError is the part of a vendor's error body worth keeping.
type VendorError struct {
	Message string
	Type    string
	Code    string
	Param   string
}

// Redact returns v with r's secrets and every key-shaped token removed
// from its fields (see internal/redact; a nil r removes key shapes only).
// Adapters call it with their own Redactor on every VendorError they read
// from a vendor, before FromStatus or their own error makes use of it.
func (v VendorError) Redact(r *redact.Redactor) VendorError {
	return VendorError{Message: r.String(v.Message), Type: r.String(v.Type), Code: r.String(v.Code), Param: r.String(v.Param)}
}

// Secrets is the Redactor of the secrets an adapter sends its vendor: the
// API key, the values of the configured headers (an operator may put a key
// in any of them) and a password in the base URL. Vendors have been seen
// echoing a key in an error message; the adapter redacts every message it
// reads from its vendor with it.
func Secrets(apiKey, baseURL string, headers map[string]string) *redact.Redactor {
	s := []string{apiKey}
	for _, v := range headers {
		s = append(s, v)
	}
	if u, err := url.Parse(baseURL); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			s = append(s, pw)
		}
	}
	return redact.New(s...)
}

// maxVendorMessage bounds how much of a vendor's message reaches the client.
const maxVendorMessage = 2000

// FromStatus maps a vendor's non-2xx answer to the error the client gets.
// The vendor's message is shown only where it is about the client's own
// request (4xx other than auth); an auth failure means the gateway's
// upstream key is wrong, which the client must neither see nor fix.
//
// Its errors are the vendor's own failures (see VendorFailed). Key-shaped
// tokens in v are redacted here whatever the caller did; the adapter's own
// secrets are the caller's to redact (VendorError.Redact).
func FromStatus(provider string, status int, h http.Header, v VendorError) *apierr.Error {
	v = v.Redact(nil)
	cause := vendorFailure{fmt.Errorf("provider %s: HTTP %d: %s %s", provider, status, v.Code, v.Message), status, retryAfter(h, 0)}
	msg := truncate(v.Message)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: apierr.CodeUpstreamAuth,
			Message: "The upstream provider refused the gateway's credentials. The operator has been told; try again later.", Err: cause}
	case status == http.StatusNotFound:
		return &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: apierr.CodeUpstreamError,
			Message: "The upstream provider does not know the configured model.", Err: cause}
	case status == http.StatusTooManyRequests:
		if v.Code == "insufficient_quota" { // our vendor account is out of credit, not the client's
			return &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: apierr.CodeUpstreamUnavailable,
				Message: "The upstream provider is not available right now; retry later.", RetryAfter: 30 * time.Second, Err: cause}
		}
		return &apierr.Error{Status: http.StatusTooManyRequests, Type: apierr.TypeRateLimit, Code: apierr.CodeRateLimitExceeded,
			Message: "The upstream provider is rate limiting requests; retry later.", RetryAfter: retryAfter(h, time.Second), Err: cause}
	case status >= 400 && status < 500:
		if msg == "" {
			msg = fmt.Sprintf("The upstream provider rejected the request (HTTP %d).", status)
		}
		code := v.Code
		if code == "" {
			code = apierr.CodeInvalidRequest
		}
		return &apierr.Error{Status: status, Type: apierr.TypeInvalidRequest, Code: code, Param: v.Param, Message: msg, Err: cause}
	case status == http.StatusServiceUnavailable || status == 529:
		return &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: apierr.CodeUpstreamUnavailable,
			Message: "The upstream provider is overloaded or unavailable; retry later.", RetryAfter: retryAfter(h, 2*time.Second), Err: cause}
	case status == http.StatusGatewayTimeout:
		return &apierr.Error{Status: http.StatusGatewayTimeout, Type: apierr.TypeServer, Code: apierr.CodeUpstreamTimeout,
			Message: "The upstream provider timed out; retry later.", RetryAfter: time.Second, Err: cause}
	default:
		return &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: apierr.CodeUpstreamError,
			Message: "The upstream provider failed to answer; retry later.", RetryAfter: time.Second, Err: cause}
	}
}

// vendorFailure is the cause of an error the vendor answered with, and
// the HTTP status it answered with (200 for an error in a 2xx answer).
type vendorFailure struct {
	error
	status     int
	retryAfter time.Duration // the vendor's Retry-After header; 0: none
}

// Unwrap returns the failure's description.
func (f vendorFailure) Unwrap() error { return f.error }

// VendorFailed reports whether err is the vendor's own answer that the
// request failed (an error status, an error event, an error body in a 2xx
// answer: what FromStatus makes), as opposed to one the gateway ran into
// (the client left, a timeout, a broken connection, an answer it could not
// read). Vendors bill nothing for the first kind, so neither does the
// gateway; for the second, a vendor that had the request bills its prompt.
func VendorFailed(err error) bool {
	var f vendorFailure
	return errors.As(err, &f)
}

// VendorRefused marks e, the error an adapter makes of a 2xx answer in
// which the vendor says it made nothing (Imagen filtering every image), as
// the vendor's own failure (see VendorFailed).
func VendorRefused(e *apierr.Error) *apierr.Error {
	var shapes *redact.Redactor // key-shaped tokens only
	e.Message = shapes.String(e.Message)
	e.Err = vendorFailure{fmt.Errorf("vendor refused: %s", e.Message), http.StatusOK, 0}
	return e
}

// FromTransport maps a failure to reach or read the upstream. It returns
// nil when the client itself went away (ctx cancelled without one of our
// timeout causes), since then nobody is left to answer.
//
// Its cause is redacted of key-shaped tokens (a URL in a transport error
// may carry ?key=).
func FromTransport(ctx context.Context, provider string, err error) *apierr.Error {
	var shapes *redact.Redactor // key-shaped tokens only
	cause := error(transportFailure{shapes.Error(fmt.Errorf("provider %s: %w", provider, err))})
	switch c := context.Cause(ctx); {
	case errors.Is(c, ErrIdleTimeout) || errors.Is(c, ErrTotalTimeout) || errors.Is(c, context.DeadlineExceeded):
		return &apierr.Error{Status: http.StatusGatewayTimeout, Type: apierr.TypeServer, Code: apierr.CodeUpstreamTimeout,
			Message: "The upstream provider took too long to answer; retry later.", RetryAfter: time.Second, Err: fmt.Errorf("%w (%v)", cause, c)}
	case errors.Is(c, apierr.ErrShuttingDown):
		return apierr.ShuttingDown(cause)
	case c != nil:
		return &apierr.Error{Status: apierr.StatusClientClosed, Type: apierr.TypeInvalidRequest, Code: apierr.CodeClientClosed,
			Message: "The client closed the request.", Err: cause}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &apierr.Error{Status: http.StatusGatewayTimeout, Type: apierr.TypeServer, Code: apierr.CodeUpstreamTimeout,
			Message: "The upstream provider took too long to answer; retry later.", RetryAfter: time.Second, Err: cause}
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: apierr.CodeUpstreamUnavailable,
			Message: "The upstream provider cannot be reached; retry later.", RetryAfter: 2 * time.Second, Err: cause}
	}
	return &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: apierr.CodeUpstreamError,
		Message: "The connection to the upstream provider failed; retry later.", RetryAfter: time.Second, Err: cause}
}

// BadResponse is a 502 for an upstream answer the gateway cannot parse.
// Its cause, which may quote the answer, is redacted of key-shaped tokens.
func BadResponse(provider string, err error) *apierr.Error {
	var shapes *redact.Redactor // key-shaped tokens only
	return &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: apierr.CodeBadUpstreamResponse,
		Message: "The upstream provider sent a malformed response.", Err: shapes.Error(fmt.Errorf("provider %s: %w", provider, err))}
}

func retryAfter(h http.Header, fallback time.Duration) time.Duration {
	if s := h.Get("Retry-After"); s != "" {
		// Seconds only (vendors do not send dates); a huge value is capped
		// at an hour, not taken as garbage: the vendor does mean "long".
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			return time.Duration(min(n, 3600)) * time.Second
		}
	}
	return fallback
}

func truncate(s string) string {
	if len(s) <= maxVendorMessage {
		return s
	}
	s = s[:maxVendorMessage]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
