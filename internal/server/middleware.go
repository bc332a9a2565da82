// Package server wraps the API handlers in what every request needs (a
// request id, panic recovery, one log line, in-flight tracking) and runs
// the HTTP server with a graceful drain on shutdown.
package server

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// Options configure the middleware.
type Options struct {
	Logger      *slog.Logger
	LogRequests bool
	Now         func() time.Time

	// ReadTimeout is how long a request body may take to arrive after the
	// request's headers (0: no limit); see body.go.
	ReadTimeout time.Duration
	// BodyMemory bounds the request-body bytes held in memory at once,
	// across all requests (0: no bound); see HoldBody.
	BodyMemory int64
	// MaxConns caps the client connections held open (0: no cap); at the
	// cap the longest idle are closed to admit new ones (connlimit.go).
	MaxConns int
}

// tracker counts in-flight requests so shutdown can wait for them.
type tracker struct {
	wg sync.WaitGroup
}

// NewRequestID returns "req_" and 24 hex digits: a 48-bit millisecond
// timestamp then 48 random bits. Time-ordered ids keep the usage table's
// primary-key inserts local (2.5× cheaper in SQLite than random ids) and
// sort by time in logs. The random bits come from the runtime's generator
// (ChaCha8, seeded from the OS per thread): an id must be unique, not
// secret (no one can choose or replay one), and this costs no syscall.
func NewRequestID(now time.Time) string {
	const prefix = "req_"
	var raw [12]byte
	binary.BigEndian.PutUint64(raw[4:], rand.Uint64()) // bytes 6..11 stay random
	ms := uint64(now.UnixMilli())
	for i := 5; i >= 0; i-- {
		raw[i] = byte(ms)
		ms >>= 8
	}
	var b [len(prefix) + 2*len(raw)]byte
	copy(b[:], prefix)
	hex.Encode(b[len(prefix):], raw[:])
	return string(b[:])
}

// recorder remembers the status so the log line and panic recovery know
// whether a response has started. Unwrap keeps http.ResponseController
// (flushes of streams) working through it.
type recorder struct {
	http.ResponseWriter
	status int
	body   *bodyState
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
		r.closeIfBodyFailed()
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
		r.closeIfBodyFailed()
	}
	return r.ResponseWriter.Write(b)
}

// closeIfBodyFailed asks net/http to close the connection after a body
// that timed out or was refused: the rest of it may still be on the wire.
func (r *recorder) closeIfBodyFailed() {
	if r.body != nil && r.body.closeConn.Load() {
		r.Header().Set("Connection", "close")
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// FlushError lets http.ResponseController flush through the wrapper
// without allocating a controller per flush.
func (r *recorder) FlushError() error {
	if f, ok := r.ResponseWriter.(interface{ FlushError() error }); ok {
		return f.FlushError()
	}
	return http.NewResponseController(r.ResponseWriter).Flush()
}

// Flush is here for code that type-asserts http.Flusher.
func (r *recorder) Flush() { _ = r.FlushError() }

func wrap(next http.Handler, o Options, t *tracker, b *budget) http.Handler {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.wg.Add(1)
		defer t.wg.Done()
		start := now()
		info := &reqinfo.Info{ID: NewRequestID(start), Start: start, Remote: r.RemoteAddr, TraceParent: r.Header.Get("Traceparent")}
		w.Header().Set("X-Request-Id", info.ID)
		body := newBodyState(b)
		defer body.release()
		r = r.WithContext(withBodyState(reqinfo.With(r.Context(), info), body))
		setReadDeadline(w, r, body, o.ReadTimeout)
		rec := &recorder{ResponseWriter: w, body: body}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error("panic in handler", "request_id", info.ID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				info.ErrCode, info.ErrDetail = apierr.CodeServer, fmt.Sprint(v)
				if rec.status == 0 {
					apierr.Write(rec, apierr.Internal(fmt.Errorf("panic: %v", v)))
				} else {
					// The response already started: cut the connection so
					// the client cannot take a partial body for a whole one.
					defer panic(http.ErrAbortHandler)
				}
			}
			if o.LogRequests {
				logRequest(r.Context(), log, r, info, rec.status, now().Sub(info.Start))
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

func logRequest(ctx context.Context, log *slog.Logger, r *http.Request, info *reqinfo.Info, status int, d time.Duration) {
	if info.Status != 0 {
		status = info.Status
	}
	level := slog.LevelInfo
	if info.ErrCode != "" && status >= 500 {
		level = slog.LevelWarn
	}
	if !log.Enabled(ctx, level) {
		return // the line would be dropped: do not build it
	}
	attrs := make([]slog.Attr, 0, 11)
	attrs = append(attrs,
		slog.String("request_id", info.ID),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Float64("ms", float64(d.Microseconds())/1000))
	if info.KeyID != "" {
		attrs = append(attrs, slog.String("key", info.KeyID))
	}
	if info.Model != "" {
		attrs = append(attrs, slog.String("model", info.Model))
	}
	if info.Provider != "" {
		attrs = append(attrs, slog.String("provider", info.Provider))
	}
	if info.Stream {
		attrs = append(attrs, slog.Bool("stream", true))
	}
	if info.ErrCode != "" {
		attrs = append(attrs, slog.String("error", info.ErrCode))
		if info.ErrDetail != "" {
			attrs = append(attrs, slog.String("cause", info.ErrDetail))
		}
	}
	log.LogAttrs(ctx, level, "request", attrs...)
}
