// Package openai serves the gateway's OpenAI-compatible /v1 API: it
// authenticates, validates, routes to a provider, streams the answer back
// event by event, and leaves a usage record for every request whose key it
// authenticated (the others are only counted, see Handler.Refused).
package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/background"
	"github.com/modelgate/modelgate/internal/chain"
	chg "github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/server"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/telemetry"
)

// Authenticator turns an Authorization header into a principal.
type Authenticator interface {
	Authenticate(ctx context.Context, header string) (gate.Principal, error)
}

// Recorder takes usage records off the hot path (usage.Recorder has it).
type Recorder interface {
	Record(store.UsageRecord)
}

// Refusals counts the requests that end without an authenticated account
// (refused.Counter has it); they leave no usage record.
type Refusals interface {
	Add(reason, remote string)
}

// KeyRefusals counts the requests of authenticated keys refused before any
// upstream call (usage.Refusals has it); they leave no usage record each.
type KeyRefusals interface {
	Count(store.RefusalCount)
}

// Metrics counts requests and streams for the metrics endpoint
// (telemetry.Metrics has it); the handler calls it from record, once per
// request, and around each relayed stream.
type Metrics interface {
	Request(telemetry.Request)
	StreamStarted()
	StreamEnded()
}

// Handler serves /v1. All fields are required except Log and Now.
type Handler struct {
	Auth    Authenticator
	Policy  *gate.Policy
	Router  *route.Router
	Usage   Recorder
	Billing *chg.Billing // nil: nothing is charged (tests of other parts only)
	MaxBody int64        // request bodies above this get 413
	Log     *slog.Logger
	Now     func() time.Time

	// Images keeps the images answered as URLs when the vendor sent base64
	// (nil: such requests fail; b64_json still works).
	Images *imagestore.Store

	// Origin is the base of the image and video links the handler makes;
	// never the request's Host (the zero Origin: the listener's address).
	Origin server.Origin

	// Refused counts the requests that end without an authenticated
	// account, by error code (nil: they are not counted).
	Refused Refusals

	// KeyRefusals counts the requests of authenticated keys refused
	// before any upstream call (nil: each leaves a usage record).
	KeyRefusals KeyRefusals

	// Metrics counts every request once it is recorded (nil: no metrics).
	Metrics Metrics

	// Tracer exports a span per request and per upstream try once it is
	// recorded (nil: no traces).
	Tracer *telemetry.Tracer

	// Responses records which account created each vendor-stored response
	// (nil: nothing is recorded and no stored response can be read).
	Responses store.Responses

	// Chains records the sizes of stored responses as their answers end,
	// for requests that continue them (nil: only sizes known when a
	// response is saved are recorded; the others reserve their bound).
	Chains *chain.Sizes

	// WriteTimeout bounds how long one write (or flush) of a stream may
	// block on a client that does not read; the stream then ends as
	// client_too_slow and the client pays for what it was sent (0: no bound).
	WriteTimeout time.Duration

	// DrainTimeout is how long, once its client left, the gateway reads on
	// the answer of a model whose usage can hold tokens the answer does not
	// show, to charge the vendor's usage; past it the reservation is
	// charged (0: at once). See streamend.go.
	DrainTimeout time.Duration

	// Videos serves the video endpoints (nil: they answer 404).
	Videos *Videos

	// Background keeps background Responses requests as tasks until they
	// are settled (nil: background: true is refused).
	Background *background.Service

	// RateLimits counts keys' requests and tokens against their rate
	// limits (nil: no limit is enforced).
	RateLimits *RateLimits

	// Retry bounds each request's tries across the deployments of its
	// model (zero fields: route.Retry's defaults).
	Retry route.Retry

	// FirstByte is the longest wait for the first byte of a model's
	// answer, when it differs from its provider's idle_timeout (nil or 0:
	// it does not).
	FirstByte func(model string) time.Duration
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
	mux.Handle("/v1/responses/{id}/cancel", h.only(http.MethodPost, h.cancelResponse))
	mux.Handle("/v1/models", h.only(http.MethodGet, h.listModels))
	mux.Handle("/v1/models/{model...}", h.only(http.MethodGet, h.getModel))
	h.videoRoutes(mux)
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

// authenticate checks the key, notes who is calling, and counts the
// request against the key's rate limits (see limit).
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request, info *reqinfo.Info) (gate.Principal, error) {
	p, err := h.Auth.Authenticate(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		return p, err
	}
	info.KeyID, info.AccountID = p.KeyID, p.AccountID
	return p, h.limit(w, p, info)
}

