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
// "completion_tokens_details": {"reasoning_tokens"}}). It runs once per
// answer on the hot path, so it picks the members out of the raw bytes
// rather than decoding by reflection. ok is false unless raw is an object
// whose counts, where present, are integers: a vendor's usage the gateway
// cannot read is treated as missing (and the gateway counts), never as 0.
func parseUsage(raw []byte) (u provider.Usage, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return provider.Usage{}, false
	}
	ok = true
	count := func(obj []byte, key string) int64 {
		v, found := jsonx.Field(obj, key)
		if !found || jsonx.IsNull(v) {
			return 0
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			ok = false
		}
		return n
	}
	detail := func(key, inner string) int64 {
		v, found := jsonx.Field(raw, key)
		if !found || jsonx.IsNull(v) {
			return 0
		}
		if len(v) == 0 || v[0] != '{' {
			ok = false
			return 0
		}
		return count(v, inner)
	}
	u = provider.Usage{PromptTokens: count(raw, "prompt_tokens"), CompletionTokens: count(raw, "completion_tokens"),
		TotalTokens: count(raw, "total_tokens"), CachedTokens: detail("prompt_tokens_details", "cached_tokens"),
		ReasoningTokens: detail("completion_tokens_details", "reasoning_tokens")}
	if !ok {
		return provider.Usage{}, false
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u, true
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
