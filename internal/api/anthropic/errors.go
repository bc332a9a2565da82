package anthropic

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// statusOverloaded is Anthropic's status for "try again later": the SDKs
// retry it.
const statusOverloaded = 529

// errorType is Anthropic's error type for e, and the status the door
// answers with: Anthropic's statuses where the gateway's differ (a
// balance or spend cap that cannot pay is a 402 billing_error here, 429
// insufficient_quota on the OpenAI door; nothing can serve now is a 529).
func errorType(e *apierr.Error) (status int, typ string) {
	switch {
	case e.Code == apierr.CodeInsufficientQuota || e.Type == apierr.TypeInsufficientQuota:
		return http.StatusPaymentRequired, "billing_error"
	case e.Status == http.StatusServiceUnavailable:
		return statusOverloaded, "overloaded_error"
	}
	switch e.Status {
	case http.StatusBadRequest, http.StatusUnsupportedMediaType, http.StatusMethodNotAllowed, http.StatusRequestTimeout,
		http.StatusUnprocessableEntity:
		return e.Status, "invalid_request_error"
	case http.StatusUnauthorized:
		return e.Status, "authentication_error"
	case http.StatusPaymentRequired:
		return e.Status, "billing_error"
	case http.StatusForbidden:
		return e.Status, "permission_error"
	case http.StatusNotFound:
		return e.Status, "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return e.Status, "request_too_large"
	case http.StatusTooManyRequests:
		return e.Status, "rate_limit_error"
	case http.StatusGatewayTimeout:
		return e.Status, "timeout_error"
	case statusOverloaded:
		return e.Status, "overloaded_error"
	}
	if e.Status >= 400 && e.Status < 500 {
		return e.Status, "invalid_request_error"
	}
	return e.Status, "api_error"
}

// errorBody is Anthropic's error object.
type errorBody struct {
	Type      string     `json:"type"` // "error"
	Error     errorInner `json:"error"`
	RequestID string     `json:"request_id,omitempty"`
}

type errorInner struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// errorJSON is the body of e in Anthropic's shape, for a response or an
// error event, and the status to answer with.
func errorJSON(e *apierr.Error, requestID string) (int, []byte) {
	status, typ := errorType(e)
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	b, err := json.Marshal(errorBody{Type: "error", Error: errorInner{Type: typ, Message: msg}, RequestID: requestID})
	if err != nil { // cannot happen for strings
		b = []byte(`{"type":"error","error":{"type":"api_error","message":"internal error"}}`)
	}
	return status, b
}

// fail answers with err in Anthropic's shape and notes it for the log and
// the usage record (the status noted is the one the client saw).
func fail(w http.ResponseWriter, info *reqinfo.Info, err error) {
	e := lifecycle.Note(info, err)
	status, b := errorJSON(e, info.ID)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(int64((e.RetryAfter+999_999_999)/1_000_000_000), 10))
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
	info.Status = status
}
