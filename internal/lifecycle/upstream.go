package lifecycle

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

// Upstream is a billed request's call to its vendor: the context its
// adapter runs under, which tells whether the vendor has the request (from
// then on the vendor bills at least the prompt), and, for a model whose
// usage can hold tokens its answer does not show (billing.ModelPrice.
// Reasoning), the drain: the call is not cancelled when the client leaves
// but read on without forwarding, until the vendor's usage arrives or
// Core.DrainTimeout has passed since the client left, and the server's
// shutdown bounds it as any request (see streamend.go). It also bounds the
// wait for the answer's first byte (Core.FirstByte; Tries.Call adds the
// deadline of a request's tries). A nil *Upstream (no billing, a free model
// without a first-byte timeout) runs under the request's own context.
type Upstream struct {
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

// CallUpstream prepares r's call to its vendor, billed by c. Call end once
// the call is over (its stream closed).
func (h *Core) CallUpstream(r *http.Request, c *Charge) *Upstream {
	var first time.Duration
	if h.FirstByte != nil {
		first = h.FirstByte(reqinfo.From(r.Context()).Model)
	}
	if (c == nil || c.Free()) && first == 0 {
		return nil // nothing to charge, so nothing to learn (and no first-byte bound beyond the adapter's)
	}
	u := &Upstream{}
	u.sent.FirstByte = first
	parent := r.Context()
	if c != nil && c.Price.Reasoning {
		detached, cancel := server.Detach(parent)
		u.cancel, u.bound = cancel, h.DrainTimeout
		u.unwatch = context.AfterFunc(parent, u.Leave)
		parent = detached
	}
	u.sent.Track(parent)
	return u
}

// Ctx is the context to give the adapter.
func (u *Upstream) Ctx(r *http.Request) context.Context {
	if u == nil {
		return r.Context()
	}
	return &u.sent
}

// answered reports whether the vendor's answer had begun to arrive.
func (u *Upstream) answered() bool { return u != nil && u.sent.Answered() }

// Drains reports whether the call is read on after its client left.
func (u *Upstream) Drains() bool { return u != nil && u.cancel != nil }

// Leave starts the drain's bound: the client left, or was too slow to take
// a write. It runs once; a call that does not drain has no bound.
func (u *Upstream) Leave() {
	if !u.Drains() {
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

// End releases the call's context and timer.
func (u *Upstream) End() {
	if !u.Drains() {
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

// Owes is what a request owes whose call to the vendor ended without the
// vendor's usage.
type Owes int

const (
	OwesNothing Owes = iota // the vendor never had the request, or said it failed
	OwesCount               // the gateway's count of the prompt and of what was delivered
	OwesHeld                // the reservation: the vendor's usage may hold tokens nobody saw
)

// Owed is what a request owes whose call to the vendor ended without the
// vendor's usage: err is how it ended (nil: an answer without usage),
// delivered whether part of the answer reached the client. See the table
// in streamend.go.
func (u *Upstream) Owed(err error, delivered bool) Owes {
	failed := err != nil && provider.VendorFailed(err)
	sent := u != nil && u.sent.Sent()
	switch {
	case delivered && failed:
		return OwesCount // the vendor broke off: the client pays for what it was sent
	case failed:
		return OwesNothing // vendors bill nothing they answer with an error
	case u.Drains() && err != nil && sent:
		return OwesHeld
	case delivered || sent:
		return OwesCount
	}
	return OwesNothing
}

// SettleOwed charges what o says; count is the gateway's count of the
// prompt and of what was delivered, which the record shows (estimated).
func (c *Charge) SettleOwed(o Owes, count func() provider.Usage, out *Outcome) {
	if c == nil {
		return
	}
	if o == OwesNothing {
		c.Release()
		return
	}
	out.Usage, out.Estimated = count(), true
	out.Usage.TotalTokens = out.Usage.PromptTokens + out.Usage.CompletionTokens
	if o == OwesHeld {
		out.Cost = c.SettleCost(c.Held())
		return
	}
	cost, err := c.UsageCost(&out.Usage) // at the tier asked, with the tool calls seen
	if err != nil {
		cost = c.Held() // absurd counts: charge the reservation, never nothing
	}
	out.Cost = c.SettleCost(cost)
}

// SettleHeld charges the reservation for a request whose vendor had it
// but whose answer never came (images, transcriptions: the vendor makes
// the whole answer whether or not the client waits), else releases it.
func (c *Charge) SettleHeld(o Owes) money.Micros {
	if o == OwesNothing {
		c.Release()
		return 0
	}
	return c.SettleCost(c.Held())
}

// PromptCount is the gateway's count of the request's prompt, as it was
// admitted: a chat body's, a legacy completion's prompt, AdmitBody's
// count. Nothing without billing.
func (c *Charge) PromptCount() provider.Usage {
	if c == nil {
		return provider.Usage{}
	}
	return provider.Usage{PromptTokens: c.promptTokens()}
}

// ClientGone reports whether r's client went away: its context ended, and
// not by the server's shutdown.
func ClientGone(r *http.Request) bool {
	ctx := r.Context()
	return ctx.Err() != nil && !errors.Is(context.Cause(ctx), apierr.ErrShuttingDown)
}

// UsageStream is what a drain reads: a chat stream or a Responses event
// stream.
type UsageStream interface {
	Next() bool
	Usage() (provider.Usage, bool)
}

// DrainStream reads st on without forwarding it, until the vendor's usage
// arrives or st ends; the call's context bounds it (see upstream).
func DrainStream(st UsageStream, each func()) {
	for st.Next() {
		if each != nil {
			each()
		}
		if _, ok := st.Usage(); ok {
			return
		}
	}
}
