package anthropic

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
)

// Decoding a Messages body is two passes. The first walks the raw JSON
// (jsonx.Check has vouched for syntax, UTF-8 and unique keys) and checks the
// JSON type of every member the gateway knows, so a wrong type is refused
// with its full path ("messages.1.content.0.type") rather than with
// encoding/json's Go-flavoured message. The second decodes into
// anthropicwire.MessagesRequest, which then cannot fail, and checks what
// spans members: required members, tool_result pairing. Members the gateway
// does not know pass: an Anthropic upstream gets the client's bytes.

// parsed is a Messages request that passed validation.
type parsed struct {
	Model     string
	MaxTokens int64 // 0 for count_tokens, which has none
	Stream    bool
	Req       anthropicwire.MessagesRequest
	// ModelAt locates model in the body, for the pass-through's patch.
	ModelAt jsonx.Span
}

// msgMaxDepth bounds JSON nesting; tool schemas are the deepest legitimate
// structures and stay far below it.
const msgMaxDepth = 128

// maxImageBytes is Anthropic's documented limit for one image sent to the
// Messages API (5 MB), decoded.
const maxImageBytes = 5 << 20

// knownBlockTypes are the content block types of the Messages API
// (anthropic-sdk-go's BetaContentBlockParamUnion and tool result content).
var knownBlockTypes = []string{
	"text", "image", "document", "search_result", "thinking", "redacted_thinking",
	"tool_use", "tool_result", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
	"code_execution_tool_result", "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
	"tool_search_tool_result", "advisor_tool_result", "mcp_tool_use", "mcp_tool_result", "container_upload",
	"compaction", "tool_reference", "tool_addition", "tool_removal", "mcp_tool_listing", "fallback",
}

// parseMessages validates the body of POST /v1/messages.
func parseMessages(body []byte) (*parsed, *apierr.Error) { return parseMessagesBody(body, true) }

// parseCountTokens validates the body of POST /v1/messages/count_tokens,
// which is a Messages body without max_tokens (one sent is ignored).
func parseCountTokens(body []byte) (*parsed, *apierr.Error) { return parseMessagesBody(body, false) }

func parseMessagesBody(body []byte, create bool) (*parsed, *apierr.Error) {
	if err := jsonx.Check(body, msgMaxDepth); err != nil {
		return nil, apierr.Invalid("", "We could not parse the JSON body of your request: %v. "+
			"The body must be a single JSON object in UTF-8 with no duplicate keys.", err)
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, apierr.Invalid("", "The request body must be a JSON object, but got %s.", jsonArticle(jsonx.Kind(body)))
	}
	p := &parsed{}
	if e := (reqCheck{create: create}).top(body); e != nil {
		return nil, e
	}
	// The walk has checked every member's type, so this cannot fail; it
	// skips encoding/json's validation pass (jsonx.Check did that).
	if err := p.Req.UnmarshalJSON(body); err != nil {
		return nil, apierr.Invalid("", "We could not decode the request body: %v.", err)
	}
	var sp [1]jsonx.Span
	_, _ = jsonx.Members(body, []string{"model"}, sp[:])
	p.ModelAt = sp[0]
	p.Model, p.Stream = p.Req.Model, p.Req.Stream
	if p.Model == "" {
		if sp[0].Found() && !jsonx.IsNull(sp[0].Value(body)) {
			return nil, apierr.Invalid("model", "Invalid 'model': it must not be empty.")
		}
		return nil, missingParam("model")
	}
	if create {
		if p.Req.MaxTokens == nil {
			return nil, missingParam("max_tokens")
		}
		p.MaxTokens = *p.Req.MaxTokens
	}
	if len(p.Req.Messages) == 0 {
		if p.Req.Messages == nil {
			return nil, missingParam("messages")
		}
		return nil, apierr.Invalid("messages", "Invalid 'messages': at least one message is required.")
	}
	if e := checkToolResults(p.Req.Messages); e != nil {
		return nil, e
	}
	if e := checkImageSizes(p.Req.Messages); e != nil {
		return nil, e
	}
	return p, nil
}

