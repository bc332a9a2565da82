package anthropic

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
)

// modelInfo is Anthropic's ModelInfo.
type modelInfo struct {
	Type        string `json:"type"` // "model"
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"` // RFC 3339
}

// modelPage is Anthropic's page of models.
type modelPage struct {
	Data    []modelInfo `json:"data"`
	HasMore bool        `json:"has_more"`
	FirstID *string     `json:"first_id"`
	LastID  *string     `json:"last_id"`
}

func toInfo(m route.Model) modelInfo {
	return modelInfo{Type: "model", ID: m.ID, DisplayName: m.ID, CreatedAt: time.Unix(m.Created, 0).UTC().Format(time.RFC3339)}
}

// ListModels answers GET /v1/models in Anthropic's shape (the app sends
// the requests that carry anthropic-version here): the models of the
// key's group, paged by limit (1–1000, default 20) and after_id or
// before_id, in the router's order.
func (h *Handler) ListModels(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "models.list"
	defer h.Record(info, &lifecycle.Outcome{})
	requestID(w, info)
	p, err := h.Authenticate(w, r, info, authorization(r))
	if err != nil {
		fail(w, info, err)
		return
	}
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			fail(w, info, apierr.Invalid("limit", "limit: must be an integer from 1 to 1000, got %q", v))
			return
		}
		limit = n
	}
	after, before := q.Get("after_id"), q.Get("before_id")
	var all []modelInfo
	for _, m := range h.Router.Models() {
		if h.Policy.Allows(p.Group, m.ID) {
			all = append(all, toInfo(m))
		}
	}
	page := pageOf(all, after, before, limit)
	writeJSON(w, info, page)
}

// pageOf cuts one page of limit models out of all: the ones after
// after_id, or the last ones before before_id, or the first ones.
func pageOf(all []modelInfo, after, before string, limit int) modelPage {
	lo, hi := 0, len(all)
	if after != "" {
		lo = indexOf(all, after) + 1 // an unknown id: from the start (index -1)
	}
	if before != "" {
		if i := indexOf(all, before); i >= 0 {
			hi = i
		}
	}
	more := false
	switch {
	case before != "" && after == "" && hi-lo > limit:
		lo, more = hi-limit, true
	case hi-lo > limit:
		hi, more = lo+limit, true
	}
	p := modelPage{Data: append([]modelInfo{}, all[lo:hi]...), HasMore: more}
	if len(p.Data) > 0 {
		first, last := p.Data[0].ID, p.Data[len(p.Data)-1].ID
		p.FirstID, p.LastID = &first, &last
	}
	return p
}

func indexOf(all []modelInfo, id string) int {
	for i, m := range all {
		if m.ID == id {
			return i
		}
	}
	return -1
}

// GetModel answers GET /v1/models/{model} in Anthropic's shape; a model
// outside the key's group is as unknown as one that does not exist.
func (h *Handler) GetModel(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "models.retrieve"
	defer h.Record(info, &lifecycle.Outcome{})
	requestID(w, info)
	p, err := h.Authenticate(w, r, info, authorization(r))
	if err != nil {
		fail(w, info, err)
		return
	}
	id := r.PathValue("model")
	m, ok := h.Router.Model(id)
	if !ok || !h.Policy.Allows(p.Group, id) {
		fail(w, info, notFound(id))
		return
	}
	writeJSON(w, info, toInfo(m))
}

func writeJSON(w http.ResponseWriter, info *reqinfo.Info, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fail(w, info, apierr.Internal(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	_, _ = w.Write(b)
}
