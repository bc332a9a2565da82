package responses

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/oapitest"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// chunks reads the data of a recorded chat SSE fixture, [DONE] left out.
func chunks(t *testing.T, name string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, ev := range bytes.Split(providertest.Fixture(t, name), []byte("\n\n")) {
		d, ok := bytes.CutPrefix(bytes.TrimSpace(ev), []byte("data: "))
		if ok && !bytes.Equal(d, []byte("[DONE]")) {
			out = append(out, d)
		}
	}
	return out
}

// run translates chunks and checks every event against the official spec
// and the SDK's decoder; it returns the events.
func run(t *testing.T, tr *Translation, in [][]byte, end func(*Stream) []Event) []Event {
	t.Helper()
	s := tr.NewStream("resp_test", 100)
	var all []Event
	keep := func(evs []Event) {
		for _, e := range evs {
			all = append(all, Event{Type: e.Type, Data: append([]byte(nil), e.Data...)})
		}
	}
	keep(s.Start())
	for _, c := range in {
		evs, err := s.Chunk(c)
		if err != nil {
			t.Fatal(err)
		}
		keep(evs)
	}
	keep(end(s))
	for i, e := range all {
		oapitest.CheckComponent(t, eventSchema(e.Type), e.Data)
		var u responses.ResponseStreamEventUnion
		if err := json.Unmarshal(e.Data, &u); err != nil || u.Type != e.Type || u.SequenceNumber != int64(i) {
			t.Errorf("event %d %s: %v, type %q seq %d", i, e.Data, err, u.Type, u.SequenceNumber)
		}
	}
	return all
}

// eventSchema names the spec's schema of an event type; checking against it
// directly is much faster than against the ResponseStreamEvent union.
func eventSchema(typ string) string {
	name, ok := map[string]string{
		"response.created": "ResponseCreatedEvent", "response.in_progress": "ResponseInProgressEvent",
		"response.completed": "ResponseCompletedEvent", "response.incomplete": "ResponseIncompleteEvent",
		"response.failed": "ResponseFailedEvent", "response.output_item.added": "ResponseOutputItemAddedEvent",
		"response.output_item.done": "ResponseOutputItemDoneEvent", "response.content_part.added": "ResponseContentPartAddedEvent",
		"response.content_part.done": "ResponseContentPartDoneEvent", "response.output_text.delta": "ResponseTextDeltaEvent",
		"response.output_text.done": "ResponseTextDoneEvent", "response.refusal.delta": "ResponseRefusalDeltaEvent",
		"response.refusal.done": "ResponseRefusalDoneEvent", "response.reasoning_text.delta": "ResponseReasoningTextDeltaEvent",
		"response.reasoning_text.done":           "ResponseReasoningTextDoneEvent",
		"response.function_call_arguments.delta": "ResponseFunctionCallArgumentsDeltaEvent",
		"response.function_call_arguments.done":  "ResponseFunctionCallArgumentsDoneEvent", "error": "ResponseErrorEvent",
	}[typ]
	if !ok {
		return "ResponseStreamEvent"
	}
	return name
}

func types(evs []Event) string {
	var b []string
	for _, e := range evs {
		b = append(b, strings.TrimPrefix(e.Type, "response."))
	}
	return strings.Join(b, " ")
}

func TestStreamText(t *testing.T) {
	tr, _ := translate(t, `{"model":"m","input":"hi","stream":true}`)
	evs := run(t, tr, chunks(t, "openai/chat_stream_usage.sse"), func(s *Stream) []Event {
		return s.Finish(provider.Usage{PromptTokens: 9, CompletionTokens: 4, CachedTokens: 2}, 101)
	})
	got := types(evs)
	want := "created in_progress output_item.added content_part.added output_text.delta"
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "output_text.delta output_text.done content_part.done output_item.done completed") {
		t.Fatalf("events %s", got)
	}
	var done struct{ Response responses.Response }
	if err := json.Unmarshal(evs[len(evs)-1].Data, &done); err != nil {
		t.Fatal(err)
	}
	r := done.Response
	var deltas string
	for _, e := range evs {
		if e.Type == "response.output_text.delta" {
			var d struct{ Delta string }
			_ = json.Unmarshal(e.Data, &d)
			deltas += d.Delta
		}
	}
	if r.ID != "resp_test" || r.Status != "completed" || r.CompletedAt != 101 || r.OutputText() != deltas || deltas == "" ||
		r.Usage.InputTokens != 9 || r.Usage.InputTokensDetails.CachedTokens != 2 || r.Usage.TotalTokens != 13 {
		t.Errorf("final %+v (deltas %q)", r, deltas)
	}
}

func TestStreamToolCall(t *testing.T) {
	tr, _ := translate(t, `{"model":"m","input":"w?","stream":true,"tools":[{"type":"function","name":"get_current_weather"}]}`)
	evs := run(t, tr, chunks(t, "openai/chat_stream_tool_usage.sse"), func(s *Stream) []Event {
		return s.Finish(provider.Usage{PromptTokens: 82, CompletionTokens: 17}, 101)
	})
	got := types(evs)
	if got != "created in_progress output_item.added function_call_arguments.delta function_call_arguments.delta function_call_arguments.delta "+
		"function_call_arguments.delta function_call_arguments.delta function_call_arguments.delta function_call_arguments.done output_item.done completed" {
		t.Fatalf("events %s", got)
	}
	var done struct {
		Item responses.ResponseOutputItemUnion
	}
	_ = json.Unmarshal(evs[len(evs)-2].Data, &done)
	if done.Item.Type != "function_call" || done.Item.CallID != "call_abc123" || done.Item.Name != "get_current_weather" ||
		done.Item.Arguments.OfString != `{"location":"Boston, MA"}` {
		t.Errorf("item %s", evs[len(evs)-2].Data)
	}
}