// checkToolResults refuses, as Anthropic does, a tool_result whose
// tool_use_id matches no tool_use block of the assistant message right
// before it, and a tool_use that the message after it (when there is one)
// does not answer with a tool_result.
func checkToolResults(msgs []anthropicwire.Message) *apierr.Error {
	for i := range msgs {
		blocks := msgs[i].Content.Blocks
		for j := range blocks {
			b := &blocks[j]
			switch {
			case b.Type == "tool_result" && (i == 0 || msgs[i-1].Role != "assistant" || !hasBlock(msgs[i-1], "tool_use", b.ToolUseID)):
				at := fmt.Sprintf("messages.%d.content.%d", i, j)
				return apierr.Invalid(at+".tool_use_id", "%s: unexpected 'tool_use_id' found in 'tool_result' blocks: %s. "+
					"Each 'tool_result' block must have a corresponding 'tool_use' block in the previous message, "+
					"which must be an assistant message.", at, b.ToolUseID)
			case b.Type == "tool_use" && msgs[i].Role == "assistant" && i+1 < len(msgs) && !hasBlock(msgs[i+1], "tool_result", b.ID):
				at := fmt.Sprintf("messages.%d.content.%d", i, j)
				return apierr.Invalid(at+".id", "messages.%d: 'tool_use' ids were found without 'tool_result' blocks immediately after: %s. "+
					"Each 'tool_use' block must have a corresponding 'tool_result' block in the next message.", i, b.ID)
			}
		}
	}
	return nil
}

// hasBlock reports whether m has a block of type typ that refers to id
// (a tool_use's id, a tool_result's tool_use_id).
func hasBlock(m anthropicwire.Message, typ, id string) bool {
	for k := range m.Content.Blocks {
		b := &m.Content.Blocks[k]
		if b.Type == typ && (b.ID == id && typ == "tool_use" || b.ToolUseID == id && typ == "tool_result") {
			return true
		}
	}
	return false
}

// checkImageSizes refuses a base64 image larger than Anthropic accepts,
// reckoned from the length of its base64 text (nothing is decoded).
func checkImageSizes(msgs []anthropicwire.Message) *apierr.Error {
	var bad *apierr.Error
	var walk func(at string, blocks []anthropicwire.Block)
	walk = func(at string, blocks []anthropicwire.Block) {
		for j := range blocks {
			b := &blocks[j]
			here := at + "." + strconv.Itoa(j)
			if b.Type == "image" && b.Source != nil && b.Source.Type == "base64" {
				if n := base64Decoded(b.Source.Data); n > maxImageBytes && bad == nil {
					bad = apierr.Invalid(here+".source.data", "%s.source.data: the image is %s (%d bytes) once decoded, "+
						"over the limit of 5 MB (%d bytes) per image.", here, megabytes(n), n, maxImageBytes)
				}
			}
			if b.Content != nil && bad == nil {
				walk(here+".content", b.Content.Blocks)
			}
		}
	}
	for i := range msgs {
		walk("messages."+strconv.Itoa(i)+".content", msgs[i].Content.Blocks)
		if bad != nil {
			return bad
		}
	}
	return nil
}

// base64Decoded is the number of bytes a base64 text decodes to.
func base64Decoded(s string) int64 {
	n := int64(len(s))
	pad := int64(0)
	for i := len(s) - 1; i >= 0 && pad < 2 && s[i] == '='; i-- {
		pad++
	}
	return n/4*3 + max(0, n%4-1) - pad
}

func megabytes(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
}

// reqCheck walks a raw Messages body; create says whether it is a create
// request (max_tokens required) or count_tokens.
type reqCheck struct{ create bool }

// topKeys are the top-level members whose type the walk checks.
var topKeys = []string{"model", "max_tokens", "messages", "system", "temperature", "top_p", "top_k",
	"stop_sequences", "stream", "metadata", "tools", "tool_choice", "thinking", "service_tier",
	"context_management", "output_config", "container", "mcp_servers", "cache_control", "inference_geo"}

func (c reqCheck) top(body []byte) *apierr.Error {
	return c.members(body, "", topKeys, func(key string, v []byte) *apierr.Error {
		switch key {
		case "model", "service_tier", "inference_geo":
			return c.str(v, key)
		case "max_tokens":
			_, e := c.integer(v, key, 1)
			return e
		case "top_k":
			_, e := c.integer(v, key, 0)
			return e
		case "temperature", "top_p":
			return c.number(v, key, 0, 1)
		case "stream":
			return c.boolean(v, key)
		case "messages":
			return c.array(v, key, c.message)
		case "system":
			return c.content(v, key, func(at string, el []byte) *apierr.Error {
				if e := c.block(at, el); e != nil {
					return e
				}
				if t, _ := jsonx.Field(el, "type"); string(t) != `"text"` {
					return apierr.Invalid(at+".type", "Invalid '%s.type': the system prompt takes text blocks only.", at)
				}
				return nil
			})
		case "stop_sequences":
			return c.array(v, key, func(at string, el []byte) *apierr.Error { return c.reqStr(el, at) })
		case "metadata":
			return c.object(v, key, []string{"user_id"}, func(k string, v []byte) *apierr.Error { return c.str(v, "metadata."+k) })
		case "tools":
			return c.array(v, key, c.tool)
		case "tool_choice":
			return c.toolChoice(v)
		case "thinking":
			return c.thinking(v)
		case "output_config":
			return c.outputConfig(v)
		case "cache_control":
			return c.cacheControl(v, key)
		case "context_management":
			return c.object(v, key, nil, nil)
		case "container":
			if k := jsonx.Kind(v); k == "string" || k == "null" {
				return nil
			}
			return c.object(v, key, nil, nil)
		case "mcp_servers":
			return c.array(v, key, func(at string, el []byte) *apierr.Error { return c.object(el, at, nil, nil) })
		}
		return nil
	})
}

