package anthropic

import (
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/sse"
)

// translate serves a Messages request on a model no Anthropic provider
// serves: the request becomes a chat completion (tochat.go) and runs the
// chat exchange the OpenAI door runs; the answer is shaped back into a
// Message (answer.go) or Message events (events.go).
func (h *Handler) translate(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, p gate.Principal, pm *parsed, out *lifecycle.Outcome) {
	reasons, limit := h.outputOf(pm.Model)
	if limit > 0 && pm.MaxTokens > limit {
		// Claude Code asks for 32,000 tokens or more whatever the model;
		// Anthropic's clients pick max_tokens for Claude, so the door
		// lowers it to what the model can give rather than refuse.
		pm.MaxTokens = limit
		pm.Req.MaxTokens = &limit
	}
	body, e := toChat(pm, chatOptions{Reasons: reasons, Stream: pm.Stream})
	if e != nil {
		fail(w, info, e)
		return
	}
	params := lifecycle.ChatParams{Model: pm.Model, Stream: pm.Stream, IncludeUsage: pm.Stream, N: 1, MaxTokens: pm.MaxTokens}
	req := &provider.ChatRequest{PublicModel: pm.Model, Body: body, Stream: pm.Stream, IncludeUsage: pm.Stream}
	enc := &chatEncoder{model: pm.Model}
	h.Chat(w, r, info, p, req, params, enc, out)
}

// outputOf is what the catalog says of model's output: whether it reasons
// (thinking then maps to reasoning_effort; else it is dropped) and its
// published output limit (0: none).
func (h *Handler) outputOf(model string) (reasons bool, limit int64) {
	if h.Billing == nil || h.Billing.Prices == nil {
		return false, 0
	}
	mp, ok := h.Billing.Prices(model, model)
	if !ok {
		return false, 0
	}
	return mp.Reasoning, mp.OutputLimit
}

// chatEncoder answers a translated request in Anthropic's shape.
type chatEncoder struct {
	model string
	ev    *toEvents // made on the first chunk
}

func (e *chatEncoder) Fail(w http.ResponseWriter, info *reqinfo.Info, err error) { fail(w, info, err) }

func (e *chatEncoder) Answer(body []byte, out *lifecycle.Outcome) ([]byte, error) {
	return fromChat(body, e.model)
}

func (e *chatEncoder) events() *toEvents {
	if e.ev == nil {
		e.ev = newToEvents(e.model, 0)
	}
	return e.ev
}

func (e *chatEncoder) Chunk(sw *sse.Writer, chunk []byte) error {
	b, err := e.events().chunk(chunk)
	if err != nil {
		return err
	}
	if len(b) == 0 {
		return nil
	}
	return sw.Raw(b)
}

func (e *chatEncoder) End(sw *sse.Writer, u provider.Usage) error {
	t := e.events()
	t.usage(u)
	if b := t.end(); len(b) > 0 {
		return sw.Raw(b)
	}
	return nil
}

func (e *chatEncoder) Broken(sw *sse.Writer, ae *apierr.Error) error { return brokenEvent(sw, ae) }