// Reasoning, then text, then two parallel calls: each item closes before
// the next kind opens; calls close at the end, in order.
func TestStreamMixed(t *testing.T) {
	tr, _ := translate(t, `{"model":"m","input":"x","stream":true}`)
	in := [][]byte{
		[]byte(`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Think"}}]}`),
		[]byte(`{"choices":[{"index":0,"delta":{"reasoning_content":"ing."}}]}`),
		[]byte(`{"choices":[{"index":0,"delta":{"content":"Sure."}}]}`),
		[]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`),
		[]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"g","arguments":""}}]}}]}`),
		[]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"a\":1}"}}]}}]}`),
		[]byte(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
	}
	evs := run(t, tr, in, func(s *Stream) []Event { return s.Finish(provider.Usage{}, 101) })
	want := "created in_progress output_item.added content_part.added reasoning_text.delta reasoning_text.delta " +
		"reasoning_text.done content_part.done output_item.done " +
		"output_item.added content_part.added output_text.delta output_text.done content_part.done output_item.done " +
		"output_item.added function_call_arguments.delta output_item.added function_call_arguments.delta " +
		"function_call_arguments.done output_item.done function_call_arguments.done output_item.done completed"
	if got := types(evs); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	var done struct{ Response responses.Response }
	_ = json.Unmarshal(evs[len(evs)-1].Data, &done)
	out := done.Response.Output
	if len(out) != 4 || out[0].Type != "reasoning" || out[0].Content[0].Text != "Thinking." || out[1].Type != "message" ||
		out[2].CallID != "c1" || out[3].Arguments.OfString != `{"a":1}` {
		t.Errorf("output %s", evs[len(evs)-1].Data)
	}
}

func TestStreamEndings(t *testing.T) {
	tr, _ := translate(t, `{"model":"m","input":"x","stream":true}`)
	cut := [][]byte{[]byte(`{"choices":[{"index":0,"delta":{"content":"Sto"},"finish_reason":"length"}]}`)}
	evs := run(t, tr, cut, func(s *Stream) []Event { return s.Finish(provider.Usage{CompletionTokens: 1}, 101) })
	var last struct{ Response responses.Response }
	_ = json.Unmarshal(evs[len(evs)-1].Data, &last)
	if evs[len(evs)-1].Type != "response.incomplete" || last.Response.Status != "incomplete" ||
		last.Response.IncompleteDetails.Reason != "max_output_tokens" || last.Response.Output[0].Status != "incomplete" {
		t.Errorf("length: %s", evs[len(evs)-1].Data)
	}
	// Nothing at all: one empty message, as without streaming.
	evs = run(t, tr, nil, func(s *Stream) []Event { return s.Finish(provider.Usage{}, 101) })
	if got := types(evs); got != "created in_progress output_item.added content_part.added output_text.done content_part.done output_item.done completed" {
		t.Errorf("empty: %s", got)
	}
	// A failure: response.failed with the items finished so far.
	part := [][]byte{[]byte(`{"choices":[{"index":0,"delta":{"content":"Hal"}}]}`)}
	evs = run(t, tr, part, func(s *Stream) []Event {
		return s.Fail(&apierr.Error{Status: 429, Code: apierr.CodeRateLimitExceeded, Message: "slow down"})
	})
	_ = json.Unmarshal(evs[len(evs)-1].Data, &last)
	if evs[len(evs)-1].Type != "response.failed" || last.Response.Error.Code != "rate_limit_exceeded" ||
		last.Response.Error.Message != "slow down" || len(last.Response.Output) != 0 {
		t.Errorf("failed: %s", evs[len(evs)-1].Data)
	}
	if _, err := tr.NewStream("r", 1).Chunk([]byte(`[`)); err == nil {
		t.Error("a broken chunk was accepted")
	}
}

// Whatever the chunks, the translator never panics and its events are JSON.
func FuzzStream(f *testing.F) {
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"content":"a","reasoning_content":"b","refusal":"c"}}]}`),
		[]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"id":"x","function":{"name":"f","arguments":"{"}}]},"finish_reason":"length"}]}`))
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1"}}]}}]}`), []byte(`[]`))
	tr := &Translation{base: Response{Object: "response", Model: "m", Output: []any{}}}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		s := tr.NewStream("resp_f", 1)
		var all []Event
		all = append(all, s.Start()...)
		for _, c := range [][]byte{a, b} {
			if evs, err := s.Chunk(c); err == nil {
				all = append(all, evs...)
			}
		}
		all = append(all, s.Finish(provider.Usage{}, 2)...)
		for _, e := range all {
			if !json.Valid(e.Data) {
				t.Fatalf("%s: %s", e.Type, e.Data)
			}
		}
	})
}
