package anthropic

import (
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// countTokens serves POST /v1/messages/count_tokens. It is free and leaves
// no usage record (a refused one is counted as any refusal): a model an
// Anthropic provider serves is counted by Anthropic, any other by the
// gateway's tokenizer on the request's chat translation, the prompt the
// vendor will see.
func (h *Handler) countTokens(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "messages.count_tokens"
	defer func() {
		if info.Status != http.StatusOK {
			h.Record(info, &lifecycle.Outcome{})
		}
	}()
	requestID(w, info)
	p, err := h.Auth.Authenticate(r.Context(), authorization(r))
	if err != nil {
		fail(w, info, err)
		return
	}
	info.KeyID, info.AccountID = p.KeyID, p.AccountID
	body, err := h.ReadJSON(w, r)
	if err != nil {
		fail(w, info, err)
		return
	}
	pm, perr := parseCountTokens(body)
	if perr != nil {
		fail(w, info, perr)
		return
	}
	info.Model = pm.Model
	if !h.Router.Has(pm.Model) || !h.Policy.Allows(p.Group, pm.Model) {
		fail(w, info, notFound(pm.Model))
		return
	}
	t := h.NewTries(info, pm.Model, func(ch provider.Chatter) bool { _, ok := ch.(provider.TokenCounter); return ok })
	defer t.Release()
	if t.Has() {
		d, ch, err := t.Next(r)
		if err == nil {
			req := &provider.MessagesRequest{PublicModel: pm.Model, UpstreamModel: d.Upstream, Body: body, Header: h.forwarded(r)}
			var res []byte
			if res, err = ch.(provider.TokenCounter).CountTokens(r.Context(), req); err == nil {
				t.Answered()
				writeRaw(w, info, res)
				return
			}
		}
		h.Logger().Warn("count_tokens upstream failed; counting with the gateway's tokenizer", "model", pm.Model, "err", err)
	}
	n, err := h.countLocal(pm)
	if err != nil {
		fail(w, info, err)
		return
	}
	writeRaw(w, info, []byte(`{"input_tokens":`+strconv.FormatInt(n, 10)+`}`))
}

// countLocal counts pm's prompt with the tokenizer the catalog names for
// its model.
func (h *Handler) countLocal(pm *parsed) (int64, error) {
	body, e := toChat(pm, chatOptions{})
	if e != nil {
		return 0, e
	}
	tok := h.tokenizer(pm.Model, pm.Model)
	if tok == nil {
		return int64(len(body)) / 4, nil
	}
	n, err := tok.ChatPrompt(body)
	if err != nil {
		return 0, apierr.Internal(err)
	}
	return int64(n), nil
}

func writeRaw(w http.ResponseWriter, info *reqinfo.Info, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	_, _ = w.Write(b)
}
