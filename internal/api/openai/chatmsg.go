package openai

import (
	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/jsonx"
)

var roles = []string{"system", "developer", "user", "assistant", "tool", "function"}

var messageFields = []string{"role", "content", "name", "tool_call_id", "tool_calls", "function_call", "refusal", "audio"}

// eachMember is jsonx.Each with string keys, for objects whose keys are data.
func eachMember(v []byte, fn func(k string, val []byte) bool) error {
	return jsonx.Each(v, func(k, val []byte) bool { return fn(string(k), val) })
}

// checkMessages validates the messages array; present is false for null.
func checkMessages(v []byte) (present bool, e *apierr.Error) {
	switch kind(v) {
	case "null":
		return false, nil
	case "array":
	default:
		return false, wrongType("messages", "an array", v)
	}
	n := 0
	e = elements(v, func(i int, el []byte) *apierr.Error {
		n++
		return checkMessage(i, el)
	})
	if e == nil && n == 0 {
		e = apierr.Invalid("messages", "Invalid 'messages': empty array. Expected an array with at least one message.")
	}
	return true, e
}

// message holds what one message's checks need.
type message struct {
	at         string
	role       string
	hasRole    bool
	content    []byte
	name       bool
	toolCallID bool
}

func checkMessage(i int, raw []byte) *apierr.Error {
	m := message{at: index("messages", i)}
	if kind(raw) != "object" {
		return wrongType(m.at, "an object", raw)
	}
	if e := members(raw, m.at, messageFields, m.member); e != nil {
		return e
	}
	if !m.hasRole {
		return missing(m.at + ".role")
	}
	switch m.role {
	case "system", "developer", "user":
		if k := kind(m.content); k == "nothing" || k == "null" {
			return missing(m.at + ".content")
		}
	case "assistant":
	case "tool":
		if !m.toolCallID {
			return missing(m.at + ".tool_call_id")
		}
	case "function":
		if !m.name {
			return missing(m.at + ".name")
		}
	default:
		return oneOf(m.at+".role", m.role, roles...)
	}
	return checkContent(m.at+".content", m.role, m.content)
}

func (m *message) member(key string, v []byte) *apierr.Error {
	param := m.at + "." + key
	var e *apierr.Error
	switch key {
	case "role":
		m.role, m.hasRole, e = str(v, param)
	case "content":
		m.content = v
	case "name":
		var s string
		s, m.name, e = str(v, param)
		m.name = m.name && s != ""
	case "tool_call_id":
		var s string
		s, m.toolCallID, e = str(v, param)
		m.toolCallID = m.toolCallID && s != ""
	case "refusal":
		e = isStr(v, param)
	case "tool_calls":
		e = checkToolCalls(param, v)
	case "function_call":
		if !isNull(v) {
			e = checkCall(param, v, true)
		}
	case "audio":
		if k := kind(v); k != "object" && k != "null" {
			e = wrongType(param, "an object", v)
		}
	}
	return e
}

func checkToolCalls(at string, v []byte) *apierr.Error {
	switch kind(v) {
	case "null":
		return nil
	case "array":
	default:
		return wrongType(at, "an array", v)
	}
	return elements(v, func(i int, el []byte) *apierr.Error {
		p := index(at, i)
		if kind(el) != "object" {
			return wrongType(p, "an object", el)
		}
		var id, typ string
		var fn []byte
		e := members(el, p, []string{"id", "type", "function"}, func(key string, val []byte) *apierr.Error {
			var e *apierr.Error
			switch key {
			case "id":
				id, _, e = str(val, p+".id")
			case "type":
				typ, _, e = str(val, p+".type")
			case "function":
				fn = val
			}
			return e
		})
		switch {
		case e != nil:
			return e
		case id == "":
			return missing(p + ".id")
		case typ != "" && typ != "function":
			return nil // custom tool calls carry other fields
		case fn == nil || isNull(fn):
			return missing(p + ".function")
		}
		return checkCall(p+".function", fn, true)
	})
}

