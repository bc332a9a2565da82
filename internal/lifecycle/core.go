// Package lifecycle runs one request from authentication to its usage
// record, the same for every front door: authenticate (Core.Authenticate)
// → limit (the key's rate limits, rate-limit headers) → admit (price the
// model, count the key's tokens, reserve the most the request can cost:
// AdmitChat, AdmitCompletion, AdmitBody) → route with failover across the
// model's deployments (Tries) → relay the answer, whole or as a stream
// (Relay, charged by the rules in streamend.go) → settle the charge →
// record the usage (Core.Record). A door (internal/api/openai,
// internal/api/anthropic) decodes, validates and encodes its own wire
// format and calls Core for everything in between; the chat exchange
// itself is Core.Chat, which speaks through the door's ChatEncoder. This
// package imports no door.
package lifecycle

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
	chg "github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/gate"
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

// Core is the part of a request's life every front door shares. All
// fields are required except Log and Now and those whose nil is documented.
// A door embeds it (or holds it) and calls its steps in order.
type Core struct {
	Auth    Authenticator
	Policy  *gate.Policy
	Router  *route.Router
	Usage   Recorder
	Billing *chg.Billing // nil: nothing is charged (tests of other parts only)
	MaxBody int64        // request bodies above this get 413
	Log     *slog.Logger
	Now     func() time.Time

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

	// WriteTimeout bounds how long one write (or flush) of a stream may
	// block on a client that does not read; the stream then ends as
	// client_too_slow and the client pays for what it was sent (0: no bound).
	WriteTimeout time.Duration

	// DrainTimeout is how long, once its client left, the gateway reads on
	// the answer of a model whose usage can hold tokens the answer does not
	// show, to charge the vendor's usage; past it the reservation is
	// charged (0: at once). See streamend.go.
	DrainTimeout time.Duration

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

// Logger is Log, else the default logger.
func (h *Core) Logger() *slog.Logger {
	if h.Log != nil {
		return h.Log
	}
	return slog.Default()
}

// Clock is Now(), else the wall clock.
func (h *Core) Clock() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Authenticate checks the key given as an Authorization header value
// ("Bearer sk-…"; the door picks the header: the Anthropic door passes
// "Bearer "+x-api-key), notes who is calling on info, and counts the
// request against the key's rate limits (see limit).
func (h *Core) Authenticate(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, authorization string) (gate.Principal, error) {
	p, err := h.Auth.Authenticate(r.Context(), authorization)
	if err != nil {
		return p, err
	}
	info.KeyID, info.AccountID = p.KeyID, p.AccountID
	return p, h.limit(w, p, info)
}

// refuse counts a request that ended without an authenticated account
// (see record). Only failures count: a download of a signed image link
// needs no key and is no refusal.
func (h *Core) refuse(info *reqinfo.Info, status int) {
	if h.Refused == nil || status < http.StatusBadRequest {
		return
	}
	reason := info.ErrCode
	if reason == "" {
		reason = "http_" + strconv.Itoa(status)
	}
	h.Refused.Add(reason, info.Remote)
}

// ReadJSON reads a JSON request body within the size limit.
func (h *Core) ReadJSON(w http.ResponseWriter, r *http.Request) ([]byte, error) {
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

// Note notes err, the error a request ends with before anything of its
// answer was written, for the log and the usage record, and returns it as
// the client is to be told (apierr.From). A door writes it in its own
// format.
func Note(info *reqinfo.Info, err error) *apierr.Error {
	e := apierr.From(err)
	info.Status, info.ErrCode = e.Status, e.Code
	if e.Err != nil {
		info.ErrDetail = e.Err.Error()
	}
	if provider.VendorFailed(err) {
		info.Upstreamed, info.VendorFailed = true, true
	}
	return e
}

// StreamFailed notes err, the upstream failure that ended a stream whose
// answer had started (so the upstream had the request), and returns it
// as the client is told.
func StreamFailed(info *reqinfo.Info, err error) *apierr.Error {
	e := apierr.From(err)
	info.Status, info.ErrCode, info.Upstreamed = e.Status, e.Code, true
	info.VendorFailed = provider.VendorFailed(err)
	if e.Err != nil {
		info.ErrDetail = e.Err.Error()
	}
	return e
}
