package lifecycle

import (
	"fmt"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
)

// Tries walks one request's candidates (a route.Plan) under the core's
// retry policy: it gives the deployment to try, records each try on the
// request (reqinfo.Info.Attempts, which the usage record and the metrics
// show), reports it to the provider's health, and decides whether another
// may follow. Nothing here ever retries once a byte of the answer has gone
// to the client: the handlers only try again on an error returned before
// they wrote anything.
type Tries struct {
	h     *Core
	info  *reqinfo.Info
	plan  route.Plan
	start time.Time // of the try in flight
	last  error     // the last try's error
	lastF provider.Failure
	lastS int // the last try's upstream status
	// wait is false when the next try needs no backoff (another key of
	// the same provider, after the vendor refused one).
	wait bool
	// until is when no try may still wait for a first byte: the retry
	// deadline, on the wall clock (set by the first next).
	until time.Time
	// streaming: the try that answered is a stream whose end is not yet
	// reported to its provider's health (opened); firstChunk its latency.
	streaming  bool
	firstChunk time.Duration
}

// NewTries starts the walk over the deployments of model that can serve
// the endpoint (can: nil when every adapter can).
func (h *Core) NewTries(info *reqinfo.Info, model string, can func(provider.Chatter) bool) *Tries {
	return &Tries{h: h, info: info, plan: h.Router.Plan(model, can)}
}

// Next gives the deployment (and adapter of the key) to try now. Before a
// try other than the first it waits the backoff, unless the deadline would
// pass or the client leaves first. Its error is the one to answer with:
// the last try's own when the walk ends there, or 503 when nothing can
// serve (see unavailable).
func (t *Tries) Next(r *http.Request) (route.Deployment, provider.Chatter, error) {
	n := len(t.info.Attempts)
	pol := t.h.Retry.WithDefaults()
	if n > 0 {
		if !t.retryable() || n >= pol.MaxAttempts {
			return route.Deployment{}, nil, t.final()
		}
		if t.wait {
			wait := pol.Delay(n + 1)
			if t.h.Clock().Add(wait).Sub(t.info.Start) > pol.Deadline {
				return route.Deployment{}, nil, t.final()
			}
			if err := sleep(r, wait); err != nil {
				return route.Deployment{}, nil, err
			}
		}
	}
	if n == 0 {
		t.until = time.Now().Add(pol.Deadline)
	}
	d, ch, ok := t.plan.Next()
	if !ok {
		if n == 0 {
			return d, nil, t.unavailable()
		}
		return d, nil, t.final()
	}
	t.info.Provider, t.info.Upstream = d.Provider, d.Upstream
	t.start = t.h.Clock()
	return d, ch, nil
}

// Call prepares the call of the try next gave: h.CallUpstream, bounded by
// the deadline of the request's tries (a free model's, unbilled, only by
// its provider's timeouts).
func (t *Tries) Call(r *http.Request, c *Charge) *Upstream {
	u := t.h.CallUpstream(r, c)
	if u != nil {
		u.sent.Until = t.until
	}
	return u
}

// sleep waits d, or until the client leaves (its 499).
func sleep(r *http.Request, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-r.Context().Done():
		return provider.FromTransport(r.Context(), "", r.Context().Err())
	}
}

// Has reports whether the plan has a deployment that can serve the
// endpoint.
func (t *Tries) Has() bool { return t.plan.Has() }

// Release gives back what the plan holds (see route.Plan.Release).
func (t *Tries) Release() { t.plan.Release() }

// Only keeps to the deployments whose adapter keep accepts (see
// route.Plan.Only).
func (t *Tries) Only(keep func(provider.Chatter) bool) { t.plan.Only(keep) }

// retryable reports whether the last try's failure lets another follow.
func (t *Tries) retryable() bool { return provider.Retryable(t.lastF, t.lastS) }

// final is the error a walk that tried something ends with: the last
// try's own when it may not be retried (the client's fault, a broken
// answer, a client gone) or when there was only the one try; else, the
// candidates having failed in turn, 503 with Retry-After.
func (t *Tries) final() error {
	if !t.retryable() || len(t.info.Attempts) == 1 && t.plan.Candidates() == 1 {
		return t.last
	}
	return t.unavailable()
}

// unavailable is the 503 of a request nothing can serve: every candidate
// tried and failed, or all cooling down. Retry-After is the soonest one
// returns.
func (t *Tries) unavailable() error {
	msg := fmt.Sprintf("No provider of the model '%s' can serve the request right now; retry later.", t.info.Model)
	if n := len(t.info.Attempts); n > 0 {
		msg = fmt.Sprintf("The model '%s' failed on %d attempt(s) across its providers; retry later.", t.info.Model, n)
	}
	e := &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: apierr.CodeServiceUnavailable,
		Message: msg, RetryAfter: t.plan.RetryIn(), Err: t.last}
	if t.last == nil {
		e.Err = fmt.Errorf("every provider of %s is cooling down", t.info.Model)
	}
	return e
}

