package provider

import (
	"context"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// RequestSent tells whether the vendor has a request: once it does, the
// vendor bills at least its prompt, whether or not the client waits for the
// answer. A handler makes one the context of its adapter call (Track); every
// exchange an adapter starts under it (StartCall) reports, through
// net/http/httptrace, when its request was written whole to the vendor's
// connection. So every HTTP adapter is covered without doing anything
// itself, and only its exchanges with the vendor count: an image URL an
// adapter downloads before its call (Gemini) is not the vendor's request.
//
// It is a context itself (the parent's, with itself as a value), so that
// tracking a request costs no context of its own.
type RequestSent struct {
	context.Context
	// FirstByte, when set, bounds the wait for the first byte of each
	// exchange's answer instead of the adapter's idle timeout (a model
	// slower or faster to start than its provider's others).
	FirstByte time.Duration
	// Until, when set, is when the request stops waiting for a first
	// byte whatever the timeouts say (routing.deadline: the whole request
	// before its first byte, retries included).
	Until    time.Time
	trace    httptrace.ClientTrace
	sent     atomic.Bool
	answered atomic.Bool
}

// sentKey finds the RequestSent in a context.
type sentKey struct{}

// Track makes s the context of an upstream call under parent and returns
// it. s must not be copied afterwards.
func (s *RequestSent) Track(parent context.Context) context.Context {
	s.Context = parent
	s.trace.WroteRequest = s.wrote
	s.trace.GotFirstResponseByte = s.gotFirst
	return s
}

// Value implements context.Context: s under its key, else the parent's.
func (s *RequestSent) Value(key any) any {
	if key == (sentKey{}) {
		return s
	}
	return s.Context.Value(key)
}

// Sent reports whether the vendor has the request (false for a nil s).
func (s *RequestSent) Sent() bool { return s != nil && s.sent.Load() }

// Answered reports whether the vendor's answer had begun to arrive (its
// first byte): a failure after it is not "before the first byte", and the
// request is not tried again elsewhere.
func (s *RequestSent) Answered() bool { return s != nil && s.answered.Load() }

func (s *RequestSent) gotFirst() { s.answered.Store(true) }

// Mark notes that the vendor has the request, for an adapter that reaches
// its vendor other than over HTTP.
func (s *RequestSent) Mark() { s.sent.Store(true) }

// wrote is the exchange's httptrace hook: the request (headers and body)
// was written whole.
func (s *RequestSent) wrote(i httptrace.WroteRequestInfo) {
	if i.Err == nil {
		s.sent.Store(true)
	}
}

// traced returns ctx with s's hook, for an exchange starting under ctx; a
// context that has it already (an exchange under another's) is returned as
// it is.
func traced(ctx context.Context) context.Context {
	s, ok := sentIn(ctx)
	if !ok || httptrace.ContextClientTrace(ctx) == &s.trace {
		return ctx
	}
	return httptrace.WithClientTrace(ctx, &s.trace)
}

// sentIn finds the RequestSent ctx runs under.
func sentIn(ctx context.Context) (*RequestSent, bool) {
	s, ok := ctx.Value(sentKey{}).(*RequestSent)
	return s, ok
}
