package anthropicwire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"
)

// sameJSON fails unless a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if !reflect.DeepEqual(x, y) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", a, b)
	}
}

// sdkRequest is a request built with anthropic-sdk-go, so the member names
// and shapes below are the SDK's, not ours.
func sdkRequest(t *testing.T) []byte {
	t.Helper()
	p := sdk.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 2048,
		System: []sdk.TextBlockParam{{Text: "You are terse.", CacheControl: sdk.CacheControlEphemeralParam{TTL: sdk.CacheControlEphemeralTTLTTL1h}},
			{Text: "Answer in English."}},
		Messages: []sdk.MessageParam{
			sdk.NewUserMessage(sdk.NewTextBlock("What is in this image?"), sdk.NewImageBlockBase64("image/png", "iVBORw0KGgo="),
				sdk.NewSearchResultBlock([]sdk.TextBlockParam{{Text: "result"}}, "https://example.com", "Example")),
			sdk.NewAssistantMessage(sdk.NewThinkingBlock("sig", "let me look"), sdk.NewRedactedThinkingBlock("opaque"),
				sdk.NewToolUseBlock("toolu_01", map[string]any{"q": "cat"}, "lookup")),
			sdk.NewUserMessage(sdk.NewToolResultBlock("toolu_01", "a cat", true)),
		},
		Temperature:   param.NewOpt(0.5),
		TopK:          param.NewOpt[int64](40),
		TopP:          param.NewOpt(0.9),
		StopSequences: []string{"END"},
		Metadata:      sdk.MetadataParam{UserID: param.NewOpt("user-1")},
		Thinking:      sdk.ThinkingConfigParamOfEnabled(4096),
		ToolChoice:    sdk.ToolChoiceUnionParam{OfTool: &sdk.ToolChoiceToolParam{Name: "lookup", DisableParallelToolUse: param.NewOpt(true)}},
		Tools: []sdk.ToolUnionParam{
			{OfTool: &sdk.ToolParam{Name: "lookup", Description: param.NewOpt("Look up"), Strict: param.NewOpt(true),
				InputSchema: sdk.ToolInputSchemaParam{Properties: map[string]any{"q": map[string]any{"type": "string"}}}}},
			{OfWebSearchTool20250305: &sdk.WebSearchTool20250305Param{MaxUses: param.NewOpt[int64](3)}},
		},
		OutputConfig: sdk.OutputConfigParam{Effort: sdk.OutputConfigEffortHigh},
		ServiceTier:  sdk.MessageNewParamsServiceTierAuto,
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeSDKRequest(t *testing.T) {
	body := sdkRequest(t)
	var r MessagesRequest
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	if r.Model != "claude-sonnet-4-5" || *r.MaxTokens != 2048 || *r.Temperature != 0.5 || *r.TopK != 40 || *r.TopP != 0.9 ||
		r.StopSequences[0] != "END" || r.Metadata.UserID != "user-1" || r.ServiceTier != "auto" || r.OutputConfig.Effort != "high" {
		t.Errorf("scalars: %+v", r)
	}
	if r.System == nil || len(r.System.Blocks) != 2 || r.System.Blocks[0].Text != "You are terse." || r.System.Blocks[0].CacheControl.TTL != "1h" {
		t.Errorf("system: %+v", r.System)
	}
	if th := r.Thinking; th == nil || th.Type != "enabled" || *th.BudgetTokens != 4096 {
		t.Errorf("thinking: %+v", th)
	}
	if c := r.ToolChoice; c == nil || c.Type != "tool" || c.Name != "lookup" || !*c.DisableParallelToolUse {
		t.Errorf("tool_choice: %+v", c)
	}
	if len(r.Tools) != 2 || !r.Tools[0].IsCustom() || *r.Tools[0].Strict != true || !strings.Contains(string(r.Tools[0].InputSchema), `"q"`) ||
		r.Tools[1].IsCustom() || r.Tools[1].Type != "web_search_20250305" || r.Tools[1].Name != "web_search" || string(r.Tools[1].Extra["max_uses"]) != "3" {
		t.Errorf("tools: %+v", r.Tools)
	}
	u := r.Messages[0].Content.Blocks
	if r.Messages[0].Role != "user" || u[0].Text != "What is in this image?" || u[1].Source.Type != "base64" ||
		u[1].Source.MediaType != "image/png" || u[1].Source.Data != "iVBORw0KGgo=" ||
		u[2].Type != "search_result" || u[2].Source.Name != "https://example.com" || u[2].Title != "Example" || u[2].Content.Blocks[0].Text != "result" {
		t.Errorf("user blocks: %+v", u)
	}
	a := r.Messages[1].Content.Blocks
	if a[0].Thinking != "let me look" || a[0].Signature != "sig" || a[1].Data != "opaque" ||
		a[2].ID != "toolu_01" || a[2].Name != "lookup" || string(a[2].Input) != `{"q":"cat"}` {
		t.Errorf("assistant blocks: %+v", a)
	}
	tr := r.Messages[2].Content.Blocks[0]
	if tr.ToolUseID != "toolu_01" || !*tr.IsError || tr.Content.Blocks[0].Text != "a cat" {
		t.Errorf("tool_result: %+v", tr)
	}
	back, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, back, body)
}