func (c reqCheck) message(at string, v []byte) *apierr.Error {
	if k := jsonx.Kind(v); k != "object" {
		return wrongJSONType(at, "an object", k)
	}
	role, hasContent := "", false
	e := c.object(v, at, []string{"role", "content", "clear_at"}, func(k string, v []byte) *apierr.Error {
		switch k {
		case "role":
			r, e := c.oneOf(v, at+".role", "user", "assistant", "system")
			role = r
			return e
		case "content":
			hasContent = true
			return c.content(v, at+".content", c.block)
		case "clear_at":
			return c.str(v, at+".clear_at")
		}
		return nil
	})
	switch {
	case e != nil:
		return e
	case role == "":
		return missingParam(at + ".role")
	case !hasContent:
		return missingParam(at + ".content")
	}
	return nil
}

// blockKeys are the block members anthropicwire.Block decodes.
var blockKeys = []string{"type", "text", "citations", "cache_control", "source", "id", "name", "input",
	"server_name", "tool_use_id", "content", "is_error", "thinking", "signature", "data", "title", "context", "file_id"}

// block checks one content block (in a message, the system prompt, a tool
// result or a search result).
func (c reqCheck) block(at string, v []byte) *apierr.Error {
	if k := jsonx.Kind(v); k != "object" {
		return wrongJSONType(at, "an object", k)
	}
	t, ok := jsonx.Field(v, "type")
	if !ok {
		return missingParam(at + ".type")
	}
	typ, e := c.oneOf(t, at+".type", knownBlockTypes...)
	if e != nil {
		return e
	}
	var need []string
	switch typ {
	case "text":
		need = []string{"text"}
	case "image", "document":
		need = []string{"source"}
	case "tool_use", "server_tool_use", "mcp_tool_use":
		need = []string{"id", "name", "input"}
	case "tool_result":
		need = []string{"tool_use_id"}
	case "thinking":
		need = []string{"thinking", "signature"}
	case "redacted_thinking":
		need = []string{"data"}
	case "search_result":
		need = []string{"source", "title", "content"}
	}
	for _, k := range need {
		if v, ok := jsonx.Field(v, k); !ok || jsonx.IsNull(v) {
			return missingParam(at + "." + k)
		}
	}
	return c.object(v, at, blockKeys, func(k string, v []byte) *apierr.Error {
		p := at + "." + k
		switch k {
		case "text", "id", "name", "server_name", "tool_use_id", "thinking", "signature", "data", "title", "context", "file_id":
			return c.str(v, p)
		case "is_error":
			return c.boolean(v, p)
		case "cache_control":
			return c.cacheControl(v, p)
		case "input":
			return c.object(v, p, nil, nil)
		case "source":
			if typ == "search_result" {
				return c.reqStr(v, p)
			}
			if typ == "image" || typ == "document" {
				return c.source(v, p, typ)
			}
		case "content":
			if typ == "search_result" {
				return c.array(v, p, c.block)
			}
			if jsonx.IsNull(v) {
				return nil
			}
			return c.content(v, p, c.block)
		}
		return nil
	})
}

// content checks message-like content: a string or an array of blocks,
// each checked by fn.
func (c reqCheck) content(v []byte, at string, fn func(at string, el []byte) *apierr.Error) *apierr.Error {
	switch k := jsonx.Kind(v); k {
	case "string":
		return nil
	case "array":
		return c.array(v, at, fn)
	default:
		return wrongJSONType(at, "a string or an array of content blocks", k)
	}
}

// cacheControl checks a cache_control object.
func (c reqCheck) cacheControl(v []byte, at string) *apierr.Error {
	return c.object(v, at, []string{"type", "ttl"}, func(k string, v []byte) *apierr.Error { return c.str(v, at+"."+k) })
}

// source checks an image's or a document's source.
func (c reqCheck) source(v []byte, at, blockType string) *apierr.Error {
	if k := jsonx.Kind(v); k != "object" {
		return wrongJSONType(at, "an object", k)
	}
	kinds := []string{"base64", "url", "file"}
	if blockType == "document" {
		kinds = append(kinds, "text", "content")
	}
	t, ok := jsonx.Field(v, "type")
	if !ok {
		return missingParam(at + ".type")
	}
	typ, e := c.oneOf(t, at+".type", kinds...)
	if e != nil {
		return e
	}
	need := map[string]string{"base64": "data", "text": "data", "url": "url", "file": "file_id", "content": "content"}[typ]
	if v, ok := jsonx.Field(v, need); !ok || jsonx.IsNull(v) {
		return missingParam(at + "." + need)
	}
	return c.object(v, at, []string{"type", "media_type", "data", "url", "file_id", "content"}, func(k string, v []byte) *apierr.Error {
		switch k {
		case "type":
			return nil
		case "content":
			return c.content(v, at+".content", c.block)
		}
		return c.str(v, at+"."+k)
	})
}

