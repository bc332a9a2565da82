package openai

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/background"
	"github.com/modelgate/modelgate/internal/contract"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/responses"
	"github.com/modelgate/modelgate/internal/route"
)

// responses serves POST /v1/responses. A deployment whose vendor has the
// Responses API (provider.Responder) gets the request passed through;
// every other one gets it translated to a chat completion and the answer
// translated back (package responses).
func (h *Handler) responses(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "responses"
	var out lifecycle.Outcome
	defer h.Record(info, &out)

	p, body, ok := h.authJSON(w, r, info)
	if !ok {
		return
	}
	if e := checkBody(body, contract.Responses); e != nil {
		h.fail(w, info, e)
		return
	}
	req, perr := responses.Parse(body)
	if perr != nil {
		h.fail(w, info, perr)
		return
	}
	info.Model, info.Stream = req.Model, req.Stream
	t := h.NewTries(info, req.Model, nil)
	defer t.Release()
	if !t.Has() || !h.Policy.Allows(p.Group, req.Model) {
		h.fail(w, info, apierr.ModelNotFound(req.Model))
		return
	}
	d, ch, err := t.Next(r)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	if rs, ok := nativeResponder(ch); ok {
		t.Only(func(c provider.Chatter) bool { _, ok := nativeResponder(c); return ok })
		h.respondNative(w, r, info, p, t, d, rs, req, body, &out)
		return
	}
	t.Only(func(c provider.Chatter) bool { _, ok := nativeResponder(c); return !ok })
	h.respondTranslated(w, r, info, p, t, d, ch, req, &out)
}

// nativeResponder returns the adapter's Responder when its vendor serves
// the Responses API itself.
func nativeResponder(c provider.Chatter) (provider.Responder, bool) {
	rs, ok := c.(provider.Responder)
	if !ok || !rs.NativeResponses() {
		return nil, false
	}
	return rs, true
}

// respondTranslated serves the request with the adapter's chat completion,
// billed exactly like one (admit on the translated body).
func (h *Handler) respondTranslated(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, p gate.Principal,
	t *lifecycle.Tries, d route.Deployment, ch provider.Chatter, req *responses.Request, out *lifecycle.Outcome) {
	tr, e := req.Translate()
	if e == nil {
		e = tr.WebSearch(ch) // the web_search tool needs a vendor with a search of its own
	}
	if e != nil {
		h.fail(w, info, e)
		return
	}
	if tr.Searches() {
		t.Only(func(c provider.Chatter) bool { return responses.CanSearch(c) })
	}
	params, perr := parseChat(tr.Chat)
	if perr == nil {
		params.Tier = req.Ask(0).Tier // dropped from the chat body; priced (or refused) all the same
	}
	if perr != nil {
		// The translation of a valid request is a valid chat request; what
		// the chat checks still refuse is about the client's input.
		perr.Message = "Invalid 'input' for this model (translated to a chat completion): " + perr.Message
		perr.Param = "input"
		h.fail(w, info, perr)
		return
	}
	creq := &provider.ChatRequest{PublicModel: req.Model, UpstreamModel: d.Upstream, Body: tr.Chat,
		Stream: req.Stream, IncludeUsage: true}
	c, err := h.AdmitChat(r.Context(), info, p, d, creq, params.ChatParams)
	lifecycle.LimitTokenHeaders(w, info)
	if err != nil {
		err = tr.Rename(apierr.From(renameParams(err)))
		h.fail(w, info, err)
		return
	}
	id, created := responses.NewID("resp_"), h.Clock().Unix()
	if req.Stream {
		u := h.CallUpstream(r, c)
		defer u.End()
		h.translateStream(w, r, info, t, ch, creq, tr, id, created, c, u, out)
		return
	}
	var res *provider.ChatResponse
	u, _, err := h.Each(r, t, c, d, ch, func(u *lifecycle.Upstream, d route.Deployment, ch provider.Chatter) error {
		creq.UpstreamModel = d.Upstream
		var err error
		res, err = ch.Chat(u.Ctx(r), creq)
		return err
	})
	defer u.End()
	if err == nil {
		var ans *responses.Answer
		if ans, err = tr.Answer(res.Body); err == nil {
			h.answerTranslated(w, r, info, c, res, ans, id, created, out)
			return
		}
		err = provider.BadResponse(info.Provider, err)
	}
	c.SettleOwed(u.Owed(err, false), c.PromptCount, out)
	h.fail(w, info, err)
}

