package gemini

import (
	"context"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/provider"
)

// groundedAnswer is a Gemini answer grounded in two Google searches.
const groundedAnswer = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Go 1.26 is out."}]},"finishReason":"STOP","index":0,` +
	`"groundingMetadata":{"webSearchQueries":["go release","go 1.26"],"groundingChunks":[{"web":{"uri":"https://go.dev","title":"go.dev"}}],` +
	`"searchEntryPoint":{"renderedContent":"<div></div>"}}}],` +
	`"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":6,"totalTokenCount":16},"responseId":"r1"}`

// groundedStream is the same answer streamed: the metadata comes last.
const groundedStream = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Go 1.26"}]},"index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":2,"totalTokenCount":12},"responseId":"r1"}` + "\n\n" +
	`data: {"candidates":[{"content":{"role":"model","parts":[{"text":" is out."}]},"finishReason":"STOP","index":0,"groundingMetadata":{"webSearchQueries":["go release","go 1.26"]}}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":6,"totalTokenCount":16},"responseId":"r1"}` + "\n\n"

// TestWebSearch: web_search_options turns on Google Search grounding next
// to the functions, and the grounding queries are the usage's searches.
func TestWebSearch(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"news?"}],"tools":[{"type":"function","function":{"name":"f"}}],"web_search_options":{}}`
	for _, streaming := range []bool{false, true} {
		var up *upstream
		if streaming {
			up = newUpstream(t, 200, "text/event-stream", groundedStream)
		} else {
			up = newUpstream(t, 200, "application/json", groundedAnswer)
		}
		c := testClient(t, up.URL)
		if !c.WebSearch() {
			t.Error("Gemini has a web search")
		}
		req := &provider.ChatRequest{PublicModel: "pub", UpstreamModel: "gemini-3-pro", Body: []byte(body), Stream: streaming}
		var u provider.Usage
		if streaming {
			s, err := c.ChatStream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			for s.Next() {
			}
			if s.Err() != nil {
				t.Fatal(s.Err())
			}
			var ok bool
			if u, ok = s.Usage(); !ok {
				t.Fatal("no final usage")
			}
			_ = s.Close()
		} else {
			res, err := c.Chat(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			u = res.Usage
			if !strings.Contains(string(res.Body), "Go 1.26 is out.") {
				t.Errorf("body %s", res.Body)
			}
		}
		if !strings.Contains(up.body, `"tools":[{"functionDeclarations":[{"name":"f"}]},{"google_search":{}}]`) {
			t.Errorf("request %s", up.body)
		}
		if u.WebSearches != 2 || u.PromptTokens != 10 || u.CompletionTokens != 6 {
			t.Errorf("stream=%v usage %+v", streaming, u)
		}
	}
	// No grounding, no searches; no options, no search tool.
	up := newUpstream(t, 200, "application/json", fixture(t, "response/thinking.gemini.json"))
	res, err := testClient(t, up.URL).Chat(context.Background(), &provider.ChatRequest{PublicModel: "pub", UpstreamModel: "g", Body: []byte(hello)})
	if err != nil || res.Usage.WebSearches != 0 || strings.Contains(up.body, "google_search") {
		t.Errorf("plain request: %v %+v %s", err, res.Usage, up.body)
	}
}

// TestThoughtSignatureExtraContent: a replayed tool call's signature comes
// from extra_content.google.thought_signature (Gemini's convention) before
// its id, and goes back on the functionCall part.
func TestThoughtSignatureExtraContent(t *testing.T) {
	cases := []struct{ name, call, want string }{
		{"extra content", `{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"U0lH"}}}`, `"thoughtSignature":"U0lH"`},
		{"id", `{"id":"call_1~sig~SUQ=","type":"function","function":{"name":"f","arguments":"{}"}}`, `"thoughtSignature":"SUQ="`},
		{"both: extra content wins", `{"id":"call_1~sig~SUQ=","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"U0lH"}}}`, `"thoughtSignature":"U0lH"`},
	}
	for _, tc := range cases {
		up := newUpstream(t, 200, "application/json", groundedAnswer)
		body := `{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[` + tc.call + `]},` +
			`{"role":"tool","tool_call_id":"` + strings.Split(strings.Split(tc.call, `"id":"`)[1], `"`)[0] + `","content":"ok"}]}`
		if _, err := testClient(t, up.URL).Chat(context.Background(), &provider.ChatRequest{PublicModel: "p", UpstreamModel: "g", Body: []byte(body)}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !strings.Contains(up.body, `{`+tc.want+`,"functionCall":{"name":"f","args":{}}}`) {
			t.Errorf("%s: request %s", tc.name, up.body)
		}
	}
}
