// Package openai serves the gateway's OpenAI-compatible /v1 API: it
// authenticates, validates, routes to a provider, streams the answer back
// event by event, and leaves a usage record for every request.
package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/store"
)

// Authenticator turns an Authorization header into a principal.
type Authenticator interface {
	Authenticate(ctx context.Context, header string) (gate.Principal, error)
}

// Recorder takes usage records off the hot path (usage.Recorder has it).
type Recorder interface {
	Record(store.UsageRecord)
}

// Handler serves /v1. All fields are required except Log and Now.
type Handler struct {
	Auth    Authenticator
	Policy  *gate.Policy
	Router  *route.Router
	Usage   Recorder
	Billing *Billing // nil: nothing is charged (tests of other parts only)
	MaxBody int64    // request bodies above this get 413
	Log     *slog.Logger
	Now     func() time.Time

	// Images keeps the images answered as URLs when the vendor sent base64
	// (nil: such requests fail; b64_json still works).
	Images *imagestore.Store

	// Responses records which account created each vendor-stored response
	// (nil: nothing is recorded and no stored response can be read).
	Responses store.Responses
}

// Routes registers the /v1 endpoints and a JSON 404 for everything else.
func (h *Handler) Routes(mux *http.ServeMux) {
	mux.Handle("/v1/chat/completions", h.only(http.MethodPost, h.chat))
	mux.Handle("/v1/completions", h.only(http.MethodPost, h.completions))
	mux.Handle("/v1/embeddings", h.only(http.MethodPost, h.embeddings))
	mux.Handle("/v1/images/generations", h.only(http.MethodPost, h.imageGenerations))
	mux.Handle("/v1/images/edits", h.only(http.MethodPost, h.imageEdits))
	mux.Handle("/v1/audio/transcriptions", h.only(http.MethodPost, h.transcriptions))
	mux.Handle("/v1/responses", h.only(http.MethodPost, h.responses))
	mux.Handle("/v1/responses/{id}", h.only(http.MethodGet, h.getResponse))
	mux.Handle("/v1/models", h.only(http.MethodGet, h.listModels))
	mux.Handle("/v1/models/{model...}", h.only(http.MethodGet, h.getModel))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		info := reqinfo.From(r.Context())
		info.Endpoint = "unknown"
		defer h.record(info, &outcome{})
		h.fail(w, info, &apierr.Error{Status: http.StatusNotFound, Type: apierr.TypeInvalidRequest, Code: apierr.CodeNotFound,
			Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)})
	})
}

func (h *Handler) only(method string, f http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			info := reqinfo.From(r.Context())
			info.Endpoint = "unknown"
			defer h.record(info, &outcome{})
			w.Header().Set("Allow", method)
			h.fail(w, info, &apierr.Error{Status: http.StatusMethodNotAllowed, Type: apierr.TypeInvalidRequest,
				Code: apierr.CodeMethodNotAllowed, Message: fmt.Sprintf("Method %s is not allowed on %s; use %s.", r.Method, r.URL.Path, method)})
			return
		}
		f(w, r)
	})
}

func (h *Handler) log() *slog.Logger {
	if h.Log != nil {
		return h.Log
	}
	return slog.Default()
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// authenticate checks the key and notes who is calling.
func (h *Handler) authenticate(r *http.Request, info *reqinfo.Info) (gate.Principal, error) {
	p, err := h.Auth.Authenticate(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		return p, err
	}
	info.KeyID, info.AccountID = p.KeyID, p.AccountID
	return p, nil
}

// readJSON reads a JSON request body within the size limit.
func (h *Handler) readJSON(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, &apierr.Error{Status: http.StatusUnsupportedMediaType, Type: apierr.TypeInvalidRequest,
				Code: apierr.CodeUnsupportedMedia, Message: fmt.Sprintf("Unsupported Content-Type %q: send 'application/json'.", ct)}
		}
		if cs, ok := params["charset"]; ok && !equalFold(cs, "utf-8") {
			return nil, &apierr.Error{Status: http.StatusUnsupportedMediaType, Type: apierr.TypeInvalidRequest,
				Code: apierr.CodeUnsupportedMedia, Message: fmt.Sprintf("Unsupported charset %q: JSON bodies must be UTF-8.", cs)}
		}
	}
	if r.ContentLength > h.MaxBody {
		return nil, tooLarge(h.MaxBody)
	}
	size := r.ContentLength
	if size < 0 {
		size = 4096
	}
	buf := make([]byte, 0, size+1)
	body, err := readAll(http.MaxBytesReader(w, r.Body, h.MaxBody), buf)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(h.MaxBody)
		}
		return nil, &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: apierr.CodeInvalidRequest,
			Message: "The request body could not be read.", Err: err}
	}
	return body, nil
}

func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

func tooLarge(limit int64) *apierr.Error {
	return &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest, Code: apierr.CodeRequestTooLarge,
		Message: fmt.Sprintf("The request body is larger than the gateway's limit of %d bytes.", limit)}
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i]|0x20, b[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// fail answers with err and notes it for the log.
func (h *Handler) fail(w http.ResponseWriter, info *reqinfo.Info, err error) {
	e := apierr.Write(w, err)
	info.Status, info.ErrCode = e.Status, e.Code
	if e.Err != nil {
		info.ErrDetail = e.Err.Error()
	}
}
