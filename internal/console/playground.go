package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/store"
)

// Playground runs the console's playground turns through the gateway's own
// request path (internal/app implements it): the console never holds a
// key's secret, so a turn runs server-side as a key the user picked.
type Playground interface {
	// Models are the chat models the keys of group may use, by id.
	Models(group string) []web.PlaygroundModel
	// BaseURL is the gateway's /v1 base URL as a client calls it (for the
	// copied code).
	BaseURL(r *http.Request) string
	// ServeChat answers r, a POST /v1/chat/completions with a JSON body,
	// exactly as the gateway answers the key keyID: its group, spend cap,
	// rate limits, checks and usage record. The caller has checked that
	// the key is the user's.
	ServeChat(w http.ResponseWriter, r *http.Request, keyID string)
}

// Playground request bounds.
const (
	// maxPlaygroundBody bounds a turn's body: a conversation grows with
	// every answer, so more than maxBody (the gateway's own
	// max_request_bytes still applies to the chat request).
	maxPlaygroundBody = 1 << 20
	// maxPlaygroundMessages bounds a conversation's messages.
	maxPlaygroundMessages = 500
	// maxTokensUnknown bounds max_tokens for a model whose limit the
	// catalog does not know.
	maxTokensUnknown = 1 << 20
)

// playgroundRequest is POST /console/api/playground's body.
type playgroundRequest struct {
	KeyID     string              `json:"key_id"`
	Model     string              `json:"model"`
	Messages  []playgroundMessage `json:"messages"`
	Stream    bool                `json:"stream"`
	MaxTokens *int64              `json:"max_tokens"`
}

// playgroundMessage is one message of a turn's conversation: text only.
type playgroundMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// playgroundRoles are the roles a playground message may have.
var playgroundRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true}

// chatBody is the OpenAI chat completion request a turn becomes.
type chatBody struct {
	Model         string              `json:"model"`
	Messages      []playgroundMessage `json:"messages"`
	Stream        bool                `json:"stream,omitempty"`
	StreamOptions *streamOptions      `json:"stream_options,omitempty"`
	MaxTokens     *int64              `json:"max_tokens,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// playgroundTurn serves POST /console/api/playground: the body is checked,
// the key must be the user's (else 404, as for a key that does not exist),
// and the turn is answered by the gateway's chat completions handler as
// that key: JSON, or SSE when stream, with X-Modelgate-Cost (a trailer on
// streams). A revoked, disabled or expired key gets the gateway's 401
// invalid_api_key, a model outside its group the gateway's 404
// model_not_found; nothing is charged for a refusal.
func (c *Console) playgroundTurn(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	if c.Playground == nil {
		fail(w, notFound("This gateway offers no playground."))
		return
	}
	req, e := decodePlayground(w, r)
	if e != nil {
		fail(w, e)
		return
	}
	k, err := c.Store.KeyByID(r.Context(), req.KeyID)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && k.AccountID != a.ID:
		fail(w, &apierr.Error{Status: http.StatusNotFound, Type: apierr.TypeInvalidRequest, Code: apierr.CodeNotFound,
			Param: "key_id", Message: fmt.Sprintf("No such key: %s", req.KeyID)})
		return
	case err != nil:
		fail(w, apierr.Internal(fmt.Errorf("console: playground key: %w", err)))
		return
	}
	if e := c.checkMaxTokens(k.Group, req); e != nil {
		fail(w, e)
		return
	}
	out := chatBody{Model: req.Model, Messages: req.Messages, Stream: req.Stream, MaxTokens: req.MaxTokens}
	if req.Stream {
		out.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	body, err := json.Marshal(out)
	if err != nil {
		fail(w, apierr.Internal(fmt.Errorf("console: playground body: %w", err)))
		return
	}
	chat, err := http.NewRequestWithContext(r.Context(), http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		fail(w, apierr.Internal(fmt.Errorf("console: playground request: %w", err)))
		return
	}
	chat.Header.Set("Content-Type", "application/json")
	chat.Host, chat.RemoteAddr, chat.TLS = r.Host, r.RemoteAddr, r.TLS
	c.Playground.ServeChat(w, chat, k.ID)
}

// checkMaxTokens refuses a max_tokens above the model's output limit. A
// model the key's group does not serve is left to the gateway, whose 404
// model_not_found is the answer.
func (c *Console) checkMaxTokens(group string, req playgroundRequest) *apierr.Error {
	if req.MaxTokens == nil {
		return nil
	}
	limit := int64(maxTokensUnknown)
	for _, m := range c.Playground.Models(group) {
		if m.ID == req.Model && m.MaxOutput > 0 {
			limit = m.MaxOutput
		}
	}
	if n := *req.MaxTokens; n < 1 || n > limit {
		return apierr.Invalid("max_tokens", "max_tokens must be from 1 to %d for %s.", limit, req.Model)
	}
	return nil
}

// decodePlayground reads and checks a turn's body: a JSON object with only
// the members playgroundRequest has, each of its type.
func decodePlayground(w http.ResponseWriter, r *http.Request) (playgroundRequest, *apierr.Error) {
	var req playgroundRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPlaygroundBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return req, &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest,
				Code: apierr.CodeRequestTooLarge, Message: "The conversation is too large: clear it and start again."}
		}
		return req, apierr.Invalid("", "Could not read the request body.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		return req, decodeError(err)
	}
	return req, req.check()
}

// decodeError turns a JSON decoding error into a 400 naming the member.
func decodeError(err error) *apierr.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return apierr.Invalid(te.Field, "%s must be a JSON %s, not %s.", te.Field, jsonType(te.Type.Kind().String()), te.Value)
	}
	if err != nil {
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			f = strings.Trim(f, `"`)
			if len(f) > 64 {
				f = f[:64] + "…"
			}
			return apierr.Broken(apierr.CodeUnknownParameter, f,
				"Unknown member %q: the playground takes key_id, model, messages, stream and max_tokens.", f)
		}
	}
	return apierr.Invalid("", `The body must be a JSON object like {"key_id": "key_…", "model": "…", "messages": [{"role": "user", "content": "Hi"}]}.`)
}

