package openai

import (
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/sse"
)

// chat serves POST /v1/chat/completions: the OpenAI body is parsed and
// checked here, the exchange is lifecycle.Core.Chat's.
func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "chat.completions"
	var out lifecycle.Outcome
	defer h.Record(info, &out)

	p, body, ok := h.authJSON(w, r, info)
	if !ok {
		return
	}
	params, perr := parseChat(body)
	if perr != nil {
		h.fail(w, info, perr)
		return
	}
	info.Model, info.Stream = params.Model, params.Stream
	req := &provider.ChatRequest{PublicModel: params.Model, Body: body,
		Stream: params.Stream, IncludeUsage: params.IncludeUsage, ModelAt: params.modelAt, StreamOptionsAt: params.optionsAt}
	h.Chat(w, r, info, p, req, params.ChatParams, chatEncoder{}, &out)
}

// chatEncoder speaks the chat exchange in OpenAI's format: the vendor's
// chat.completion and chunks as they are (the adapters make them OpenAI's),
// data: [DONE] at the end, an error object in a broken stream. It is a
// zero-size value, so passing it as a lifecycle.ChatEncoder allocates
// nothing. Legacy completions use it too.
type chatEncoder struct{}

// Fail answers err as OpenAI's error JSON and notes it.
func (chatEncoder) Fail(w http.ResponseWriter, info *reqinfo.Info, err error) {
	apierr.Write(w, lifecycle.Note(info, err))
}

// Answer sends the vendor's answer as it is.
func (chatEncoder) Answer(body []byte, _ *lifecycle.Outcome) ([]byte, error) { return body, nil }

// Chunk sends one chunk as a data event.
func (chatEncoder) Chunk(sw *sse.Writer, chunk []byte) error { return sw.Data(chunk) }

// End sends data: [DONE].
func (chatEncoder) End(sw *sse.Writer, _ provider.Usage) error { return sw.Done() }

// Broken sends the error as a data event, as OpenAI does.
func (chatEncoder) Broken(sw *sse.Writer, e *apierr.Error) error { return sw.Data(e.JSON()) }