// TestRoundTripKeepsUnknown: what the types do not name survives a decode
// and a marshal where they have Extra.
func TestRoundTripKeepsUnknown(t *testing.T) {
	body := `{"model":"m","max_tokens":5,"stream":true,"speed":"fast","diagnostics":{"a":[1,2]},
	"system":"plain system",
	"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},"container":"cntr_1","mcp_servers":[{"type":"url","url":"https://mcp"}],
	"cache_control":{"type":"ephemeral"},"inference_geo":"us",
	"output_config":{"effort":"max","task_budget":{"type":"tokens","total":100},"format":{"type":"json_schema","schema":{"type":"object"}}},
	"messages":[{"role":"user","content":[{"type":"text","text":"a\"b\\n\u00e9","citations":[{"type":"char_location","cited_text":"x"}],"future":true},
	  {"type":"document","source":{"type":"content","content":[{"type":"text","text":"d"}]},"title":"T","context":"C","citations":{"enabled":true}},
	  {"type":"container_upload","file_id":"file_1"}]},
	 {"role":"assistant","content":[{"type":"mcp_tool_use","id":"m1","name":"q","server_name":"srv","input":{}},{"type":"tool_use","id":"t1","name":"f","input":{},"caller":{"type":"direct"}}]},
	 {"role":"system","content":"mid","clear_at":"next_user_message"}],
	"tools":[{"name":"f","input_schema":{"type":"object"},"defer_loading":true,"input_examples":[{"a":1}]},{"type":"bash_20250124","name":"bash"}]}`
	var r MessagesRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if r.Messages[0].Content.Blocks[0].Text != "a\"b\\né" || !r.Messages[0].Content.Blocks[1].CitationsEnabled() ||
		r.Messages[0].Content.Blocks[0].CitationsEnabled() || r.Messages[2].ClearAt != "next_user_message" ||
		*r.System.Text != "plain system" || r.OutputConfig.Format.Type != "json_schema" || !r.Stream {
		t.Errorf("decoded: %+v", r)
	}
	back, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, back, []byte(body))
}

// TestDecodeErrors: a member of the wrong type is an error naming its path
// (the door's walk refuses such bodies earlier, with the same path).
func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`[]`, "want an object"},
		{`{"model":1}`, "model: want a string"},
		{`{"max_tokens":1.5}`, "max_tokens: want an integer"},
		{`{"messages":[{"role":"user","content":5}]}`, "messages.0.content: want a string or a list of content blocks"},
		{`{"messages":[{"role":"user","content":[{"type":"text","text":1}]}]}`, "messages.0.content.0.text: want a string"},
		{`{"messages":[{"role":"user","content":[{"type":"tool_result","is_error":"no"}]}]}`, "messages.0.content.0.is_error: want a boolean"},
		{`{"tools":[{"name":["x"]}]}`, "tools.0.name: want a string"},
		{`{"stream":"yes"}`, "stream: want a boolean"},
		{`{"tool_choice":{"type":5}}`, "tool_choice"},
	} {
		_, err := DecodeMessagesRequest([]byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DecodeMessagesRequest(%s) = %v, want %q", tc.body, err, tc.want)
		}
	}
}

func TestContentForms(t *testing.T) {
	for _, tc := range []struct {
		in     string
		text   bool
		blocks int
	}{{`"hi"`, true, 0}, {`[]`, false, 0}, {`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, false, 2}, {`null`, false, 0}} {
		var c Content
		if err := json.Unmarshal([]byte(tc.in), &c); err != nil {
			t.Fatal(err)
		}
		if c.IsText() != tc.text || len(c.Blocks) != tc.blocks {
			t.Errorf("%s: %+v", tc.in, c)
		}
		back, _ := json.Marshal(c)
		sameJSON(t, back, []byte(tc.in))
	}
	if b, _ := json.Marshal(TextContent("x")); string(b) != `"x"` {
		t.Errorf("TextContent marshals to %s", b)
	}
}

// TestThinkingBlockMarshal checks a thinking block always has its
// thinking member (Anthropic requires it, empty or not) and other blocks
// never get one.
func TestThinkingBlockMarshal(t *testing.T) {
	cases := []struct {
		b    Block
		want string
	}{
		{Block{Type: BlockThinking, Signature: "sig"}, `{"type":"thinking","signature":"sig","thinking":""}`},
		{Block{Type: BlockThinking, Thinking: "hm", Signature: "sig"}, `{"type":"thinking","thinking":"hm","signature":"sig"}`},
		{Block{Type: BlockThinking, Signature: "sig", Extra: map[string]json.RawMessage{"z": []byte(`1`)}}, `{"type":"thinking","signature":"sig","thinking":"","z":1}`},
		{Block{Type: BlockText, Text: "hi"}, `{"type":"text","text":"hi"}`},
	}
	for _, tc := range cases {
		b, err := json.Marshal(tc.b)
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v: %s %v, want %s", tc.b, b, err, tc.want)
		}
	}
	if e := (Block{Type: BlockThinking, Extra: map[string]json.RawMessage{"z": []byte(`1`)}}); len(e.Extra) != 1 {
		t.Error("setup")
	} else if _, _ = json.Marshal(e); len(e.Extra) != 1 {
		t.Errorf("Marshal changed the block's Extra: %v", e.Extra)
	}
}
