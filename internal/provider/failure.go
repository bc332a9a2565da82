package provider

import (
	"errors"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
)

// Failure is what an upstream call's error says about the provider, for
// routing: whether another provider may be tried and whether the provider
// counts it against its health.
type Failure int

const (
	// Answered: no error.
	Answered Failure = iota
	// ClientFault: the vendor refused the request itself (a 4xx other than
	// auth, 408 and 429); another provider would too. Not retried, not the
	// provider's failure.
	ClientFault
	// AuthFailed: the vendor refused the gateway's key (401, 403).
	AuthFailed
	// Limited: the vendor is rate limiting (429); retried elsewhere, not a
	// failure of its health.
	Limited
	// ServerFailed: the vendor answered 5xx (or 529, or 408).
	ServerFailed
	// Unreachable: no answer came: the connection failed or timed out.
	Unreachable
	// Broken: an answer came that could not be read (an HTML page, a cut
	// JSON body, a malformed stream). The vendor may have done the work,
	// so it is not retried; it is the provider's failure.
	Broken
	// Gone: the client left, or the server is shutting down: nobody to
	// retry for, and nothing about the provider.
	Gone
)

// transportFailure is the cause of an error FromTransport made: the call
// failed on the way (a connection, a timeout), with no answer read.
type transportFailure struct{ error }

// Unwrap returns the failure's description.
func (f transportFailure) Unwrap() error { return f.error }

// Classify says what err, an adapter's error, means for routing, and the
// vendor's HTTP status when it answered with one (0 when no answer came).
func Classify(err error) (Failure, int) {
	if err == nil {
		return Answered, http.StatusOK
	}
	var e *apierr.Error
	if errors.As(err, &e) && (e.Status == apierr.StatusClientClosed || e.Code == apierr.CodeShuttingDown) {
		return Gone, 0
	}
	var vf vendorFailure
	if errors.As(err, &vf) {
		switch s := vf.status; {
		case s == http.StatusUnauthorized || s == http.StatusForbidden:
			return AuthFailed, s
		case s == http.StatusTooManyRequests:
			return Limited, s
		case s == http.StatusRequestTimeout || s >= 500:
			return ServerFailed, s
		}
		return ClientFault, vf.status
	}
	var tf transportFailure
	if errors.As(err, &tf) {
		return Unreachable, 0
	}
	if e != nil && e.Status >= 400 && e.Status < 500 {
		return ClientFault, 0 // the adapter refused the request before sending it
	}
	return Broken, 0
}

// RetryAfter is the Retry-After the vendor sent with err (0: none; an
// hour at most), as opposed to the one the gateway suggests to its client.
func RetryAfter(err error) time.Duration {
	var vf vendorFailure
	if errors.As(err, &vf) {
		return vf.retryAfter
	}
	return 0
}

// Retryable reports whether a call that failed with f may be tried again
// on another provider (or key), before anything reached the client: f is
// a failure of the provider, not of the request. A 5xx other than 500,
// 502, 503, 504 and 529 (501: the vendor lacks the feature) is not.
func Retryable(f Failure, status int) bool {
	switch f {
	case AuthFailed, Limited, Unreachable:
		return true
	case ServerFailed:
		switch status {
		case 500, 502, 503, 504, 529:
			return true
		}
	}
	return false
}
