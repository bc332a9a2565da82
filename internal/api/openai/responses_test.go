package openai

import (
	"errors"
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	chg "github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/oapitest"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// admit's errors name chat parameters; the client sent Responses ones.
func TestRenameParams(t *testing.T) {
	cases := []struct {
		in                     *apierr.Error
		wantParam, wantMessage string
	}{
		{apierr.Invalid("max_tokens", "The request's maximum cost is too large to reserve; lower max_tokens."),
			"max_output_tokens", "The request's maximum cost is too large to reserve; lower max_output_tokens."},
		{apierr.Invalid("messages", "your messages resulted in 9 tokens"), "input", "your input resulted in 9 tokens"},
		{lifecycle.Quota("Add funds, or lower max_tokens."), "", "Add funds, or lower max_output_tokens."},
		{apierr.Invalid("temperature", "bad"), "temperature", "bad"},
	}
	for _, tc := range cases {
		e := apierr.From(renameParams(tc.in))
		if e.Param != tc.wantParam || e.Message != tc.wantMessage {
			t.Errorf("got %q %q, want %q %q", e.Param, e.Message, tc.wantParam, tc.wantMessage)
		}
	}
	if e := apierr.From(renameParams(errors.New("boom"))); e.Status != http.StatusInternalServerError {
		t.Errorf("plain error became %v", e)
	}
}

// The error event that ends a relayed stream is one the official schema accepts.
func TestErrorEvent(t *testing.T) {
	for _, e := range []*apierr.Error{
		{Status: 502, Type: apierr.TypeServer, Code: apierr.CodeUpstreamError, Message: "The upstream provider failed."},
		apierr.Invalid("input", "bad input"),
	} {
		b := errorEvent(e, 7)
		oapitest.CheckComponent(t, "ResponseErrorEvent", b)
		want := `{"type":"error","sequence_number":7,"code":"` + e.Code + `","message":"` + e.Message + `","param":`
		if e.Param == "" {
			want += "null}"
		} else {
			want += `"` + e.Param + `"}`
		}
		if string(b) != want {
			t.Errorf("got %s, want %s", b, want)
		}
	}
}

// Relayed deltas are counted (for a client that leaves before the usage
// arrives), and the last sequence number remembered.
func TestNoteEvent(t *testing.T) {
	tok := tokenize.NewSet().For("o200k")
	count := tok.NewStream()
	seq := int64(-1)
	events := []struct{ name, data string }{
		{"response.created", `{"type":"response.created","sequence_number":0,"response":{"output":[{"text":"not counted"}]}}`},
		{"response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":1,"delta":"Hello"}`},
		{"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","sequence_number":2,"delta":" world"}`},
		{"response.output_text.done", `{"type":"response.output_text.done","sequence_number":3,"text":"Hello world"}`},
	}
	for _, e := range events {
		noteEvent(count, e.name, []byte(e.data), &seq)
	}
	if want := tok.Count([]byte("Hello world")); count.Tokens() != want || seq != 3 {
		t.Errorf("counted %d tokens (want %d), seq %d", count.Tokens(), want, seq)
	}
	noteEvent(nil, "response.output_text.delta", []byte(`{"sequence_number":4,"delta":"x"}`), &seq)
	if seq != 4 {
		t.Errorf("seq %d without a counter", seq)
	}
}

func TestAddOutputText(t *testing.T) {
	tok := tokenize.NewSet().For("o200k")
	s := tok.NewStream()
	addOutputText(s, []byte(`{"output":[{"type":"reasoning","summary":[]},{"type":"message","content":[{"type":"output_text","text":"Hi "},`+
		`{"type":"refusal","refusal":"no "}]},{"type":"function_call","arguments":"{\"a\":1}"}]}`))
	if want := tok.Count([]byte(`Hi no {"a":1}`)); s.Tokens() != want {
		t.Errorf("counted %d, want %d", s.Tokens(), want)
	}
	addOutputText(s, []byte(`not json`)) // ignored
}

// settleResponses charges the vendor's counts at the model's price, and
// nothing without billing.
func TestSettleResponses(t *testing.T) {
	if got := settleResponses(nil, provider.Usage{PromptTokens: 10, CompletionTokens: 10}); got != 0 {
		t.Errorf("nil charge cost %v", got)
	}
	c := &lifecycle.Charge{Charge: &chg.Charge{Price: billing.ModelPrice{Free: true}}}
	if got := settleResponses(c, provider.Usage{PromptTokens: 10, CompletionTokens: 10}); got != 0 {
		t.Errorf("free model cost %v", got)
	}
}

func TestValidResponseID(t *testing.T) {
	for id, want := range map[string]bool{
		"resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b": true, "resp-1_A": true,
		"": false, "..": false, "resp_1/../files": false, "resp 1": false, "resp_%2e": false, string(make([]byte, 300)): false,
	} {
		if got := validResponseID(id); got != want {
			t.Errorf("validResponseID(%q) = %v", id, got)
		}
	}
}
