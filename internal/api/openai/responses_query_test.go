package openai

import (
	"errors"
	"testing"

	"github.com/modelgate/modelgate/internal/apierr"
)

// Issue 11, finding 8: only the parameters the gateway checked reach the
// vendor, each once, in the gateway's encoding.
func TestStoredResponseQuery(t *testing.T) {
	for _, tc := range []struct {
		raw, model, fwd string
		param, code     string // of the 400, when refused
	}{
		{raw: ""},
		{raw: "model=gpt-4o-mini&stream=false", model: "gpt-4o-mini"},
		{raw: "stream=", fwd: ""},
		{raw: "include[]=reasoning.encrypted_content&include=reasoning.encrypted_content&include[]=message.output_text.logprobs",
			fwd: "include%5B%5D=reasoning.encrypted_content&include%5B%5D=message.output_text.logprobs"},
		{raw: "include%5B%5D=reasoning.encrypted_content&include%5B%5D=reasoning.encrypted_content", fwd: "include%5B%5D=reasoning.encrypted_content"},
		{raw: "starting_after=007&include_obfuscation=false", fwd: "include_obfuscation=false&starting_after=7"},
		{raw: "stream=false&stream=true", param: "stream", code: "invalid_request_error"},
		{raw: "stream=false&stream=false", param: "stream", code: "invalid_request_error"},
		{raw: "stream=true", param: "stream", code: "invalid_request_error"},
		{raw: "stream=1", param: "stream", code: "invalid_request_error"},
		{raw: "model=a&model=b", param: "model", code: "invalid_request_error"},
		{raw: "starting_after=1&starting_after=2", param: "starting_after", code: "invalid_request_error"},
		{raw: "starting_after=-1", param: "starting_after", code: "invalid_request_error"},
		{raw: "starting_after=1e3", param: "starting_after", code: "invalid_request_error"},
		{raw: "include_obfuscation=1", param: "include_obfuscation", code: "invalid_request_error"},
		{raw: "include[]=everything", param: "include", code: "invalid_value"},
		{raw: "api-version=2025-04-01-preview", param: "api-version", code: "unknown_parameter"},
		{raw: "key=AIza", param: "key", code: "unknown_parameter"},
		{raw: "Stream=true", param: "Stream", code: "unknown_parameter"},
		{raw: "include=%zz", param: "", code: "invalid_request_error"},
	} {
		model, fwd, err := storedResponseQuery(tc.raw)
		if tc.code != "" {
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Code != tc.code || e.Param != tc.param {
				t.Errorf("%q: want 400 %s (%s), got %v", tc.raw, tc.code, tc.param, err)
			}
			continue
		}
		if err != nil || model != tc.model || fwd.Encode() != tc.fwd {
			t.Errorf("%q: got model %q, forward %q, %v; want %q, %q", tc.raw, model, fwd.Encode(), err, tc.model, tc.fwd)
		}
	}
}
