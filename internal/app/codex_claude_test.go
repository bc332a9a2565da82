package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
)

// codexTurn1 is Claude's first answer in a Codex tool loop, streamed: it
// thinks (signed), searches the web once, and calls apply_patch.
const codexTurn1 = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":50,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Patch it.\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"c2lnLTE=\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\":\\\"lark grammar\\\"}\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_1\",\"content\":[]}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"apply_patch\",\"input\":{}}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"input\\\":\\\"*** Begin Patch\\\\n*** End Patch\\\"}\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":3}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":30,\"output_tokens_details\":{\"thinking_tokens\":5},\"server_tool_use\":{\"web_search_requests\":1}}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// codexTurn2 is Claude's answer once the patch is applied.
const codexTurn2 = `{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Done."}],` +
	`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":80,"output_tokens":5,"server_tool_use":{"web_search_requests":0}}}`

// codexRequest is the body Codex CLI sends for a Claude model (wire_api
// "responses"): its default tools, store false, encrypted reasoning.
func codexRequest(model string, input string, stream bool) string {
	return `{"model":"` + model + `","instructions":"You are Codex.","input":` + input + `,"tools":[` +
		`{"type":"function","name":"shell_command","description":"Runs a command.","strict":false,"parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}},` +
		`{"type":"custom","name":"apply_patch","description":"Edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch"}},` +
		`{"type":"namespace","name":"multi_agent_v1","description":"Tools in the multi_agent_v1 namespace.","tools":[{"type":"function","name":"spawn_agent","description":"Start an agent.","strict":false,"parameters":{"type":"object","properties":{"task":{"type":"string"}}}}]},` +
		`{"type":"web_search","external_web_access":true}],` +
		`"tool_choice":"auto","parallel_tool_calls":false,"reasoning":{"effort":"medium","summary":"auto"},"store":false,` +
		`"stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"include":["reasoning.encrypted_content"],"prompt_cache_key":"k1"}`
}

