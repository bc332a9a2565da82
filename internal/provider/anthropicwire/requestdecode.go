package anthropicwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelgate/modelgate/internal/jsonx"
)

// The request types decode by hand, walking the raw JSON with jsonx: with
// encoding/json, every UnmarshalJSON of a union (Content, Block, Source)
// validates its bytes again before decoding them, so a 4 MB image nested
// five levels deep was scanned a dozen times (11 MB/s). Keys match exactly,
// as Anthropic matches them; every other member goes to Extra where there is
// one and is ignored elsewhere.

// DecodeMessagesRequest decodes a Messages request body that is known to be
// valid JSON (see jsonx.Check); it is UnmarshalJSON without encoding/json's
// own validation pass.
func DecodeMessagesRequest(b []byte) (*MessagesRequest, error) {
	var r MessagesRequest
	if err := r.decode(b); err != nil {
		return nil, err
	}
	return &r, nil
}

// UnmarshalJSON decodes the request and keeps unknown members in Extra.
func (r *MessagesRequest) UnmarshalJSON(b []byte) error { return r.decode(b) }

func (r *MessagesRequest) decode(b []byte) error {
	*r = MessagesRequest{}
	return eachMember(b, "request", func(k string, v []byte) error {
		switch k {
		case "model":
			return decodeString(v, &r.Model, k)
		case "max_tokens":
			return decodeInt(v, &r.MaxTokens, k)
		case "messages":
			return eachElement(v, k, func(i int, el []byte) error {
				r.Messages = append(r.Messages, Message{})
				return r.Messages[i].decode(el, "messages."+strconv.Itoa(i))
			}, func() { r.Messages = []Message{} })
		case "system":
			return decodeContentPtr(v, &r.System, k)
		case "temperature":
			return decodeFloat(v, &r.Temperature, k)
		case "top_p":
			return decodeFloat(v, &r.TopP, k)
		case "top_k":
			return decodeInt(v, &r.TopK, k)
		case "stop_sequences":
			return eachElement(v, k, func(i int, el []byte) error {
				r.StopSequences = append(r.StopSequences, "")
				return decodeString(el, &r.StopSequences[i], k)
			}, func() { r.StopSequences = []string{} })
		case "stream":
			var s *bool
			err := decodeBool(v, &s, k)
			r.Stream = s != nil && *s
			return err
		case "metadata":
			return decodeSmall(v, &r.Metadata, k)
		case "tools":
			return eachElement(v, k, func(i int, el []byte) error {
				r.Tools = append(r.Tools, Tool{})
				return r.Tools[i].decode(el, "tools."+strconv.Itoa(i))
			}, func() { r.Tools = []Tool{} })
		case "tool_choice":
			return decodeSmall(v, &r.ToolChoice, k)
		case "thinking":
			return decodeSmall(v, &r.Thinking, k)
		case "service_tier":
			return decodeString(v, &r.ServiceTier, k)
		case "context_management":
			r.ContextManagement = bytes.Clone(v)
		case "output_config":
			if isNull(v) {
				return nil
			}
			r.OutputConfig = &OutputConfig{}
			return r.OutputConfig.decode(v)
		case "container":
			r.Container = bytes.Clone(v)
		case "mcp_servers":
			r.MCPServers = bytes.Clone(v)
		case "cache_control":
			return decodeSmall(v, &r.CacheControl, k)
		case "inference_geo":
			return decodeString(v, &r.InferenceGeo, k)
		default:
			setExtra(&r.Extra, k, v)
		}
		return nil
	})
}

func (m *Message) decode(b []byte, at string) error {
	return eachMember(b, at, func(k string, v []byte) error {
		switch k {
		case "role":
			return decodeString(v, &m.Role, at+".role")
		case "content":
			return m.Content.decode(v, at+".content")
		case "clear_at":
			return decodeString(v, &m.ClearAt, at+".clear_at")
		}
		return nil
	})
}

// UnmarshalJSON accepts a string, a list of blocks or null.
func (c *Content) UnmarshalJSON(b []byte) error { return c.decode(b, "content") }

