package openai

import (
	"encoding/json"
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
)

type modelWire struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

type modelListWire struct {
	Object string      `json:"object"`
	Data   []modelWire `json:"data"`
}

func toWire(m route.Model) modelWire {
	return modelWire{ID: m.ID, Object: "model", Created: m.Created, OwnedBy: m.OwnedBy}
}

// ListModels answers GET /v1/models with the key's group's models only.
func (h *Handler) ListModels(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "models.list"
	defer h.Record(info, &lifecycle.Outcome{})
	p, err := h.Authenticate(w, r, info, r.Header.Get("Authorization"))
	if err != nil {
		h.fail(w, info, err)
		return
	}
	out := modelListWire{Object: "list", Data: []modelWire{}}
	for _, m := range h.Router.Models() {
		if h.Policy.Allows(p.Group, m.ID) {
			out.Data = append(out.Data, toWire(m))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// GetModel answers GET /v1/models/{model}; a model outside the group gets
// the same 404 as an unknown one.
func (h *Handler) GetModel(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "models.retrieve"
	defer h.Record(info, &lifecycle.Outcome{})
	p, err := h.Authenticate(w, r, info, r.Header.Get("Authorization"))
	if err != nil {
		h.fail(w, info, err)
		return
	}
	id := r.PathValue("model")
	m, ok := h.Router.Model(id)
	if !ok || !h.Policy.Allows(p.Group, id) {
		h.fail(w, info, apierr.ModelNotFound(id))
		return
	}
	writeJSON(w, http.StatusOK, toWire(m))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		apierr.Write(w, apierr.Internal(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