// TestCodexClaudeToolLoop drives two turns of Codex's tool loop against a
// Claude model through the whole gateway: Codex's tools reach Anthropic as
// functions, the web search tool and thinking; the answer comes back as
// Codex's items (custom_tool_call, web_search_call, reasoning with the
// signed thinking in encrypted_content); the next turn gives the thinking
// back before the tool_use; the search is billed.
func TestCodexClaudeToolLoop(t *testing.T) {
	var mu sync.Mutex
	var sent [][]byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, body)
		mu.Unlock()
		if !strings.Contains(string(body), `"tool_result"`) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, codexTurn1)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, codexTurn2)
	}))
	t.Cleanup(up.Close)
	in, out, search := config.Amount(money.Unit), config.Amount(2*money.Unit), config.Amount(money.Unit/100)
	g := startGateway(t, func(c *config.Config) {
		c.Providers = append(c.Providers, config.Provider{Name: "codex-anthropic", Type: "anthropic", BaseURL: up.URL,
			APIKey: "x", Models: []config.ModelRef{{ID: "claude-codex", Upstream: "claude-sonnet-4-5"}, {ID: "claude-unpriced-search", Upstream: "claude-sonnet-4-5"}},
			Weight: 1, Timeout: config.Duration(5 * time.Second), IdleTimeout: config.Duration(2 * time.Second)})
		c.Models = append(c.Models,
			config.ModelConfig{ID: "claude-codex", Input: &in, Output: &out, ToolCalls: map[string]config.Amount{"web_search": search}},
			config.ModelConfig{ID: "claude-unpriced-search", Input: &in, Output: &out})
	})
	c := g.client(g.keys["default"])
	ctx := context.Background()

	// Turn 1, streamed as Codex asks.
	user := `[{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}]`
	s := collectEvents(t, true, c.Responses.NewStreaming(ctx, responses.ResponseNewParams{},
		option.WithRequestBody("application/json", []byte(codexRequest("claude-codex", user, true)))))
	r := s.final
	if r.Status != "completed" || len(r.Output) != 3 {
		t.Fatalf("turn 1: %s", r.RawJSON())
	}
	rs, call, ws := r.Output[0], r.Output[1], r.Output[2]
	if rs.Type != "reasoning" || rs.Content[0].Text != "Patch it." || rs.EncryptedContent == "" {
		t.Errorf("reasoning %s", rs.RawJSON())
	}
	if call.Type != "custom_tool_call" || call.Name != "apply_patch" || call.CallID != "toolu_1" || call.Input != "*** Begin Patch\n*** End Patch" {
		t.Errorf("call %s", call.RawJSON())
	}
	if ws.Type != "web_search_call" || ws.Status != "completed" {
		t.Errorf("search %s", ws.RawJSON())
	}
	if u := r.Usage; u.InputTokens != 50 || u.OutputTokens != 30 || u.OutputTokensDetails.ReasoningTokens != 5 {
		t.Errorf("usage %+v", u)
	}
	var first struct {
		Tools []struct {
			Type    string `json:"type"`
			Name    string `json:"name"`
			MaxUses int64  `json:"max_uses"`
		} `json:"tools"`
		Thinking *struct{ Type string } `json:"thinking"`
	}
	if err := json.Unmarshal(sent[0], &first); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range first.Tools {
		names = append(names, tl.Type+":"+tl.Name)
	}
	if strings.Join(names, " ") != ":shell_command :apply_patch :multi_agent_v1__spawn_agent web_search_20250305:web_search" || first.Thinking == nil {
		t.Errorf("turn 1 sent %s", sent[0])
	}

	// Turn 2: Codex sends the items back with the patch's output.
	var items []json.RawMessage
	_ = json.Unmarshal([]byte(user), &items)
	for _, o := range r.Output {
		items = append(items, json.RawMessage(o.RawJSON()))
	}
	items = append(items, json.RawMessage(`{"type":"custom_tool_call_output","call_id":"toolu_1","output":"Success."}`))
	input, _ := json.Marshal(items)
	r2, err := c.Responses.New(ctx, responses.ResponseNewParams{},
		option.WithRequestBody("application/json", []byte(codexRequest("claude-codex", string(input), false))))
	if err != nil {
		t.Fatal(err)
	}
	if r2.OutputText() != "Done." || len(r2.Output) != 1 {
		t.Errorf("turn 2: %s", r2.RawJSON())
	}
	var second struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Thinking *struct{ Type string } `json:"thinking"`
	}
	if err := json.Unmarshal(sent[1], &second); err != nil {
		t.Fatal(err)
	}
	wantTurn := `[{"type":"thinking","thinking":"Patch it.","signature":"c2lnLTE="},` +
		`{"type":"tool_use","id":"toolu_1","name":"apply_patch","input":{"input":"*** Begin Patch\n*** End Patch"}}]`
	if len(second.Messages) != 3 || string(second.Messages[1].Content) != wantTurn || second.Thinking == nil ||
		!strings.Contains(string(second.Messages[2].Content), `"tool_use_id":"toolu_1"`) {
		t.Errorf("turn 2 sent %s", sent[1])
	}

	// A model without a web search price refuses the tool, naming it.
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{},
		option.WithRequestBody("application/json", []byte(codexRequest("claude-unpriced-search", user, false))))
	var ae *oai.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || ae.Param != "tools[3].type" || !strings.Contains(ae.Message, "web search") {
		t.Errorf("unpriced search: %v (%s)", err, ae.RawJSON())
	}

	// Turn 1 paid its search at the catalog's price; turn 2 searched not.
	recs := g.usage()
	var costs []money.Micros
	for _, rec := range recs {
		if rec.Status == http.StatusOK {
			costs = append(costs, rec.Cost)
		}
	}
	want := map[money.Micros]bool{50*1 + 30*2 + search.Micros(): true, 80*1 + 5*2: true}
	if len(costs) != 2 || !want[costs[0]] || !want[costs[1]] || costs[0] == costs[1] {
		t.Errorf("costs %v; want %v", costs, want)
	}
}