// refuse counts a request that ended without an authenticated account
// (see record). Only failures count: a download of a signed image link
// needs no key and is no refusal.
func (h *Handler) refuse(info *reqinfo.Info, status int) {
	if h.Refused == nil || status < http.StatusBadRequest {
		return
	}
	reason := info.ErrCode
	if reason == "" {
		reason = "http_" + strconv.Itoa(status)
	}
	h.Refused.Add(reason, info.Remote)
}

// readJSON reads a JSON request body within the size limit.
func (h *Handler) readJSON(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	// The SDKs send exactly "application/json": no need to parse it (a
	// map for its parameters on every request).
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
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
	body, err := readBody(r.Context(), http.MaxBytesReader(w, r.Body, h.MaxBody), r.ContentLength, h.MaxBody)
	if err != nil {
		var mbe *http.MaxBytesError
		var ae *apierr.Error
		switch {
		case errors.As(err, &mbe):
			return nil, tooLarge(h.MaxBody)
		case errors.As(err, &ae): // 408 from the server's read deadline, 503 from its memory budget
			return nil, ae
		}
		return nil, &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: apierr.CodeInvalidRequest,
			Message: "The request body could not be read.", Err: err}
	}
	return body, nil
}

// firstBodyBuffer is the buffer a body of unknown or large size starts in.
const firstBodyBuffer = 16 << 10

// readBody reads r (which stops at limit) whole. The buffer grows with the
// bytes that arrive, doubling, never from what Content-Length (declared,
// -1 when unknown) announces: a client that declares 20 MB and sends one
// byte costs 16 KiB. The declared size only trims the last growth so an
// honest body ends in a buffer of its size. Every growth is held against
// the server's body memory budget first (server.HoldBody).
func readBody(ctx context.Context, r io.Reader, declared, limit int64) ([]byte, error) {
	size := int64(firstBodyBuffer)
	if declared >= 0 && declared+1 < size {
		size = declared + 1 // +1: room to see the end
	}
	if err := server.HoldBody(ctx, size); err != nil {
		return nil, err
	}
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			next := 2 * int64(cap(b))
			if declared >= int64(len(b)) && declared+1 < next {
				next = declared + 1
			}
			next = min(next, limit+1)
			if next <= int64(cap(b)) { // cannot happen: r stops at limit
				next = int64(cap(b)) + firstBodyBuffer
			}
			if err := server.HoldBody(ctx, next-int64(cap(b))); err != nil {
				return nil, err
			}
			nb := make([]byte, len(b), next)
			copy(nb, b)
			b = nb
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

// fail answers with err and notes it for the log and the usage record.
func (h *Handler) fail(w http.ResponseWriter, info *reqinfo.Info, err error) {
	e := apierr.Write(w, err)
	info.Status, info.ErrCode = e.Status, e.Code
	if e.Err != nil {
		info.ErrDetail = e.Err.Error()
	}
	if provider.VendorFailed(err) {
		info.Upstreamed, info.VendorFailed = true, true
	}
}

// streamFailed notes err, the upstream failure that ended a stream whose
// answer had started (so the upstream had the request), and returns it
// as the client is told.
func streamFailed(info *reqinfo.Info, err error) *apierr.Error {
	e := apierr.From(err)
	info.Status, info.ErrCode, info.Upstreamed = e.Status, e.Code, true
	info.VendorFailed = provider.VendorFailed(err)
	if e.Err != nil {
		info.ErrDetail = e.Err.Error()
	}
	return e
}
