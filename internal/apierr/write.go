package apierr

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// body is the wire shape of an error response.
type body struct {
	Error wireError `json:"error"`
}

type wireError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// JSON renders the error body for e (also used inside streams as an error event).
func (e *Error) JSON() []byte {
	w := wireError{Message: e.Message, Type: e.Type}
	if e.Param != "" {
		w.Param = &e.Param
	}
	if e.Code != "" {
		w.Code = &e.Code
	}
	b, err := json.Marshal(body{Error: w})
	if err != nil { // cannot happen for strings; keep a valid body anyway
		return []byte(`{"error":{"message":"internal error","type":"server_error","param":null,"code":"server_error"}}`)
	}
	return b
}

// Write answers the request with err in the OpenAI error shape.
func Write(w http.ResponseWriter, err error) *Error {
	e := From(err)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter > 0 {
		secs := int64((e.RetryAfter + 999_999_999) / 1_000_000_000)
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.JSON())
	return e
}