func (c *Content) decode(b []byte, at string) error {
	*c = Content{}
	switch jsonx.Kind(b) {
	case "null":
		return nil
	case "string":
		var s string
		err := decodeString(b, &s, at)
		c.Text = &s
		return err
	case "array":
		c.Blocks = []Block{}
		return eachElement(b, at, func(i int, el []byte) error {
			c.Blocks = append(c.Blocks, Block{})
			return c.Blocks[i].decode(el, at+"."+strconv.Itoa(i))
		}, nil)
	}
	return fmt.Errorf("anthropicwire: %s: want a string or a list of content blocks, got %s", at, jsonx.Kind(b))
}

// UnmarshalJSON decodes the block and keeps unknown members in Extra.
func (b *Block) UnmarshalJSON(data []byte) error { return b.decode(data, "block") }

func (b *Block) decode(data []byte, at string) error {
	*b = Block{}
	return eachMember(data, at, func(k string, v []byte) error {
		p := at + "." + k
		switch k {
		case "type":
			return decodeString(v, &b.Type, p)
		case "text":
			return decodeString(v, &b.Text, p)
		case "citations":
			b.Citations = bytes.Clone(v)
		case "cache_control":
			return decodeSmall(v, &b.CacheControl, p)
		case "source":
			if isNull(v) {
				return nil
			}
			b.Source = &Source{}
			return b.Source.decode(v, p)
		case "id":
			return decodeString(v, &b.ID, p)
		case "name":
			return decodeString(v, &b.Name, p)
		case "input":
			b.Input = bytes.Clone(v)
		case "server_name":
			return decodeString(v, &b.ServerName, p)
		case "tool_use_id":
			return decodeString(v, &b.ToolUseID, p)
		case "content":
			return decodeContentPtr(v, &b.Content, p)
		case "is_error":
			return decodeBool(v, &b.IsError, p)
		case "thinking":
			return decodeString(v, &b.Thinking, p)
		case "signature":
			return decodeString(v, &b.Signature, p)
		case "data":
			return decodeString(v, &b.Data, p)
		case "title":
			return decodeString(v, &b.Title, p)
		case "context":
			return decodeString(v, &b.Context, p)
		case "file_id":
			return decodeString(v, &b.FileID, p)
		default:
			setExtra(&b.Extra, k, v)
		}
		return nil
	})
}

// UnmarshalJSON accepts a source object or a string (search_result).
func (s *Source) UnmarshalJSON(b []byte) error { return s.decode(b, "source") }

func (s *Source) decode(b []byte, at string) error {
	*s = Source{}
	if jsonx.Kind(b) == "string" {
		return decodeString(b, &s.Name, at)
	}
	return eachMember(b, at, func(k string, v []byte) error {
		p := at + "." + k
		switch k {
		case "type":
			return decodeString(v, &s.Type, p)
		case "media_type":
			return decodeString(v, &s.MediaType, p)
		case "data":
			return decodeString(v, &s.Data, p)
		case "url":
			return decodeString(v, &s.URL, p)
		case "file_id":
			return decodeString(v, &s.FileID, p)
		case "content":
			return decodeContentPtr(v, &s.Content, p)
		}
		return nil
	})
}

// UnmarshalJSON decodes the tool and keeps unknown members in Extra.
func (t *Tool) UnmarshalJSON(b []byte) error { return t.decode(b, "tool") }

func (t *Tool) decode(b []byte, at string) error {
	*t = Tool{}
	return eachMember(b, at, func(k string, v []byte) error {
		p := at + "." + k
		switch k {
		case "type":
			return decodeString(v, &t.Type, p)
		case "name":
			return decodeString(v, &t.Name, p)
		case "description":
			return decodeString(v, &t.Description, p)
		case "input_schema":
			t.InputSchema = bytes.Clone(v)
		case "cache_control":
			return decodeSmall(v, &t.CacheControl, p)
		case "strict":
			return decodeBool(v, &t.Strict, p)
		default:
			setExtra(&t.Extra, k, v)
		}
		return nil
	})
}

// UnmarshalJSON decodes output_config and keeps unknown members in Extra.
func (o *OutputConfig) UnmarshalJSON(b []byte) error { return o.decode(b) }

