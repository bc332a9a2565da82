package providertest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Gemini is a fake Gemini API upstream (generateContent and
// streamGenerateContent?alt=sse) replaying fixtures under testdata/gemini/.
// The model id in the URL picks the scenario (see ServeHTTP).
// Received's Model is the model id from the URL.
type Gemini struct {
	*httptest.Server
	requestLog
}

// NewGemini starts a fake Gemini upstream; it is closed when the test ends.
func NewGemini(t testing.TB) *Gemini {
	f := &Gemini{requestLog: requestLog{t: t}}
	f.Server = httptest.NewServer(f)
	t.Cleanup(f.Close)
	return f
}

// geminiRequest is the part of a request the fake looks at.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			FunctionResponse json.RawMessage `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
}

// afterTool reports whether the last turn carries a functionResponse.
func (r *geminiRequest) afterTool() bool {
	if len(r.Contents) == 0 {
		return false
	}
	for _, p := range r.Contents[len(r.Contents)-1].Parts {
		if len(p.FunctionResponse) > 0 {
			return true
		}
	}
	return false
}

// ServeHTTP answers POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse by model:
//
//	tool-call       a function call, then text once the last turn holds a functionResponse
//	err-429         429 RESOURCE_EXHAUSTED
//	err-400         400 INVALID_ARGUMENT
//	midstream-error a stream with an error event after one chunk
//	anything else   the recorded answer or stream
//
// A request without an x-goog-api-key header gets Google's 403.
func (f *Gemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.serveEmbed(w, r) { // embed.go
		return
	}
	if f.serveImagen(w, r) { // images.go
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1beta/models/")
	model, method, ok2 := strings.Cut(rest, ":")
	if r.Method != http.MethodPost || !ok || !ok2 || (method != "generateContent" && method != "streamGenerateContent") {
		f.fail(w, http.StatusNotFound, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`)
		return
	}
	stream := method == "streamGenerateContent"
	if stream && r.URL.Query().Get("alt") != "sse" {
		f.fail(w, http.StatusBadRequest, `{"error":{"code":400,"message":"fake: want alt=sse","status":"INVALID_ARGUMENT"}}`)
		return
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(r.Body)
	body := buf.Bytes()
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil || len(req.Contents) == 0 {
		f.fail(w, http.StatusBadRequest, `{"error":{"code":400,"message":"* GenerateContentRequest.contents: contents is not specified","status":"INVALID_ARGUMENT"}}`)
		return
	}
	f.add(Received{Header: r.Header.Clone(), Body: body, Model: model})
	if r.Header.Get("X-Goog-Api-Key") == "" {
		f.fail(w, http.StatusForbidden, `{"error":{"code":403,"message":"Method doesn't allow unregistered callers.","status":"PERMISSION_DENIED"}}`)
		return
	}
	switch {
	case model == "err-429":
		f.fail(w, http.StatusTooManyRequests, string(Fixture(f.t, "gemini/error_429.json")))
	case model == "err-400":
		f.fail(w, http.StatusBadRequest, string(Fixture(f.t, "gemini/error_400.json")))
	case model == "midstream-error" && stream:
		f.replay(w, "gemini/midstream_error.sse")
	case model == "tool-call" && !req.afterTool():
		if stream {
			f.replay(w, "gemini/stream_tool_call.sse")
		} else {
			f.json(w, "gemini/tool_call.json")
		}
	case model == "tool-call":
		f.json(w, "gemini/after_tool.json")
	case stream:
		f.replay(w, "gemini/stream.sse")
	default:
		f.json(w, "gemini/generate.json")
	}
}

func (f *Gemini) fail(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func (f *Gemini) json(w http.ResponseWriter, name string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(Fixture(f.t, name))
}

// replay sends a recorded stream event by event, flushing each, with a
// short pause so clients see them arrive separately.
func (f *Gemini) replay(w http.ResponseWriter, name string) {
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for _, ev := range bytes.SplitAfter(Fixture(f.t, name), []byte("\n\n")) {
		if len(bytes.TrimSpace(ev)) == 0 {
			continue
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		_ = rc.Flush()
		time.Sleep(time.Millisecond)
	}
}
