package anthropic

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// Handler serves the Anthropic Messages API on the lifecycle every front
// door shares.
type Handler struct {
	*lifecycle.Core

	// Forward lists the client headers, besides anthropic-version and
	// anthropic-beta, that go to Anthropic upstreams (canonical names;
	// none by default: the SDKs' x-stainless-* and Claude Code's x-app and
	// session headers stay here).
	Forward []string
}

// Routes registers the Messages endpoints (with or without ?beta=true,
// which the Anthropic SDKs' beta client adds).
func (h *Handler) Routes(mux *http.ServeMux) {
	mux.Handle("/v1/messages", h.only(http.MethodPost, h.messages))
	mux.Handle("/v1/messages/count_tokens", h.only(http.MethodPost, h.countTokens))
}

// Wants reports whether r is meant for this door where both doors share a
// path (GET /v1/models): Anthropic's clients send anthropic-version.
func Wants(r *http.Request) bool { return r.Header.Get("Anthropic-Version") != "" }

func (h *Handler) only(method string, f http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			info := reqinfo.From(r.Context())
			info.Endpoint = "unknown"
			defer h.Record(info, &lifecycle.Outcome{})
			requestID(w, info)
			w.Header().Set("Allow", method)
			fail(w, info, &apierr.Error{Status: http.StatusMethodNotAllowed, Type: apierr.TypeInvalidRequest,
				Code: apierr.CodeMethodNotAllowed, Message: fmt.Sprintf("Method %s is not allowed on %s; use %s.", r.Method, r.URL.Path, method)})
			return
		}
		f(w, r)
	})
}

// requestID sets Anthropic's request-id header beside X-Request-Id: the
// same id the error bodies carry as request_id.
func requestID(w http.ResponseWriter, info *reqinfo.Info) {
	if info.ID != "" {
		w.Header().Set("Request-Id", info.ID)
	}
}

// authorization is the gateway key as an Authorization header value:
// x-api-key (what the Anthropic SDKs send) wins over Authorization
// (Claude Code with ANTHROPIC_AUTH_TOKEN).
func authorization(r *http.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return "Bearer " + k
	}
	return r.Header.Get("Authorization")
}

// authJSON authenticates the caller and reads its JSON body; on failure it
// has answered and ok is false.
func (h *Handler) authJSON(w http.ResponseWriter, r *http.Request, info *reqinfo.Info) (p gate.Principal, body []byte, ok bool) {
	p, err := h.Authenticate(w, r, info, authorization(r))
	if err == nil {
		body, err = h.ReadJSON(w, r)
	}
	if err != nil {
		fail(w, info, err)
		return p, nil, false
	}
	return p, body, true
}

// messages serves POST /v1/messages.
func (h *Handler) messages(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "messages"
	var out lifecycle.Outcome
	defer h.Record(info, &out)
	requestID(w, info)

	p, body, ok := h.authJSON(w, r, info)
	if !ok {
		return
	}
	pm, perr := parseMessages(body)
	if perr != nil {
		fail(w, info, perr)
		return
	}
	info.Model, info.Stream = pm.Model, pm.Stream
	if !h.Router.Has(pm.Model) || !h.Policy.Allows(p.Group, pm.Model) {
		fail(w, info, notFound(pm.Model))
		return
	}
	t := h.NewTries(info, pm.Model, isMessenger)
	if t.Has() {
		defer t.Release()
		h.pass(w, r, info, p, t, pm, body, &out)
		return
	}
	t.Release()
	h.translate(w, r, info, p, pm, &out)
}

// isMessenger reports whether an adapter takes Messages bodies as they
// are (Anthropic's).
func isMessenger(ch provider.Chatter) bool {
	_, ok := ch.(provider.Messenger)
	return ok
}

// notFound is Anthropic's answer for a model the key cannot use: the
// same as for one that does not exist.
func notFound(model string) *apierr.Error {
	e := apierr.ModelNotFound(model)
	e.Message = fmt.Sprintf("model: %s", model)
	return e
}

// forwarded is what goes upstream of the client's headers: its
// anthropic-version and anthropic-beta (every beta Claude Code sends) and
// the headers the operator lists. Never its key.
func (h *Handler) forwarded(r *http.Request) http.Header {
	out := make(http.Header, 2+len(h.Forward))
	for _, k := range [...]string{"Anthropic-Version", "Anthropic-Beta"} {
		if v := r.Header.Values(k); len(v) > 0 {
			out[k] = v
		}
	}
	for _, k := range h.Forward {
		k = http.CanonicalHeaderKey(k)
		if strings.EqualFold(k, "X-Api-Key") || strings.EqualFold(k, "Authorization") {
			continue
		}
		if v := r.Header.Values(k); len(v) > 0 {
			out[k] = v
		}
	}
	return out
}
