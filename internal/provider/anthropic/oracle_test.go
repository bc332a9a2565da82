package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/sse"
)

// checkRequestOracle is the strict check of a request body against
// anthropic-sdk-go. The SDK's params decoder silently drops unknown keys
// (and a block of the wrong shape lands in another union variant or loses
// members), so json.Decoder.DisallowUnknownFields cannot be used on it.
// Instead the body is decoded into sdk.MessageNewParams and marshalled back:
// the round trip must give the same JSON. Any member the SDK does not know,
// or knows under another shape, is lost on the way and fails the check.
func checkRequestOracle(t *testing.T, body []byte) {
	t.Helper()
	if err := requestOracle(body); err != nil {
		t.Error(err)
	}
}

func requestOracle(body []byte) error {
	// stream is not a member of MessageNewParams: the SDK sets it in
	// NewStreaming. It is checked here and removed before the round trip.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return fmt.Errorf("oracle: body is not an object: %w", err)
	}
	if s, ok := top["stream"]; ok {
		if string(s) != "true" {
			return fmt.Errorf("oracle: stream is %s", s)
		}
		delete(top, "stream")
		body, _ = json.Marshal(top)
	}
	var p sdk.MessageNewParams
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("oracle: MessageNewParams rejects the body: %w\n%s", err, body)
	}
	back, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("oracle: re-marshal: %w", err)
	}
	var a, b any
	if err := json.Unmarshal(body, &a); err != nil {
		return err
	}
	if err := json.Unmarshal(back, &b); err != nil {
		return err
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("oracle: the body does not survive MessageNewParams\n sent: %s\n  sdk: %s", body, back)
	}
	return nil
}

// TestOracleIsStrict proves the round trip catches unknown or misplaced
// members.
func TestOracleIsStrict(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}],"bogus":1}`,
		`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"hi","x":1}]}]}`,
		`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"none","disable_parallel_tool_use":true}}`,
	} {
		if requestOracle([]byte(body)) == nil {
			t.Errorf("oracle accepted %s", body)
		}
	}
	if err := requestOracle([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)); err != nil {
		t.Errorf("oracle rejected a valid body: %v", err)
	}
}

// checkMessageOracle requires the SDK's Message to accept a response
// fixture and see the same blocks.
func checkMessageOracle(t *testing.T, body []byte) {
	t.Helper()
	var m sdk.Message
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("oracle: Message rejects the fixture: %v", err)
	}
	if m.ID == "" || string(m.Role) != "assistant" || string(m.Type) != "message" || !m.JSON.Usage.Valid() {
		t.Errorf("oracle: Message misses id/role/type/usage: %+v", m)
	}
	var mine anthropicwire.Response
	if err := json.Unmarshal(body, &mine); err != nil {
		t.Fatal(err)
	}
	if len(m.Content) != len(mine.Content) {
		t.Fatalf("oracle: %d blocks, the adapter sees %d", len(m.Content), len(mine.Content))
	}
	for i, b := range m.Content {
		if b.Type != mine.Content[i].Type {
			t.Errorf("oracle: block %d is %q, the adapter sees %q", i, b.Type, mine.Content[i].Type)
		}
		if tu, ok := b.AsAny().(sdk.ToolUseBlock); ok && (tu.ID != mine.Content[i].ID || tu.Name != mine.Content[i].Name) {
			t.Errorf("oracle: tool_use %d differs: %+v", i, tu)
		}
	}
}

// sdkEvents are the event types MessageStreamEventUnion covers; the SDK's
// stream reader handles ping and error itself and skips unknown ones, as
// the adapter does.
var sdkEvents = map[string]bool{"message_start": true, "message_delta": true, "message_stop": true,
	"content_block_start": true, "content_block_delta": true, "content_block_stop": true}

// checkEventsOracle requires every event of a stream fixture to decode as
// the SDK's MessageStreamEventUnion with its event name as its type.
func checkEventsOracle(t *testing.T, stream []byte) {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(stream), 0)
	defer r.Release()
	for {
		ev, err := r.Next()
		if err != nil {
			return
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(ev.Data, &head); err != nil || head.Type != ev.Type {
			t.Errorf("oracle: event %q has data type %q (%v)", ev.Type, head.Type, err)
		}
		if !sdkEvents[ev.Type] {
			continue
		}
		var u sdk.MessageStreamEventUnion
		if err := json.Unmarshal(ev.Data, &u); err != nil {
			t.Errorf("oracle: %s: %v", ev.Type, err)
			continue
		}
		if u.Type != ev.Type {
			t.Errorf("oracle: %s decoded as %q", ev.Type, u.Type)
		}
		switch v := u.AsAny().(type) {
		case sdk.MessageStartEvent:
			if v.Message.ID == "" {
				t.Errorf("oracle: message_start without id")
			}
		case sdk.ContentBlockDeltaEvent:
			if !strings.HasSuffix(v.Delta.Type, "_delta") {
				t.Errorf("oracle: delta type %q", v.Delta.Type)
			}
		}
	}
}

// TestFakeFixturesOracle holds providertest's Anthropic fixtures, which the
// fake upstream replays, to the same oracle.
func TestFakeFixturesOracle(t *testing.T) {
	dir := filepath.Join("..", "providertest", "testdata", "anthropic")
	msgs, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	streams, _ := filepath.Glob(filepath.Join(dir, "*.sse"))
	if len(msgs) == 0 || len(streams) == 0 {
		t.Fatalf("no fixtures in %s", dir)
	}
	for _, p := range append(msgs, streams...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(p, ".sse"):
			checkEventsOracle(t, b)
		case strings.Contains(filepath.Base(p), "error_"):
			var e sdk.ErrorResponse
			if err := json.Unmarshal(b, &e); err != nil || e.Error.Type == "" || e.Error.Message == "" {
				t.Errorf("%s: %v %+v", p, err, e)
			}
		default:
			checkMessageOracle(t, b)
		}
	}
}