// checkCall checks {name, arguments}; the name is required when named.
func checkCall(at string, v []byte, named bool) *apierr.Error {
	if kind(v) != "object" {
		return wrongType(at, "an object", v)
	}
	var name string
	e := members(v, at, []string{"name", "arguments"}, func(key string, val []byte) *apierr.Error {
		if key == "name" {
			var e *apierr.Error
			name, _, e = str(val, at+".name")
			return e
		}
		return isStr(val, at+"."+key)
	})
	if e == nil && named && name == "" {
		return missing(at + ".name")
	}
	return e
}

// checkContent accepts a string, null where the role allows it, or an array
// of parts; assistants may omit content when they call tools.
func checkContent(at, role string, raw []byte) *apierr.Error {
	switch kind(raw) {
	case "string", "nothing", "null":
		return nil
	case "array":
	default:
		return wrongType(at, "a string or an array of content parts", raw)
	}
	n := 0
	e := elements(raw, func(j int, part []byte) *apierr.Error {
		n++
		return checkPart(index(at, j), part)
	})
	if e == nil && n == 0 && role != "assistant" {
		return apierr.Invalid(at, "Invalid '%s': empty array. Expected at least one content part.", at)
	}
	return e
}

var partFields = []string{"type", "text", "refusal", "image_url", "input_audio", "file"}

// checkPart checks one content part; unknown part types are forwarded
// unchecked because OpenAI-compatible vendors add their own (video_url, ...).
func checkPart(at string, raw []byte) *apierr.Error {
	if kind(raw) != "object" {
		return wrongType(at, "an object", raw)
	}
	var typ string
	var hasType bool
	vals := map[string][]byte{}
	e := members(raw, at, partFields, func(key string, val []byte) *apierr.Error {
		if key == "type" {
			var e *apierr.Error
			typ, hasType, e = str(val, at+".type")
			return e
		}
		vals[key] = val
		return nil
	})
	if e != nil {
		return e
	}
	if !hasType {
		return missing(at + ".type")
	}
	switch typ {
	case "text", "refusal":
		v, ok := vals[typ]
		if !ok || isNull(v) {
			return missing(at + "." + typ)
		}
		return isStr(v, at+"."+typ)
	case "image_url":
		return checkImageURL(at+".image_url", vals["image_url"])
	case "input_audio":
		return requireStrings(at+".input_audio", vals["input_audio"], "data", "format")
	case "file":
		if kind(vals["file"]) != "object" {
			return wrongType(at+".file", "an object", vals["file"])
		}
	}
	return nil
}

func checkImageURL(at string, v []byte) *apierr.Error {
	if v == nil || isNull(v) {
		return missing(at)
	}
	if kind(v) != "object" {
		return wrongType(at, "an object", v)
	}
	var url, detail string
	var hasDetail bool
	e := members(v, at, []string{"url", "detail"}, func(key string, val []byte) *apierr.Error {
		var e *apierr.Error
		if key == "url" {
			url, _, e = str(val, at+".url")
		} else {
			detail, hasDetail, e = str(val, at+".detail")
		}
		return e
	})
	switch {
	case e != nil:
		return e
	case url == "":
		return missing(at + ".url")
	case hasDetail && detail != "auto" && detail != "low" && detail != "high":
		return oneOf(at+".detail", detail, "auto", "low", "high")
	}
	return nil
}

// requireStrings checks that object v has non-null string members names.
func requireStrings(at string, v []byte, names ...string) *apierr.Error {
	if v == nil || isNull(v) {
		return missing(at)
	}
	if kind(v) != "object" {
		return wrongType(at, "an object", v)
	}
	seen := 0
	e := members(v, at, names, func(key string, val []byte) *apierr.Error {
		if !isNull(val) {
			seen++
		}
		return isStr(val, at+"."+key)
	})
	if e == nil && seen < len(names) {
		for _, n := range names {
			if val, ok := jsonx.Field(v, n); !ok || isNull(val) {
				return missing(at + "." + n)
			}
		}
	}
	return e
}