// jsonType names a Go kind as the JSON type a member must have.
func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int64", "int":
		return "integer"
	case "slice":
		return "array"
	}
	return "object"
}

// check validates a decoded turn.
func (req playgroundRequest) check() *apierr.Error {
	switch {
	case req.KeyID == "":
		return apierr.Broken("missing_required_parameter", "key_id", "Pick one of your keys: key_id is required.")
	case req.Model == "":
		return apierr.Broken("missing_required_parameter", "model", "Pick a model: model is required.")
	case len(req.Model) > 256:
		return apierr.Invalid("model", "model is longer than 256 characters.")
	case len(req.Messages) == 0:
		return apierr.Invalid("messages", "The conversation is empty: send at least one message.")
	case len(req.Messages) > maxPlaygroundMessages:
		return apierr.Invalid("messages", "The conversation has more than %d messages: clear it and start again.", maxPlaygroundMessages)
	}
	for i, m := range req.Messages {
		if !playgroundRoles[m.Role] {
			return apierr.Invalid(fmt.Sprintf("messages[%d].role", i), "A message's role must be system, developer, user or assistant.")
		}
		if strings.TrimSpace(m.Content) == "" {
			return apierr.Invalid(fmt.Sprintf("messages[%d].content", i), "A message's content must be non-empty text.")
		}
	}
	return nil
}

// playgroundPage serves GET /console/playground: the user's active keys
// (by name, never a secret) and the chat models of their groups.
func (c *Console) playgroundPage(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	v := web.Playground{Layout: c.layout(r, s, a, "title.playground", "playground")}
	if c.Playground == nil {
		v.Off = true
		c.Pages.Render(w, http.StatusOK, "playground", v)
		return
	}
	keys, err := c.ownKeys(r, a)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	now := c.now()
	groups := map[string][]web.PlaygroundModel{}
	for _, k := range keys {
		if k.Revoked() || k.Disabled() || k.Expired(now) {
			continue
		}
		v.Keys = append(v.Keys, web.PlaygroundKey{ID: k.ID, Name: keyLabel(k), Prefix: k.Prefix, Group: k.Group})
		if _, ok := groups[k.Group]; !ok {
			ms := c.Playground.Models(k.Group)
			if ms == nil {
				ms = []web.PlaygroundModel{}
			}
			groups[k.Group] = ms
		}
	}
	if len(v.Keys) > 0 {
		v.Models = groups[v.Keys[0].Group]
	}
	b, err := json.Marshal(groups)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	v.ModelsJSON, v.BaseURL = string(b), c.Playground.BaseURL(r)
	c.Pages.Render(w, http.StatusOK, "playground", v)
}