// Failed records the try in flight that ended with err, u its call (nil
// without one). It reports whether another try may follow: the failure
// is the provider's, nothing reached the client, and no byte of the
// vendor's answer had arrived.
func (t *Tries) Failed(err error, u *Upstream) bool {
	f, status := provider.Classify(err)
	if f == provider.Unreachable && u.answered() {
		f = provider.Broken // it was answering: not "before the first byte"
	}
	if f == provider.Broken && status == 0 && u.answered() {
		status = http.StatusOK // an answer came that could not be read (the vendor's errors have their status)
	}
	e := t.plan.Report(f, provider.RetryAfter(err), 0)
	t.logEvent(e, err)
	t.last, t.lastF, t.lastS = err, f, status
	t.wait = !t.plan.Again()
	t.add(status, err)
	return t.retryable()
}

// Answered records the try in flight as the one that answered.
func (t *Tries) Answered() {
	d := t.h.Clock().Sub(t.start)
	t.logEvent(t.plan.Report(provider.Answered, 0, d), nil)
	t.add(http.StatusOK, nil)
}

// Opened records the try in flight as the one that answered with a
// stream, whose first chunk came; its provider's health hears of it when
// the stream ends (streamEnded), so a vendor whose streams break off
// counts toward its circuit.
func (t *Tries) Opened() {
	t.firstChunk = t.h.Clock().Sub(t.start)
	t.streaming = true
	t.add(http.StatusOK, nil)
}

// StreamEnded reports how the stream of an opened try ended: upErr is the
// upstream's error (nil: a clean end); a stream whose client had what it
// needed, or left, is the provider's success whatever came after.
func (t *Tries) StreamEnded(upErr error, done bool) {
	if t == nil || !t.streaming {
		return
	}
	t.streaming = false
	f := provider.Answered
	if upErr != nil && !done {
		if f, _ = provider.Classify(upErr); f != provider.Gone {
			f = provider.Broken // it had answered: a failure, not retried
		}
	}
	if f == provider.Gone {
		f = provider.Answered
	}
	t.logEvent(t.plan.Report(f, 0, t.firstChunk), upErr)
}

// logEvent logs what a try changed in its provider's health.
func (t *Tries) logEvent(e route.Event, err error) {
	p := t.info.Provider
	switch {
	case e.KeyOut:
		t.h.Logger().Warn("the vendor refused an API key of the provider: it leaves rotation until the config is reloaded",
			"provider", p, "key", t.plan.Key(), "request_id", t.info.ID, "err", attemptError(err))
	case e.KeysBack:
		t.h.Logger().Error("the vendor refused every API key of the provider: counted as a failure, the keys stay in rotation",
			"provider", p, "request_id", t.info.ID, "err", attemptError(err))
	}
	if e.Opened {
		t.h.Logger().Warn("circuit opened: the provider is skipped until its cooldown ends", "provider", p,
			"request_id", t.info.ID, "err", attemptError(err))
	}
	if e.Closed {
		t.h.Logger().Info("circuit closed: the provider answered its probe", "provider", p)
	}
}

func (t *Tries) add(status int, err error) {
	a := reqinfo.Attempt{Provider: t.info.Provider, Upstream: t.info.Upstream, Start: t.start,
		Duration: t.h.Clock().Sub(t.start), Status: status}
	if err != nil {
		a.Error = attemptError(err)
	}
	t.info.AddAttempt(a)
}

// attemptError is what a failed try's record says: the client's error
// code and, for the operator, its cause (redacted where it was made).
func attemptError(err error) string {
	e := apierr.From(err)
	s := e.Code
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// Each runs call on the walk's candidates in turn, from d, until one
// answers, for an endpoint whose charge c was made for d: the walk keeps
// to deployments billed alike (route.Plan.SamePrice) and ends at a failed
// try that owes something (the vendor may bill it, so the reservation is
// its). It returns the call of the last try, to settle and end, and its
// error; when the walk ended after a try that owes nothing, the call is
// nil and the error the walk's (a 503 when every candidate failed).
func (h *Core) Each(r *http.Request, t *Tries, c *Charge, d route.Deployment, ch provider.Chatter,
	call func(u *Upstream, d route.Deployment, ch provider.Chatter) error) (*Upstream, route.Deployment, error) {
	t.plan.SamePrice(d)
	for {
		u := t.Call(r, c)
		err := call(u, d, ch)
		if err == nil {
			t.Answered()
			return u, d, nil
		}
		if !t.Failed(err, u) || u.Owed(err, false) != OwesNothing {
			return u, d, err
		}
		u.End()
		nd, nch, nerr := t.Next(r)
		if nerr != nil {
			return nil, d, nerr
		}
		d, ch = nd, nch
	}
}

// Failover ends the failed try (err; u its call, ended here) and gives the
// next deployment to try, with what the failed try owes. When the walk
// ends there, it settles what the try owes on c (count is the gateway's
// count of the prompt) and returns the error to answer with.
func (t *Tries) Failover(r *http.Request, err error, u *Upstream, c *Charge, count func() provider.Usage,
	out *Outcome) (route.Deployment, provider.Chatter, Owes, error) {
	owed := u.Owed(err, false)
	t.Failed(err, u)
	u.End()
	d, ch, err := t.Next(r)
	if err != nil {
		c.SettleOwed(owed, count, out)
	}
	return d, ch, owed, err
}

// Carry settles what a failed try owes before the request is admitted
// again for another deployment: its cost is carried into the request's
// (outcome.Carried), and the outcome is clear for the next try.
func (c *Charge) Carry(o Owes, count func() provider.Usage, out *Outcome) {
	c.SettleOwed(o, count, out)
	out.Carried += out.Cost
	out.Cost, out.Usage, out.Estimated = 0, provider.Usage{}, false
}