// answerTranslated settles a translated request's chat answer and writes
// it as a Response object.
func (h *Handler) answerTranslated(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, c *lifecycle.Charge,
	res *provider.ChatResponse, ans *responses.Answer, id string, created int64, out *lifecycle.Outcome) {
	out.Usage = res.Usage
	out.Cost = c.Settle(&out.Usage, c.AnswerTokens(res.Body), out)
	b, err := ans.JSON(id, created, h.Clock().Unix(), out.Usage)
	if err != nil {
		h.fail(w, info, apierr.Internal(err))
		return
	}
	lifecycle.AnswerJSON(w, r, info, c != nil, out, b)
}

// renameParams shows the chat parameters admit names (max_tokens,
// messages) as the Responses parameters the client sent.
func renameParams(err error) error {
	ae := apierr.From(err)
	switch ae.Param {
	case "max_tokens", "max_completion_tokens":
		ae.Message = strings.ReplaceAll(ae.Message, ae.Param, "max_output_tokens")
		ae.Param = "max_output_tokens"
	case "messages":
		ae.Param, ae.Message = "input", strings.ReplaceAll(ae.Message, "messages", "input")
	default:
		if strings.Contains(ae.Message, "lower max_tokens") {
			ae.Message = strings.ReplaceAll(ae.Message, "max_tokens", "max_output_tokens")
		}
	}
	return ae
}

// getResponse serves GET /v1/responses/{id}: the gateway stores no
// responses, so the request goes to a deployment whose vendor stores them
// (OpenAI, Azure): the one named by ?model= when given, else the first
// model (by id) of the key's group that is passed through. Only ids the
// caller's account created through the gateway are fetched (see
// checkOwner); any other id is 404, exactly as an id nobody knows.
func (h *Handler) getResponse(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "responses.get"
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
	model, q, err := storedResponseQuery(r.URL.RawQuery) // only what it checked goes upstream
	if err != nil {
		h.fail(w, info, err)
		return
	}
	d, rs, err := h.storedResponder(p, model, id)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	// Only the account that created the response may read it; the vendor
	// is not asked about any other id.
	if err := h.checkOwner(r.Context(), p.AccountID, id, responseNotFound); err != nil {
		h.fail(w, info, err)
		return
	}
	// A background response is read from the provider that runs it, and
	// the first read that sees it ended settles it (responses_background.go).
	d, rs = h.backgroundResponder(r.Context(), id, d, rs)
	info.Model, info.Provider, info.Upstream = d.Model, d.Provider, d.Upstream
	res, err := rs.GetResponse(r.Context(), &provider.ResponseGet{ID: id, Query: q, Public: d.Model, Upstream: d.Upstream})
	if err != nil {
		h.fail(w, info, err)
		return
	}
	h.observe(r.Context(), id, res)
	lifecycle.WriteJSON(w, info, false, &out, res.Body)
}

// validResponseID accepts the ids vendors issue (resp_ and hex digits) and
// nothing that could change the upstream path ("..").
func validResponseID(id string) bool { return background.ValidID(id) }

// storedResponder picks the deployment that answers GET /v1/responses/{id}.
func (h *Handler) storedResponder(p gate.Principal, model, id string) (route.Deployment, provider.Responder, error) {
	can := func(c provider.Chatter) bool { _, ok := nativeResponder(c); return ok }
	notFound := func(why string) error {
		return &apierr.Error{Status: http.StatusNotFound, Type: apierr.TypeInvalidRequest, Code: apierr.CodeNotFound,
			Message: fmt.Sprintf("Response with id '%s' not found. %s", id, why)}
	}
	if model != "" {
		if !h.Router.Has(model) || !h.Policy.Allows(p.Group, model) {
			return route.Deployment{}, nil, apierr.ModelNotFound(model)
		}
		d, ok := h.Router.PickFor(model, can)
		if !ok {
			return d, nil, notFound(fmt.Sprintf("The gateway serves the model '%s' by translating the Responses API to chat "+
				"completions and does not store its responses.", model))
		}
		rs, _ := nativeResponder(d.Chatter)
		return d, rs, nil
	}
	for _, m := range h.Router.Models() {
		if !h.Policy.Allows(p.Group, m.ID) {
			continue
		}
		if d, ok := h.Router.PickFor(m.ID, can); ok {
			rs, _ := nativeResponder(d.Chatter)
			return d, rs, nil
		}
	}
	return route.Deployment{}, nil, notFound("No model your key may use stores responses (the gateway stores none itself).")
}
