package openai

import (
	"context"
	"net/http"
	"net/url"
	"slices"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/background"
	chg "github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/contract"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/responses"
	"github.com/modelgate/modelgate/internal/route"
)

// A background request (background: true) is answered "queued" by the
// vendor, which runs it afterwards: the request's reservation is handed
// to a durable task (package background) that the first GET, cancel or
// worker poll to see the response end settles from the vendor's usage.
// The request itself leaves a usage record that costs nothing; the
// settlement's record (request id = the response id) carries the charge.

// respondBackground serves a pass-through request with background: true.
// Streaming it is refused (400 naming stream): the gateway does not
// resume streams (GET ?stream=true), so a client that lost the stream
// could not pick it up again; polling GET /v1/responses/{id} is the way.
// A background response must be stored (400 naming store), as OpenAI
// requires.
func (h *Handler) respondBackground(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, p gate.Principal,
	d route.Deployment, rs provider.Responder, req *responses.Request, body []byte, out *lifecycle.Outcome) {
	switch {
	case h.Background == nil:
		h.fail(w, info, apierr.Invalid("background", "Background responses are not supported by this gateway."))
		return
	case req.Stream:
		h.fail(w, info, apierr.Invalid("stream", "Streaming a background response is not supported by the gateway: "+
			"omit 'stream' and poll GET /v1/responses/{id} until its status is final."))
		return
	case !req.Stored():
		h.fail(w, info, apierr.Invalid("store", "Background responses must be stored: set 'store' to true or omit it."))
		return
	}
	c, body, err := h.admitNative(r.Context(), p, d, req, body)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	var cc *chg.Charge
	var terms string
	if c != nil {
		cc = c.Charge
		if c.Plan != nil {
			if terms, err = c.Plan.Marshal(); err != nil {
				c.Release()
				h.fail(w, info, apierr.Internal(err))
				return
			}
		}
	}
	res, err := h.Background.Submit(r.Context(), background.Submission{RequestID: info.ID, Payer: lifecycle.Payer(p), Provider: d.Provider,
		Responder: rs, Charge: cc, Terms: terms,
		Request: &provider.ResponsesRequest{PublicModel: req.Model, UpstreamModel: d.Upstream, Body: body}})
	if err != nil {
		h.fail(w, info, err)
		return
	}
	h.saveResponse(r.Context(), info, background.ResponseID(res.Body), c.Bound(), nil)
	lifecycle.WriteJSON(w, info, c != nil, out, res.Body) // out.cost is 0: the task's settlement charges
}

// backgroundResponder is, for a response created in the background, its
// task's deployment (the provider that runs it, the models it was asked
// with), in place of d and rs; d and rs otherwise.
func (h *Handler) backgroundResponder(ctx context.Context, id string, d route.Deployment, rs provider.Responder) (route.Deployment, provider.Responder) {
	if h.Background == nil {
		return d, rs
	}
	t, ok := h.Background.Task(ctx, id)
	if !ok {
		return d, rs
	}
	trs, ok := h.Background.Responders(t.Provider)
	if !ok {
		return d, rs
	}
	return route.Deployment{Model: t.Model, Provider: t.Provider, Upstream: t.UpstreamModel}, trs
}

// observe tells the background service what a GET or a cancel of id got
// from the vendor, so an ended background response is settled.
func (h *Handler) observe(ctx context.Context, id string, res *provider.ResponsesResult) {
	if h.Background != nil {
		h.Background.Observe(ctx, id, res)
	}
}

// cancelResponse serves POST /v1/responses/{id}/cancel: passed through to
// the vendor of the response (as for GET, only for the account that
// created it; any other id is 404), and when the vendor's answer shows the
// response ended, its task is settled from it: the usage the vendor
// reports for a cancelled response, or, when it reports none, the prompt
// and whatever output the answer shows, as the gateway counts them.
func (h *Handler) cancelResponse(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "responses.cancel"
	var out lifecycle.Outcome
	defer h.Record(info, &out)

	p, err := h.Authenticate(w, r, info, r.Header.Get("Authorization"))
	if err != nil {
		h.fail(w, info, err)
		return
	}
	id := r.PathValue("id")
	if !validResponseID(id) {
		h.fail(w, info, apierr.Invalid("response_id", "Invalid 'response_id': expected an id like 'resp_...' (letters, digits, '_' and '-')."))
		return
	}
	model, err := cancelQuery(r.URL.RawQuery)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	d, rs, err := h.storedResponder(p, model, id)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	if err := h.checkOwner(r.Context(), p.AccountID, id, responseNotFound); err != nil {
		h.fail(w, info, err)
		return
	}
	d, rs = h.backgroundResponder(r.Context(), id, d, rs)
	info.Model, info.Provider, info.Upstream = d.Model, d.Provider, d.Upstream
	cn, ok := rs.(provider.ResponseCanceller)
	if !ok {
		h.fail(w, info, apierr.Invalid("response_id", "The vendor of response '%s' cannot cancel responses.", id))
		return
	}
	res, err := cn.CancelResponse(r.Context(), &provider.ResponseGet{ID: id, Public: d.Model, Upstream: d.Upstream})
	if err != nil {
		h.fail(w, info, err)
		return
	}
	h.observe(r.Context(), id, res)
	lifecycle.WriteJSON(w, info, false, &out, res.Body)
}

// cancelQuery checks the query of POST /v1/responses/{id}/cancel, which
// takes only the gateway's "model" (the deployment to ask, as for GET);
// nothing of the query goes upstream.
func cancelQuery(raw string) (string, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		e := apierr.Invalid("", "The query string is malformed: %s.", err)
		e.Err = err
		return "", e
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if name != "model" {
			return "", apierr.Broken(contract.CodeUnknown, name, "Unrecognized query parameter '%s'. POST /v1/responses/{id}/cancel takes no parameters (but the gateway's model).", name)
		}
	}
	vs := q["model"]
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", apierr.Invalid("model", "The query parameter 'model' is given %d times; give it once.", len(vs))
	case vs[0] == "" || len(vs[0]) > 256:
		return "", apierr.Invalid("model", "Invalid 'model': must be a model id of 1 to 256 characters.")
	}
	return vs[0], nil
}
