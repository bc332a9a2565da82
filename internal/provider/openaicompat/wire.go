package openaicompat

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
)

// parseUsage reads OpenAI's usage object ({"prompt_tokens", "completion_tokens",
// "total_tokens", "prompt_tokens_details": {"cached_tokens"},
// "completion_tokens_details": {"reasoning_tokens"}}, and each details
// object's "audio_tokens"). It runs once per
// answer on the hot path, so it picks the members out of the raw bytes
// rather than decoding by reflection. ok is false unless raw is an object
// whose counts, where present, are integers: a vendor's usage the gateway
// cannot read is treated as missing (and the gateway counts), never as 0.
//
// One pass over the members (and one over each details object); where a
// member repeats, the first counts, as jsonx.Field would find it.
func parseUsage(raw []byte) (u provider.Usage, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return provider.Usage{}, false
	}
	ok = true
	var seen uint8
	first := func(bit uint8) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	read := func(dst *int64, v []byte) {
		if jsonx.IsNull(v) {
			return
		}
		n, good := tokenCount(v)
		*dst, ok = n, ok && good
	}
	// detail reads a details object's count inner into dst and its
	// audio_tokens into audio.
	detail := func(dst *int64, v []byte, inner string, audio *int64) {
		if jsonx.IsNull(v) {
			return
		}
		if len(v) == 0 || v[0] != '{' {
			ok = false
			return
		}
		var got uint8
		_ = jsonx.Each(v, func(key, val []byte) bool {
			switch {
			case got&1 == 0 && string(key) == inner:
				read(dst, val)
				got |= 1
			case got&2 == 0 && string(key) == "audio_tokens":
				read(audio, val)
				got |= 2
			}
			return got != 3
		})
	}
	err := jsonx.Each(raw, func(key, v []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			if first(1) {
				read(&u.PromptTokens, v)
			}
		case "completion_tokens":
			if first(2) {
				read(&u.CompletionTokens, v)
			}
		case "total_tokens":
			if first(4) {
				read(&u.TotalTokens, v)
			}
		case "prompt_tokens_details":
			if first(8) {
				detail(&u.CachedTokens, v, "cached_tokens", &u.AudioPromptTokens)
			}
		case "completion_tokens_details":
			if first(16) {
				detail(&u.ReasoningTokens, v, "reasoning_tokens", &u.AudioCompletionTokens)
			}
		}
		return true
	})
	if err != nil || !ok {
		return provider.Usage{}, false
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u, true
}

// tokenCount reads a JSON integer of at most 18 digits (any count a vendor
// reports), without allocating; false for a fraction, an exponent, a
// string or anything longer.
func tokenCount(v []byte) (int64, bool) {
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// parseVendorError reads the error bodies OpenAI-compatible vendors send:
// {"error":{"message","type","code","param"}}, {"error":"text"},
// {"message":"..."}, {"detail":"..."}, or plain text.
func parseVendorError(b []byte) provider.VendorError {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return provider.VendorError{Message: strings.TrimSpace(string(b))}
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Param   *string         `json:"param"`
	}
	if len(env.Error) > 0 && env.Error[0] == '{' && json.Unmarshal(env.Error, &obj) == nil {
		v := provider.VendorError{Message: obj.Message, Type: obj.Type, Code: rawString(obj.Code)}
		if obj.Param != nil {
			v.Param = *obj.Param
		}
		return v
	}
	if s := rawString(env.Error); s != "" {
		return provider.VendorError{Message: s}
	}
	if env.Message != "" {
		return provider.VendorError{Message: env.Message}
	}
	if s := rawString(env.Detail); s != "" {
		return provider.VendorError{Message: s}
	}
	return provider.VendorError{Message: strings.TrimSpace(string(b))}
}

// rawString renders a JSON string or number; null and others give "".
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if _, err := strconv.ParseFloat(n.String(), 64); err == nil {
			return n.String()
		}
	}
	return ""
}

// serviceTier is the tier a chat answer names (the JSON string v), "" when
// it names none; the tiers OpenAI has are constants, so reading one
// allocates nothing.
func serviceTier(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	switch s := v[1 : len(v)-1]; string(s) {
	case "default":
		return "default"
	case "priority":
		return "priority"
	case "flex":
		return "flex"
	case "auto":
		return "auto"
	case "scale":
		return "scale"
	default:
		return string(jsonx.Unescape(s))
	}
}
