package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/oapitest"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

func TestAnswer(t *testing.T) {
	req := `{"model":"m","input":"hi","instructions":"Be brief.","max_output_tokens":40,"temperature":0.3,` +
		`"tools":[{"type":"function","name":"get_current_weather","parameters":{"type":"object"},"strict":false}],"tool_choice":"required",` +
		`"text":{"format":{"type":"json_object"}},"metadata":{"k":"v"},"parallel_tool_calls":false,"reasoning":{"effort":"low"}}`
	cases := []struct {
		name  string
		chat  []byte
		check func(t *testing.T, r *responses.Response)
	}{
		{"text", providertest.Fixture(t, "openai/chat_completion.json"), func(t *testing.T, r *responses.Response) {
			if r.Status != "completed" || len(r.Output) != 1 || r.Output[0].Type != "message" || r.OutputText() == "" ||
				!strings.HasPrefix(r.Output[0].ID, "msg_") || r.CompletedAt != 12 {
				t.Errorf("%+v", r)
			}
		}},
		{"tool call", providertest.Fixture(t, "openai/chat_tool_call.json"), func(t *testing.T, r *responses.Response) {
			o := r.Output
			if len(o) != 1 || o[0].Type != "function_call" || o[0].CallID != "call_abc123" || o[0].Name != "get_current_weather" ||
				!strings.Contains(o[0].Arguments.OfString, "Boston") || !strings.HasPrefix(o[0].ID, "fc_") {
				t.Errorf("%+v", o)
			}
		}},
		{"reasoning, text and refusal cut short", []byte(`{"id":"c","object":"chat.completion","created":1,"model":"x","choices":[{"index":0,` +
			`"message":{"role":"assistant","content":"Par","reasoning_content":"Hmm.","refusal":"no"},"finish_reason":"length"}]}`),
			func(t *testing.T, r *responses.Response) {
				o := r.Output
				if r.Status != "incomplete" || r.IncompleteDetails.Reason != "max_output_tokens" || r.CompletedAt != 0 || len(o) != 2 ||
					o[0].Type != "reasoning" || o[0].Content[0].Text != "Hmm." || o[1].Content[0].Text != "Par" ||
					o[1].Content[1].Refusal != "no" || o[1].Status != "incomplete" {
					t.Errorf("%+v", r)
				}
			}},
		{"content filter", []byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]}`),
			func(t *testing.T, r *responses.Response) {
				if r.Status != "incomplete" || r.IncompleteDetails.Reason != "content_filter" || r.OutputText() != "" || len(r.Output) != 1 {
					t.Errorf("%+v", r)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := translate(t, req)
			a, err := tr.Answer(tc.chat)
			if err != nil {
				t.Fatal(err)
			}
			b, err := a.JSON("resp_1", 10, 12, provider.Usage{PromptTokens: 5, CompletionTokens: 7, CachedTokens: 1, ReasoningTokens: 2})
			if err != nil {
				t.Fatal(err)
			}
			oapitest.CheckComponent(t, "Response", b)
			var r responses.Response
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			// The request's parameters are shown back.
			if r.ID != "resp_1" || r.Object != "response" || r.Model != "m" || r.CreatedAt != 10 || r.Instructions.OfString != "Be brief." ||
				r.MaxOutputTokens != 40 || r.Temperature != 0.3 || r.TopP != 1 || r.ParallelToolCalls || r.Metadata["k"] != "v" ||
				r.ToolChoice.OfToolChoiceMode != "required" || len(r.Tools) != 1 || r.Tools[0].Name != "get_current_weather" ||
				r.Text.Format.Type != "json_object" || r.Reasoning.Effort != "low" {
				t.Errorf("echo %s", b)
			}
			if u := r.Usage; u.InputTokens != 5 || u.OutputTokens != 7 || u.TotalTokens != 12 || u.InputTokensDetails.CachedTokens != 1 ||
				u.OutputTokensDetails.ReasoningTokens != 2 {
				t.Errorf("usage %+v", u)
			}
			tc.check(t, &r)
		})
	}
	tr, _ := translate(t, `{"model":"m","input":"hi"}`)
	for _, bad := range []string{`{`, `{"choices":[]}`} {
		if _, err := tr.Answer([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
