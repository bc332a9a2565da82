package openaicompat

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/provider"
)

// wireUsage is OpenAI's usage object.
type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func parseUsage(raw []byte) (provider.Usage, bool) {
	var w wireUsage
	if err := json.Unmarshal(raw, &w); err != nil {
		return provider.Usage{}, false
	}
	u := provider.Usage{PromptTokens: w.PromptTokens, CompletionTokens: w.CompletionTokens, TotalTokens: w.TotalTokens}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	if w.PromptTokensDetails != nil {
		u.CachedTokens = w.PromptTokensDetails.CachedTokens
	}
	if w.CompletionTokensDetails != nil {
		u.ReasoningTokens = w.CompletionTokensDetails.ReasoningTokens
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
