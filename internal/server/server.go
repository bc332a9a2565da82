package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
)

// Server is the HTTP server with a graceful drain.
type Server struct {
	http  *http.Server
	t     *tracker
	mem   *budget
	drain time.Duration
	log   *slog.Logger
	abort func()     // cancels every request's context after the drain period
	limit *connLimit // nil: connections are not capped
}

// New wraps h with the middleware. drain is how long shutdown waits for
// in-flight requests (streams included) before cancelling them.
func New(h http.Handler, drain time.Duration, o Options) *Server {
	t := &tracker{}
	aborted, cancel := context.WithCancelCause(context.Background())
	abort := func() { cancel(apierr.ErrShuttingDown) }
	base := context.WithValue(aborted, abortKey{}, aborted) // for Detach
	s := &Server{t: t, mem: &budget{limit: o.BodyMemory}, drain: drain, log: o.Logger, abort: abort}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	// Headers get at most 10 s (slowloris), less when bodies get less.
	headerTimeout := 10 * time.Second
	if o.ReadTimeout > 0 && o.ReadTimeout < headerTimeout {
		headerTimeout = o.ReadTimeout
	}
	s.http = &http.Server{
		Handler:           wrap(h, o, t, s.mem),
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	if o.MaxConns > 0 {
		now := o.Now
		if now == nil {
			now = time.Now
		}
		s.limit = newConnLimit(o.MaxConns, s.log, now)
		s.http.ConnState = s.limit.state
	}
	return s
}

// Handler is the wrapped handler (for tests that use httptest.Server).
func (s *Server) Handler() http.Handler { return s.http.Handler }

// BodyMemoryHeld is how many request-body bytes the requests in flight
// hold against Options.BodyMemory (for tests and metrics).
func (s *Server) BodyMemoryHeld() int64 { return s.mem.used.Load() }

// Serve answers on ln until ctx is cancelled, then stops accepting, waits
// up to the drain period for in-flight requests, cancels the rest, and
// returns once every handler has returned, so whatever they record is
// recorded before the caller flushes it.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.limit != nil {
		ln = s.limit.limited(ln)
		defer s.limit.stop() // log the connections closed since the last line
	}
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(ln) }()
	select {
	case err := <-errc:
		s.abort()
		s.t.wg.Wait()
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down: draining in-flight requests", "timeout", s.drain.String())
	sctx, cancel := context.WithTimeout(context.Background(), s.drain)
	defer cancel()
	err := s.http.Shutdown(sctx)
	if err != nil {
		s.log.Warn("drain period over: cancelling the remaining requests")
	}
	s.abort()
	s.t.wg.Wait()
	if e := <-errc; e != nil && !errors.Is(e, http.ErrServerClosed) {
		return fmt.Errorf("server: %w", e)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return nil // the requests were cancelled and recorded as such
	}
	return err
}

// abortKey finds, in a request's context, the context the server cancels
// when its drain period ends.
type abortKey struct{}

// Detach returns a context for work a request must finish after its client
// left (reading a vendor's answer on, to charge what the vendor bills): it
// carries ctx's values and is not cancelled when the client goes away, but
// is cancelled with apierr.ErrShuttingDown when the server's drain period
// ends, as every request is, so shutdown stays within its bound. Call
// cancel once the work is over.
func Detach(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	d, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	aborted, ok := ctx.Value(abortKey{}).(context.Context)
	if !ok {
		return d, cancel // not served by a Server (tests of handlers)
	}
	stop := context.AfterFunc(aborted, func() { cancel(context.Cause(aborted)) })
	return d, func(cause error) {
		stop()
		cancel(cause)
	}
}
