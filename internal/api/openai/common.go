package openai

import (
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
)

// The steps every /v1 handler shares.

// authJSON authenticates the caller and reads its JSON body; on failure it
// has answered the client and ok is false.
func (h *Handler) authJSON(w http.ResponseWriter, r *http.Request, info *reqinfo.Info) (p gate.Principal, body []byte, ok bool) {
	p, err := h.Authenticate(w, r, info, r.Header.Get("Authorization"))
	if err == nil {
		body, err = h.ReadJSON(w, r)
	}
	if err != nil {
		h.fail(w, info, err)
		return p, nil, false
	}
	return p, body, true
}

// pickFor starts the walk over the deployments of model whose adapter can
// serve the endpoint and gives the first to try: 404 model_not_found for a
// model the key's group cannot see (exactly as for an unknown one), 400
// naming model for one that exists but whose providers cannot do what
// (e.g. "embeddings"), 503 when none can serve now.
func (h *Handler) pickFor(r *http.Request, info *reqinfo.Info, p gate.Principal, model, what string, can func(provider.Chatter) bool) (*lifecycle.Tries, route.Deployment, provider.Chatter, error) {
	t := h.NewTries(info, model, can)
	if !h.Router.Has(model) || !h.Policy.Allows(p.Group, model) {
		return t, route.Deployment{}, nil, apierr.ModelNotFound(model)
	}
	if !t.Has() {
		return t, route.Deployment{}, nil, apierr.Invalid("model", "The model '%s' does not support %s.", model, what)
	}
	d, ch, err := t.Next(r)
	return t, d, ch, err
}

// streamOptions checks stream_options (null or {"include_usage": bool})
// and reports include_usage.
func streamOptions(v []byte) (includeUsage bool, e *apierr.Error) {
	switch kind(v) {
	case "null":
		return false, nil
	case "object":
	default:
		return false, wrongType("stream_options", "an object", v)
	}
	e = members(v, "stream_options", []string{"include_usage"}, func(key string, val []byte) *apierr.Error {
		var e *apierr.Error
		includeUsage, _, e = boolean(val, "stream_options.include_usage")
		return e
	})
	return includeUsage, e
}

// modelName checks the model member: a string of at most 256 characters.
func modelName(v []byte) (string, *apierr.Error) {
	m, _, e := str(v, "model")
	if e == nil {
		e = checkModel(m)
	}
	return m, e
}

// checkModel refuses an empty model id (as missing) and one over 256
// characters, rules the contract leaves to the server.
func checkModel(m string) *apierr.Error {
	switch {
	case m == "":
		return missing("model")
	case len(m) > 256:
		return apierr.Invalid("model", "Invalid 'model': longer than 256 characters.")
	}
	return nil
}