func (o *OutputConfig) decode(b []byte) error {
	*o = OutputConfig{}
	return eachMember(b, "output_config", func(k string, v []byte) error {
		switch k {
		case "effort":
			return decodeString(v, &o.Effort, "output_config.effort")
		case "format":
			return decodeSmall(v, &o.Format, "output_config.format")
		default:
			setExtra(&o.Extra, k, v)
		}
		return nil
	})
}

// eachMember calls fn for each member of the object b (null has none).
func eachMember(b []byte, at string, fn func(k string, v []byte) error) error {
	switch k := jsonx.Kind(b); k {
	case "null":
		return nil
	case "object":
	default:
		return fmt.Errorf("anthropicwire: %s: want an object, got %s", at, k)
	}
	var err error
	if e := jsonx.Each(b, func(k, v []byte) bool {
		err = fn(string(k), v)
		return err == nil
	}); e != nil {
		return fmt.Errorf("anthropicwire: %s: %w", at, e)
	}
	return err
}

// eachElement calls fn for each element of the array b; null has none. An
// empty array calls empty, so it can differ from an absent one.
func eachElement(b []byte, at string, fn func(i int, el []byte) error, empty func()) error {
	switch k := jsonx.Kind(b); k {
	case "null":
		return nil
	case "array":
	default:
		return fmt.Errorf("anthropicwire: %s: want an array, got %s", at, k)
	}
	var err error
	i := 0
	if e := jsonx.EachElement(b, func(el []byte) bool {
		err = fn(i, el)
		i++
		return err == nil
	}); e != nil {
		return fmt.Errorf("anthropicwire: %s: %w", at, e)
	}
	if i == 0 && empty != nil {
		empty()
	}
	return err
}

func decodeString(v []byte, dst *string, at string) error {
	switch k := jsonx.Kind(v); k {
	case "null":
		return nil
	case "string":
	default:
		return fmt.Errorf("anthropicwire: %s: want a string, got %s", at, k)
	}
	v = bytes.TrimSpace(v)
	if bytes.IndexByte(v, '\\') < 0 {
		*dst = string(v[1 : len(v)-1])
		return nil
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return fmt.Errorf("anthropicwire: %s: %w", at, err)
	}
	return nil
}

func decodeInt(v []byte, dst **int64, at string) error {
	if isNull(v) {
		return nil
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil {
		return fmt.Errorf("anthropicwire: %s: want an integer, got %s", at, v)
	}
	*dst = &n
	return nil
}

func decodeFloat(v []byte, dst **float64, at string) error {
	if isNull(v) {
		return nil
	}
	if jsonx.Kind(v) != "number" {
		return fmt.Errorf("anthropicwire: %s: want a number, got %s", at, jsonx.Kind(v))
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	if err != nil {
		return fmt.Errorf("anthropicwire: %s: %w", at, err)
	}
	*dst = &f
	return nil
}

func decodeBool(v []byte, dst **bool, at string) error {
	switch string(bytes.TrimSpace(v)) {
	case "null":
		return nil
	case "true", "false":
		t := bytes.TrimSpace(v)[0] == 't'
		*dst = &t
		return nil
	}
	return fmt.Errorf("anthropicwire: %s: want a boolean, got %s", at, jsonx.Kind(v))
}

func decodeContentPtr(v []byte, dst **Content, at string) error {
	if isNull(v) {
		return nil
	}
	*dst = &Content{}
	return (*dst).decode(v, at)
}

// decodeSmall decodes a small member with encoding/json (null leaves *dst
// nil).
func decodeSmall[T any](v []byte, dst **T, at string) error {
	if isNull(v) {
		return nil
	}
	var x T
	if err := json.Unmarshal(v, &x); err != nil {
		return fmt.Errorf("anthropicwire: %s: %w", at, err)
	}
	*dst = &x
	return nil
}

func setExtra(m *map[string]json.RawMessage, k string, v []byte) {
	if *m == nil {
		*m = make(map[string]json.RawMessage)
	}
	(*m)[k] = bytes.Clone(v)
}

func isNull(v []byte) bool { return jsonx.Kind(v) == "null" }
