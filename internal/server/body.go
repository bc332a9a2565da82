package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
)

// Request bodies are the one thing a key holder can make the gateway hold
// in memory at will, and the one place a client can keep a handler waiting
// for bytes. Two rules bound them:
//
//   - A body must arrive within Options.ReadTimeout of the request's
//     headers (which have their own, shorter ReadHeaderTimeout). The
//     deadline is set per request on the connection
//     (http.ResponseController.SetReadDeadline), only for requests that
//     have a body, and lifted as soon as the body has been read to its
//     end, so it never cuts a long streamed answer. A body that has not
//     arrived in time ends with 408 request_timeout in the OpenAI error
//     shape (not a bare 400 "could not be read") and the connection
//     closed. A handler that answers without reading the body (a 401) is
//     covered too: net/http's discarding of the rest runs into the same
//     deadline instead of waiting on the client forever.
//   - The bytes of request bodies held in memory at once, across all
//     requests, stay within Options.BodyMemory. Readers hold bytes as they
//     put them in memory (HoldBody), never what Content-Length declares;
//     what a request holds is given back when its handler returns. A
//     request that would pass the budget gets 503 server_busy with
//     Retry-After, and its connection is closed.

// busyRetryAfter is the Retry-After of a 503 server_busy: bodies are read
// in seconds, so the budget frees up on that scale.
const busyRetryAfter = 2 * time.Second

// budget is the process-wide count of request-body bytes held in memory.
type budget struct {
	limit int64 // <= 0: unbounded
	used  atomic.Int64
}

// take holds n bytes if they fit.
func (b *budget) take(n int64) bool {
	if b.limit <= 0 {
		b.used.Add(n)
		return true
	}
	for {
		u := b.used.Load()
		if u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// bodyState is one request's share of the budget and what happened to its
// body, so the response can close the connection when the body failed.
type bodyState struct {
	budget    *budget
	held      atomic.Int64
	closeConn atomic.Bool // the body timed out or was refused: close after the answer
}

type bodyKey struct{}

// HoldBody notes that the request of ctx is about to hold n more bytes of
// its body in memory. It returns a 503 server_busy *apierr.Error when that
// would pass the server's budget (then nothing is held), and nil when it
// fits or when ctx is not a request served by this package's middleware
// (handlers under test). What a request holds is given back when its
// handler returns.
func HoldBody(ctx context.Context, n int64) error {
	s, _ := ctx.Value(bodyKey{}).(*bodyState)
	if s == nil || n <= 0 {
		return nil
	}
	if !s.budget.take(n) {
		s.closeConn.Store(true)
		return &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: apierr.CodeServerBusy,
			Message:    "The gateway is holding as many request bodies in memory as it may; retry the request shortly.",
			RetryAfter: busyRetryAfter}
	}
	s.held.Add(n)
	return nil
}

// release gives back everything the request held.
func (s *bodyState) release() {
	if n := s.held.Swap(0); n != 0 {
		s.budget.used.Add(-n)
	}
}

// bodyTimeout is the answer to a body that did not arrive in time.
func bodyTimeout(d time.Duration, cause error) *apierr.Error {
	return &apierr.Error{Status: http.StatusRequestTimeout, Type: apierr.TypeInvalidRequest, Code: apierr.CodeRequestTimeout,
		Message: "The request body did not arrive within " + d.String() + "; the connection is closed.", Err: cause}
}

// timedBody enforces the read deadline on a request body: it lifts the
// deadline at the body's end and turns a deadline error into a 408.
type timedBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	state   *bodyState
	done    bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == nil || b.done {
		return n, err
	}
	b.done = true
	if err == io.EOF {
		// The whole body is here: a streamed answer may now run as long
		// as it needs. (net/http lifts the deadline itself today, when
		// it starts watching for a client that goes away; this does not
		// rely on that.)
		_ = b.rc.SetReadDeadline(time.Time{})
		return n, err
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		b.state.closeConn.Store(true)
		return n, bodyTimeout(b.timeout, err)
	}
	return n, err
}

// newBodyState is a request's share of the budget b.
func newBodyState(b *budget) *bodyState { return &bodyState{budget: b} }

// withBodyState returns ctx carrying s, for HoldBody.
func withBodyState(ctx context.Context, s *bodyState) context.Context {
	return context.WithValue(ctx, bodyKey{}, s)
}

// setReadDeadline puts the read deadline on r's body, when it has one. It
// replaces r.Body, so r must be the middleware's own copy of the request.
func setReadDeadline(w http.ResponseWriter, r *http.Request, s *bodyState, timeout time.Duration) {
	if timeout <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	// The connection's clock, not Options.Now: this is a socket deadline.
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
		r.Body = &timedBody{ReadCloser: r.Body, rc: rc, timeout: timeout, state: s}
	}
}
