package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/oapitest"
	"github.com/modelgate/modelgate/internal/provider"
)

func TestWebSearchTranslate(t *testing.T) {
	cases := []struct{ name, tool, want string }{
		{"codex", `{"type":"web_search","external_web_access":true}`, `"web_search_options":{}`},
		{"dated preview with options", `{"type":"web_search_preview_2025_03_11","search_context_size":"high","user_location":{"type":"approximate","city":"Paris","country":"FR"}}`,
			`"web_search_options":{"search_context_size":"high","user_location":{"type":"approximate","approximate":{"city":"Paris","country":"FR"}}}`},
		{"filters dropped", `{"type":"web_search","filters":{"allowed_domains":["go.dev"]}}`, `"web_search_options":{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, chat := translate(t, `{"model":"m","input":"hi","tools":[{"type":"function","name":"f"},`+tc.tool+`]}`)
			if !strings.Contains(string(tr.Chat), tc.want) || len(chat.Tools) != 1 {
				t.Errorf("chat body %s", tr.Chat)
			}
			if e := tr.WebSearch(searcher(true)); e != nil {
				t.Errorf("refused for a vendor that searches: %v", e)
			}
			e := tr.WebSearch(searcher(false))
			if e == nil || e.Param != "tools[1].type" || !strings.Contains(e.Message, "no web search") {
				t.Errorf("vendor without search: %+v", e)
			}
			if e := tr.WebSearch(struct{}{}); e == nil {
				t.Error("accepted for an adapter that does not say")
			}
			e = tr.Rename(apierr.Invalid("web_search_options", "no price"))
			if e.Param != "tools[1].type" || !strings.Contains(e.Message, "no price for web searches") {
				t.Errorf("renamed %+v", e)
			}
		})
	}
	tr, _ := translate(t, `{"model":"m","input":"hi"}`)
	if e := tr.WebSearch(struct{}{}); e != nil {
		t.Errorf("a request without search refused: %v", e)
	}
	if e := tr.Rename(apierr.Invalid("web_search_options", "x")); e.Param != "web_search_options" {
		t.Errorf("renamed without a search tool: %+v", e)
	}
	r, _ := Parse([]byte(`{"model":"m","input":"x","tools":[{"type":"web_search"},{"type":"web_search_preview"}]}`))
	if _, e := r.Translate(); e == nil || e.Param != "tools[1]" {
		t.Errorf("two search tools: %+v", e)
	}
}

type searcher bool

func (s searcher) WebSearch() bool { return bool(s) }

func TestWebSearchAnswer(t *testing.T) {
	tr, _ := translate(t, `{"model":"m","input":"news?","tools":[{"type":"web_search"}]}`)
	a, err := tr.Answer([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"Found it."},"finish_reason":"stop"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.JSON("resp_1", 1, 2, provider.Usage{PromptTokens: 3, CompletionTokens: 4, WebSearches: 2})
	if err != nil {
		t.Fatal(err)
	}
	oapitest.CheckComponent(t, "Response", b)
	var r responses.Response
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	o := r.Output
	if len(o) != 3 || o[0].Type != "web_search_call" || o[1].Type != "web_search_call" || o[2].Type != "message" ||
		!strings.HasPrefix(o[0].ID, "ws_") || o[0].Status != "completed" || o[0].Action.Type != "search" || r.OutputText() != "Found it." {
		t.Errorf("output %s", b)
	}
	if len(r.Tools) != 1 || r.Tools[0].Type != "web_search" {
		t.Errorf("tools echo %s", b)
	}
}

func TestWebSearchStream(t *testing.T) {
	tr, _ := translate(t, `{"model":"m","input":"news?","stream":true,"tools":[{"type":"web_search"}]}`)
	in := [][]byte{
		[]byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Found"}}]}`),
		[]byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
	}
	evs := run(t, tr, in, func(s *Stream) []Event { return s.Finish(provider.Usage{WebSearches: 1}, 3) })
	if got := types(evs); !strings.Contains(got, "output_item.done output_item.added web_search_call.completed output_item.done completed") {
		t.Errorf("events %s", got)
	}
	var done responses.ResponseCompletedEvent
	if err := json.Unmarshal(evs[len(evs)-1].Data, &done); err != nil {
		t.Fatal(err)
	}
	if o := done.Response.Output; len(o) != 2 || o[1].Type != "web_search_call" {
		t.Errorf("output %+v", o)
	}
}