// tool checks one tool definition.
func (c reqCheck) tool(at string, v []byte) *apierr.Error {
	if k := jsonx.Kind(v); k != "object" {
		return wrongJSONType(at, "an object", k)
	}
	custom := true
	var name, schema []byte // read here: a tool is big, so it is walked once
	e := c.members(v, at, []string{"type", "name", "description", "input_schema", "cache_control", "strict"}, func(k string, v []byte) *apierr.Error {
		p := at + "." + k
		switch k {
		case "type":
			if e := c.str(v, p); e != nil {
				return e
			}
			custom = jsonx.IsNull(v) || string(v) == `"custom"`
		case "name":
			name = v
			return c.str(v, p)
		case "description":
			return c.str(v, p)
		case "input_schema":
			schema = v
		case "cache_control":
			return c.cacheControl(v, p)
		case "strict":
			return c.boolean(v, p)
		}
		return nil
	})
	switch {
	case e != nil:
		return e
	case jsonx.Kind(name) != "string":
		return missingParam(at + ".name")
	case string(name) == `""`:
		return apierr.Invalid(at+".name", "Invalid '%s.name': a tool needs a name.", at)
	case !custom:
		return nil
	case schema == nil || jsonx.IsNull(schema):
		return missingParam(at + ".input_schema")
	case jsonx.Kind(schema) != "object":
		return apierr.Invalid(at+".input_schema", "Invalid '%s.input_schema': a tool's input schema must be a JSON Schema object, but got %s.",
			at, jsonArticle(jsonx.Kind(schema)))
	}
	return nil
}

func (c reqCheck) toolChoice(v []byte) *apierr.Error {
	typ := ""
	e := c.object(v, "tool_choice", []string{"type", "name", "disable_parallel_tool_use"}, func(k string, v []byte) *apierr.Error {
		switch k {
		case "type":
			t, e := c.oneOf(v, "tool_choice.type", "auto", "any", "tool", "none")
			typ = t
			return e
		case "name":
			return c.str(v, "tool_choice.name")
		case "disable_parallel_tool_use":
			return c.boolean(v, "tool_choice.disable_parallel_tool_use")
		}
		return nil
	})
	switch {
	case e != nil:
		return e
	case typ == "":
		return missingParam("tool_choice.type")
	case typ == "tool":
		if n, _ := jsonx.Field(v, "name"); jsonx.Kind(n) != "string" || string(n) == `""` {
			return missingParam("tool_choice.name")
		}
	}
	return nil
}

func (c reqCheck) thinking(v []byte) *apierr.Error {
	typ := ""
	e := c.object(v, "thinking", []string{"type", "budget_tokens", "display"}, func(k string, v []byte) *apierr.Error {
		switch k {
		case "type":
			t, e := c.oneOf(v, "thinking.type", "enabled", "disabled", "adaptive", "between_tools")
			typ = t
			return e
		case "budget_tokens":
			_, e := c.integer(v, "thinking.budget_tokens", 1024)
			return e
		case "display":
			return c.str(v, "thinking.display")
		}
		return nil
	})
	switch {
	case e != nil:
		return e
	case typ == "":
		return missingParam("thinking.type")
	case typ == "enabled":
		if b, ok := jsonx.Field(v, "budget_tokens"); !ok || jsonx.IsNull(b) {
			return missingParam("thinking.budget_tokens")
		}
	}
	return nil
}

func (c reqCheck) outputConfig(v []byte) *apierr.Error {
	return c.object(v, "output_config", []string{"effort", "format"}, func(k string, v []byte) *apierr.Error {
		if k == "effort" {
			_, e := c.oneOf(v, "output_config.effort", "low", "medium", "high", "xhigh", "max")
			return e
		}
		if jsonx.IsNull(v) {
			return nil
		}
		e := c.object(v, "output_config.format", []string{"type", "schema"}, func(k string, v []byte) *apierr.Error {
			if k == "type" {
				_, e := c.oneOf(v, "output_config.format.type", "json_schema")
				return e
			}
			return c.object(v, "output_config.format.schema", nil, nil)
		})
		if e != nil {
			return e
		}
		if s, ok := jsonx.Field(v, "schema"); !ok || jsonx.IsNull(s) {
			return missingParam("output_config.format.schema")
		}
		return nil
	})
}
