package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/provider"
)

// searchMessage is a Message that searched twice before answering, as
// Anthropic's web search tool returns it.
const searchMessage = `{"id":"msg_s","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[` +
	`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"go release"}},` +
	`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://go.dev/doc/devel/release","title":"Release History","encrypted_content":"EqgfCioIARgB","page_age":"April 1, 2026"}]},` +
	`{"type":"server_tool_use","id":"srvtoolu_2","name":"web_search","input":{"query":"go 1.26"}},` +
	`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_2","content":[]},` +
	`{"type":"text","text":"Go 1.26 is out.","citations":[{"type":"web_search_result_location","url":"https://go.dev/doc/devel/release","title":"Release History","encrypted_index":"Eo8BCi","cited_text":"go1.26"}]}],` +
	`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":900,"output_tokens":40,"server_tool_use":{"web_search_requests":2}}}`

// searchStream is the same answer streamed.
const searchStream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_s\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":900,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\":\\\"go release\\\"}\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_1\",\"content\":[{\"type\":\"web_search_result\",\"url\":\"https://go.dev\",\"title\":\"Go\",\"encrypted_content\":\"Eq\",\"page_age\":null}]}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"Go 1.26 is out.\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"citations_delta\",\"citation\":{\"type\":\"web_search_result_location\",\"url\":\"https://go.dev\",\"title\":\"Go\",\"encrypted_index\":\"Eo\",\"cited_text\":\"go1.26\"}}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":40,\"server_tool_use\":{\"web_search_requests\":1}}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// TestWebSearch: web_search_options sends the web search server tool;
// the searches the answer reports are the usage's WebSearches, and the
// server tool blocks leave the chat answer as it would be without them.
func TestWebSearch(t *testing.T) {
	checkMessageOracle(t, []byte(searchMessage))
	checkEventsOracle(t, []byte(searchStream))
	for _, streaming := range []bool{false, true} {
		var sent []byte
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent, _ = io.ReadAll(r.Body)
			if streaming {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, searchStream)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, searchMessage)
		}))
		c, err := New(Options{Name: "a", BaseURL: srv.URL, APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		if !c.WebSearch() {
			t.Error("Anthropic has a web search")
		}
		req := &provider.ChatRequest{PublicModel: "p", UpstreamModel: "u", Stream: streaming, IncludeUsage: true,
			Body: []byte(`{"model":"p","messages":[{"role":"user","content":"news?"}],"tools":[{"type":"function","function":{"name":"f"}}],` +
				`"web_search_options":{"search_context_size":"low","user_location":{"type":"approximate","approximate":{"city":"Paris","country":"FR"}}}}`)}
		var text string
		var u provider.Usage
		if streaming {
			s, err := c.ChatStream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			for s.Next() {
				var ch struct {
					Choices []struct {
						Delta struct {
							Content   *string           `json:"content"`
							ToolCalls []json.RawMessage `json:"tool_calls"`
						} `json:"delta"`
					} `json:"choices"`
				}
				_ = json.Unmarshal(s.Chunk(), &ch)
				for _, c := range ch.Choices {
					if c.Delta.Content != nil {
						text += *c.Delta.Content
					}
					if len(c.Delta.ToolCalls) > 0 {
						t.Errorf("the server tool became a tool call: %s", s.Chunk())
					}
				}
			}
			if s.Err() != nil {
				t.Fatal(s.Err())
			}
			u, _ = s.Usage()
			_ = s.Close()
		} else {
			res, err := c.Chat(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Choices []struct {
					Message struct {
						Content   string            `json:"content"`
						ToolCalls []json.RawMessage `json:"tool_calls"`
					} `json:"message"`
					FinishReason string `json:"finish_reason"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(res.Body, &r); err != nil {
				t.Fatal(err)
			}
			text, u = r.Choices[0].Message.Content, res.Usage
			if len(r.Choices[0].Message.ToolCalls) > 0 || r.Choices[0].FinishReason != "stop" {
				t.Errorf("answer %s", res.Body)
			}
		}
		srv.Close()
		checkRequestOracle(t, sent)
		want := `{"type":"web_search_20250305","name":"web_search","max_uses":10,"user_location":{"type":"approximate","city":"Paris","country":"FR"}}`
		if !strings.Contains(string(sent), want) {
			t.Errorf("request %s lacks %s", sent, want)
		}
		searches := int64(2)
		if streaming {
			searches = 1
		}
		if text != "Go 1.26 is out." || u.WebSearches != searches || u.PromptTokens != 900 || u.CompletionTokens != 40 {
			t.Errorf("stream=%v: text %q usage %+v", streaming, text, u)
		}
	}
}
