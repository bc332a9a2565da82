package openai

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/server"
)

// errDrainBound ends a drained upstream call once drain_timeout has passed
// since its client left.
var errDrainBound = errors.New("drain_timeout passed after the client left")

// upstream is a billed request's call to its vendor: the context its
// adapter runs under, which tells whether the vendor has the request (from
// then on the vendor bills at least the prompt), and, for a model whose
// usage can hold tokens its answer does not show (billing.ModelPrice.
// Reasoning), the drain: the call is not cancelled when the client leaves
// but read on without forwarding, until the vendor's usage arrives or
// Handler.DrainTimeout has passed since the client left, and the server's
// shutdown bounds it as any request (see streamend.go). It also bounds the
// wait for the answer's first byte (Handler.FirstByte; tries.call adds the
// deadline of a request's tries). A nil *upstream (no billing, a free model
// without a first-byte timeout) runs under the request's own context.
type upstream struct {
	sent provider.RequestSent // the adapter's context

	// Drained calls only: the call's context is not cancelled by the
	// client leaving, but by cancel.
	cancel  context.CancelCauseFunc
	bound   time.Duration
	unwatch func() bool // stops watching the client's context

	mu    sync.Mutex
	left  bool        // the client left (or the call ended): the bound runs
	timer *time.Timer // the bound
}

// callUpstream prepares r's call to its vendor, billed by c. Call end once
// the call is over (its stream closed).
func (h *Handler) callUpstream(r *http.Request, c *charge) *upstream {
	var first time.Duration
	if h.FirstByte != nil {
		first = h.FirstByte(reqinfo.From(r.Context()).Model)
	}
	if (c == nil || c.Free()) && first == 0 {
		return nil // nothing to charge, so nothing to learn (and no first-byte bound beyond the adapter's)
	}
	u := &upstream{}
	u.sent.FirstByte = first
	parent := r.Context()
	if c != nil && c.Price.Reasoning {
		detached, cancel := server.Detach(parent)
		u.cancel, u.bound = cancel, h.DrainTimeout
		u.unwatch = context.AfterFunc(parent, u.leave)
		parent = detached
	}
	u.sent.Track(parent)
	return u
}

// ctx is the context to give the adapter.
func (u *upstream) ctx(r *http.Request) context.Context {
	if u == nil {
		return r.Context()
	}
	return &u.sent
}

// answered reports whether the vendor's answer had begun to arrive.
func (u *upstream) answered() bool { return u != nil && u.sent.Answered() }

// drains reports whether the call is read on after its client left.
func (u *upstream) drains() bool { return u != nil && u.cancel != nil }

// leave starts the drain's bound: the client left, or was too slow to take
// a write. It runs once; a call that does not drain has no bound.
func (u *upstream) leave() {
	if !u.drains() {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.left {
		return
	}
	u.left = true
	u.timer = time.AfterFunc(u.bound, func() { u.cancel(errDrainBound) })
}

// end releases the call's context and timer.
func (u *upstream) end() {
	if !u.drains() {
		return
	}
	u.unwatch()
	u.mu.Lock()
	u.left = true // no bound starts after this
	if u.timer != nil {
		u.timer.Stop()
	}
	u.mu.Unlock()
	u.cancel(context.Canceled)
}

// owes is what a request owes whose call to the vendor ended without the
// vendor's usage.
type owes int

const (
	owesNothing owes = iota // the vendor never had the request, or said it failed
	owesCount               // the gateway's count of the prompt and of what was delivered
	owesHeld                // the reservation: the vendor's usage may hold tokens nobody saw
)

// owed is what a request owes whose call to the vendor ended without the
// vendor's usage: err is how it ended (nil: an answer without usage),
// delivered whether part of the answer reached the client. See the table
// in streamend.go.
func (u *upstream) owed(err error, delivered bool) owes {
	failed := err != nil && provider.VendorFailed(err)
	sent := u != nil && u.sent.Sent()
	switch {
	case delivered && failed:
		return owesCount // the vendor broke off: the client pays for what it was sent
	case failed:
		return owesNothing // vendors bill nothing they answer with an error
	case u.drains() && err != nil && sent:
		return owesHeld
	case delivered || sent:
		return owesCount
	}
	return owesNothing
}

// settleOwed charges what o says; count is the gateway's count of the
// prompt and of what was delivered, which the record shows (estimated).
func (c *charge) settleOwed(o owes, count func() provider.Usage, out *outcome) {
	if c == nil {
		return
	}
	if o == owesNothing {
		c.release()
		return
	}
	out.usage, out.estimated = count(), true
	out.usage.TotalTokens = out.usage.PromptTokens + out.usage.CompletionTokens
	if o == owesHeld {
		out.cost = c.settleCost(c.held())
		return
	}
	cost, err := c.usageCost(&out.usage) // at the tier asked, with the tool calls seen
	if err != nil {
		cost = c.held() // absurd counts: charge the reservation, never nothing
	}
	out.cost = c.settleCost(cost)
}

// settleHeld charges the reservation for a request whose vendor had it
// but whose answer never came (images, transcriptions: the vendor makes
// the whole answer whether or not the client waits), else releases it.
func (c *charge) settleHeld(o owes) money.Micros {
	if o == owesNothing {
		c.release()
		return 0
	}
	return c.settleCost(c.held())
}

// unanswered settles an image request whose upstream call failed with
// err: once the vendor had it, it makes (and bills) the images it was asked
// for whether or not the client waits, so the reservation is charged.
func (b *imageBill) unanswered(u *upstream, err error, out *outcome) {
	out.cost = b.c.settleHeld(u.owed(err, false))
}

// promptCount is the gateway's count of a chat request's prompt.
func (c *charge) promptCount() provider.Usage {
	n, _ := promptTokens(c.Tok, c.body)
	return provider.Usage{PromptTokens: n}
}

// clientGone reports whether r's client went away: its context ended, and
// not by the server's shutdown.
func clientGone(r *http.Request) bool {
	ctx := r.Context()
	return ctx.Err() != nil && !errors.Is(context.Cause(ctx), apierr.ErrShuttingDown)
}

// answerJSON is writeJSON for an answer the vendor gave: a client that left
// while the gateway waited for it (a drained call) is recorded as gone, and
// nothing is written.
func (h *Handler) answerJSON(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, billed bool, out *outcome, body []byte) {
	if clientGone(r) {
		info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, apierr.CodeClientClosed, "the client left before the answer"
		return
	}
	h.writeJSON(w, info, billed, out, body)
}

// usageStream is what a drain reads: a chat stream or a Responses event
// stream.
type usageStream interface {
	Next() bool
	Usage() (provider.Usage, bool)
}

// drainStream reads st on without forwarding it, until the vendor's usage
// arrives or st ends; the call's context bounds it (see upstream).
func drainStream(st usageStream, each func()) {
	for st.Next() {
		if each != nil {
			each()
		}
		if _, ok := st.Usage(); ok {
			return
		}
	}
}
