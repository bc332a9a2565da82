// Package apierr holds the gateway's one error type and the one function that
// turns any error into the OpenAI error body {"error": {message, type, param,
// code}}. Handlers and adapters return *Error values; everything else becomes
// a 500 whose details stay in the log, never in the response.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error types, as the official API spells them in error.type.
const (
	TypeInvalidRequest    = "invalid_request_error"
	TypeInsufficientQuota = "insufficient_quota"
	TypeRateLimit         = "rate_limit_error"
	TypeServer            = "server_error"
)

// Error codes the gateway itself produces in error.code.
const (
	CodeInvalidRequest      = "invalid_request_error"
	CodeInvalidAPIKey       = "invalid_api_key"
	CodeModelNotFound       = "model_not_found"
	CodeNotFound            = "not_found"
	CodeRequestTooLarge     = "request_too_large"
	CodeUnsupportedMedia    = "unsupported_media_type"
	CodeMethodNotAllowed    = "method_not_allowed"
	CodeRateLimitExceeded   = "rate_limit_exceeded"
	CodeServer              = "server_error"
	CodeUpstreamError       = "upstream_error"
	CodeUpstreamUnavailable = "upstream_unavailable"
	CodeUpstreamTimeout     = "upstream_timeout"
	CodeUpstreamAuth        = "upstream_auth_failed"
	CodeBadUpstreamResponse = "bad_upstream_response"
	CodeClientClosed        = "client_closed_request"
	CodeClientTooSlow       = "client_too_slow" // recorded (499), never sent: the client took nothing for write_timeout
	CodeRequestTimeout      = "request_timeout" // 408: the body did not arrive within read_timeout
	CodeServerBusy          = "server_busy"     // 503: the request-body memory budget is spent
	CodeShuttingDown        = "shutting_down"
	CodeServiceUnavailable  = "service_unavailable" // 503: no provider of the model can serve it now (Retry-After says when)
	CodeInsufficientQuota   = "insufficient_quota"
	CodeContextLength       = "context_length_exceeded"
	CodeModelNotPriced      = "model_not_priced"
	CodeTaskNotFound        = "task_not_found"    // 404: a video task unknown, another account's, or expired
	CodeUnknownParameter    = "unknown_parameter" // 400: a member the endpoint does not take
	CodeForbidden           = "forbidden"         // 403: a tampered, expired or foreign signed link
)

// ErrShuttingDown is the cause of every request context the server cancels
// when its drain period is over, so adapters can tell it from a client that
// went away.
var ErrShuttingDown = errors.New("server shutting down")

// ShuttingDown is the answer to a request cut short by shutdown.
func ShuttingDown(cause error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Type: TypeServer, Code: CodeShuttingDown,
		Message: "The gateway is shutting down; retry the request.", RetryAfter: time.Second, Err: cause}
}

// StatusClientClosed is the status recorded (never sent) when the client went
// away before the response was complete; nginx's convention.
const StatusClientClosed = 499

// Error is an error with everything needed to answer the client. Message is
// safe to show; Err is the cause, for the log only.
type Error struct {
	Status     int
	Type       string
	Code       string
	Param      string // empty → null
	Message    string
	RetryAfter time.Duration // > 0 adds a Retry-After header
	Err        error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(e.Status))
	b.WriteByte(' ')
	b.WriteString(e.Code)
	if e.Param != "" {
		b.WriteString(" (")
		b.WriteString(e.Param)
		b.WriteByte(')')
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes the cause to errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// Invalid is a 400 invalid_request_error naming the offending parameter.
func Invalid(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: CodeInvalidRequest,
		Param: param, Message: fmt.Sprintf(format, args...)}
}

// Broken is a 400 invalid_request_error for a broken rule of the request
// contract, with OpenAI's code for the rule (invalid_type, invalid_value,
// missing_required_parameter, integer_above_max_value, ...).
func Broken(code, param, format string, args ...any) *Error {
	e := Invalid(param, format, args...)
	e.Code = code
	return e
}

// InvalidAPIKey is the one 401 answer for every authentication failure, so
// the response never tells which check failed.
func InvalidAPIKey(cause error) *Error {
	return &Error{Status: http.StatusUnauthorized, Type: TypeInvalidRequest, Code: CodeInvalidAPIKey,
		Message: "Incorrect or missing API key. Send it as 'Authorization: Bearer sk-...'.", Err: cause}
}

// ModelNotFound is the same 404 for an unknown model and for a model outside
// the key's group, so a group's contents do not leak.
func ModelNotFound(model string) *Error {
	return &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: CodeModelNotFound, Param: "model",
		Message: fmt.Sprintf("The model '%s' does not exist or you do not have access to it.", model)}
}

// Internal wraps an unexpected failure as a 500 whose cause stays in the log.
func Internal(cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Type: TypeServer, Code: CodeServer,
		Message: "The server had an error while processing your request.", Err: cause}
}

// From returns err as an *Error, wrapping anything else as Internal.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal(err)
}
