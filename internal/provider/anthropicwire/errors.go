package anthropicwire

import "net/http"

// Anthropic's error types.
const (
	ErrInvalidRequest  = "invalid_request_error"
	ErrAuthentication  = "authentication_error"
	ErrBilling         = "billing_error"
	ErrPermission      = "permission_error"
	ErrNotFound        = "not_found_error"
	ErrRequestTooLarge = "request_too_large"
	ErrRateLimit       = "rate_limit_error"
	ErrAPI             = "api_error"
	ErrTimeout         = "timeout_error"
	ErrOverloaded      = "overloaded_error"
)

// StatusOverloaded is the status Anthropic answers overloaded_error with.
const StatusOverloaded = 529

// ErrorBody is Anthropic's error answer, {"type":"error","error":{"type",
// "message"},"request_id"}, and the data of a stream's error event (which
// may lack request_id).
type ErrorBody struct {
	Type      string      `json:"type"` // always "error"
	Error     ErrorDetail `json:"error"`
	RequestID string      `json:"request_id,omitempty"`
}

// ErrorDetail is an error's type and human-readable message.
type ErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// NewErrorBody builds the error answer for an HTTP status (see ErrorType).
func NewErrorBody(status int, message, requestID string) ErrorBody {
	return ErrorBody{Type: "error", Error: ErrorDetail{Type: ErrorType(status), Message: message}, RequestID: requestID}
}

// ErrorType is the error type Anthropic sends with status: 400
// invalid_request_error, 401 authentication_error, 402 billing_error, 403
// permission_error, 404 not_found_error, 413 request_too_large, 429
// rate_limit_error, 500 api_error, 503 and 529 overloaded_error, 504
// timeout_error; any other 4xx is invalid_request_error and anything else
// api_error.
func ErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return ErrInvalidRequest
	case http.StatusUnauthorized:
		return ErrAuthentication
	case http.StatusPaymentRequired:
		return ErrBilling
	case http.StatusForbidden:
		return ErrPermission
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusRequestEntityTooLarge:
		return ErrRequestTooLarge
	case http.StatusTooManyRequests:
		return ErrRateLimit
	case http.StatusGatewayTimeout:
		return ErrTimeout
	case http.StatusServiceUnavailable, StatusOverloaded:
		return ErrOverloaded
	}
	if status >= 400 && status < 500 {
		return ErrInvalidRequest
	}
	return ErrAPI
}

// ErrorStatus is the HTTP status Anthropic documents for an error type
// (ErrorType's inverse; overloaded_error is 529), 500 for an unknown type.
func ErrorStatus(errType string) int {
	switch errType {
	case ErrInvalidRequest:
		return http.StatusBadRequest
	case ErrAuthentication:
		return http.StatusUnauthorized
	case ErrBilling:
		return http.StatusPaymentRequired
	case ErrPermission:
		return http.StatusForbidden
	case ErrNotFound:
		return http.StatusNotFound
	case ErrRequestTooLarge:
		return http.StatusRequestEntityTooLarge
	case ErrRateLimit:
		return http.StatusTooManyRequests
	case ErrTimeout:
		return http.StatusGatewayTimeout
	case ErrOverloaded:
		return StatusOverloaded
	}
	return http.StatusInternalServerError
}

// EventName is "error": an ErrorBody is also a stream's error event.
func (ErrorBody) EventName() string { return EventError }

// AppendJSON appends the error's JSON (request_id only when set).
func (e ErrorBody) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"error","error":{"type":`...)
	dst = AppendString(dst, e.Error.Type)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, e.Error.Message)
	dst = append(dst, '}')
	if e.RequestID != "" {
		dst = append(dst, `,"request_id":`...)
		dst = AppendString(dst, e.RequestID)
	}
	return append(dst, '}')
}

// MarshalJSON is AppendJSON into a new slice.
func (e ErrorBody) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }
