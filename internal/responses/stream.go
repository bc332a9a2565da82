package responses

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// Event is one typed Responses stream event; Type is also its SSE event name.
type Event struct {
	Type string
	Data []byte
}

// Stream turns chat completion chunks into Responses stream events, in the
// order OpenAI sends them: response.created and response.in_progress;
// then per output item output_item.added, content_part.added, the deltas,
// the done events and output_item.done; finally response.completed (or
// response.incomplete, or response.failed). Every event carries its
// sequence_number, counted from 0. The text of the open items is kept,
// since the done events and the final response repeat it whole.
type Stream struct {
	resp   Response
	seq    int64
	events []Event
	items  []*item       // every item opened, in output order
	cur    *item         // the open message or reasoning item
	calls  map[int]*item // function calls by chat tool call index
	names  toolNames
	search bool // the request had a web search tool
	// encrypted: reasoning items carry their signed thinking (reasoning.go)
	encrypted bool
	finish    string
}

// item is one output item under construction.
type item struct {
	kind  string // message, reasoning, function_call
	id    string
	index int
	done  bool
	final any // the item as output_item.done showed it
	// message and reasoning: the text parts, by content index
	parts []*part
	// reasoning: the signed thinking blocks, and how much of the
	// reasoning text the blocks so far hold
	blocks []oaiwire.ThinkingBlock
	held   int
	sealed bool // encrypted_content is shown
	// function_call (or a custom tool or local shell call)
	callID, name string
	args         strings.Builder
	names        toolNames
}

type part struct {
	kind string // output_text, refusal, reasoning_text
	text strings.Builder
}

// NewStream starts translating a stream for the response id created at
// created (Unix seconds).
func (t *Translation) NewStream(id string, created int64) *Stream {
	s := &Stream{resp: t.base, calls: map[int]*item{}, names: t.names, search: t.searchParam != "", encrypted: t.encrypted}
	s.resp.ID, s.resp.CreatedAt, s.resp.Status = id, created, "in_progress"
	return s
}

// Start returns the opening events: response.created, response.in_progress.
func (s *Stream) Start() []Event {
	s.events = s.events[:0]
	s.emitResponse("response.created", s.resp)
	s.emitResponse("response.in_progress", s.resp)
	return s.events
}

// Chunk translates one chat.completion.chunk. The events are valid until
// the next call. An error means the chunk was not a chat chunk.
func (s *Stream) Chunk(chunk []byte) ([]Event, error) {
	s.events = s.events[:0]
	var c oaiwire.Chunk
	if err := json.Unmarshal(chunk, &c); err != nil {
		return nil, fmt.Errorf("responses: decode chat chunk: %w", err)
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // the translation never asks for n > 1
		}
		d := ch.Delta
		if d.ReasoningContent != nil && *d.ReasoningContent != "" {
			s.delta("reasoning", "reasoning_text", *d.ReasoningContent)
		}
		for _, b := range d.ThinkingBlocks {
			s.thinkingBlock(b)
		}
		if d.Content != nil && *d.Content != "" {
			s.delta("message", "output_text", *d.Content)
		}
		if d.Refusal != nil && *d.Refusal != "" {
			s.delta("message", "refusal", *d.Refusal)
		}
		for _, tc := range d.ToolCalls {
			s.toolDelta(tc)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = *ch.FinishReason
		}
	}
	return s.events, nil
}

// Finish closes every open item and returns the closing events, ending
// with response.completed (or response.incomplete when the model stopped
// at max_output_tokens or a content filter). u is the settled usage;
// completed is the Unix time of the end.
func (s *Stream) Finish(u provider.Usage, completed int64) []Event {
	s.events = s.events[:0]
	st, inc := status(s.finish)
	itemStatus := "completed"
	if st == "incomplete" {
		itemStatus = "incomplete"
	}
	if len(s.items) == 0 {
		s.open("message") // an empty answer is one empty message, as without streaming
		s.openPart("output_text")
	}
	s.closeAll(itemStatus)
	if s.search {
		s.searches(u.WebSearches)
	}
	r := s.final()
	r.Status, r.IncompleteDetails, r.Usage = st, inc, NewUsage(u)
	typ := "response.completed"
	if st == "completed" {
		r.CompletedAt = &completed
	} else {
		typ = "response.incomplete"
	}
	s.emitResponse(typ, r)
	return s.events
}

// Fail ends the stream after an upstream error with response.failed; the
// response holds the items finished so far.
func (s *Stream) Fail(e *apierr.Error) []Event {
	s.events = s.events[:0]
	code := "server_error"
	if e.Code == apierr.CodeRateLimitExceeded {
		code = "rate_limit_exceeded"
	}
	r := s.final()
	r.Status, r.Error = "failed", &ResponseError{Code: code, Message: e.Message}
	s.emitResponse("response.failed", r)
	return s.events
}

// final is the response with the output items that are done.
func (s *Stream) final() Response {
	r := s.resp
	r.Output = make([]any, 0, len(s.items))
	for _, it := range s.items {
		if it.done {
			r.Output = append(r.Output, it.final)
		}
	}
	return r
}

// delta adds text to the open item of kind (opening it, and closing
// another, when needed) and to its part of kind pk.
func (s *Stream) delta(kind, pk, text string) {
	if s.cur == nil || s.cur.kind != kind {
		s.closeCur("completed")
		s.open(kind)
	}
	it := s.cur
	ci := -1
	for i, p := range it.parts {
		if p.kind == pk {
			ci = i
		}
	}
	if ci < 0 {
		ci = s.openPart(pk)
	}
	it.parts[ci].text.WriteString(text)
	ev := evDelta{ItemID: it.id, OutputIndex: it.index, ContentIndex: ci, Delta: text}
	switch pk {
	case "output_text":
		ev.Logprobs = &[]any{}
		s.emit("response.output_text.delta", &ev.evBase, &ev)
	case "refusal":
		s.emit("response.refusal.delta", &ev.evBase, &ev)
	default:
		s.emit("response.reasoning_text.delta", &ev.evBase, &ev)
	}
}

// toolDelta adds a piece of a tool call: the first piece of an index opens
// a function_call item, the rest stream its arguments.
func (s *Stream) toolDelta(tc oaiwire.ToolCall) {
	idx := 0
	if tc.Index != nil {
		idx = *tc.Index
	}
	it := s.calls[idx]
	if it == nil {
		s.closeCur("completed")
		prefix := idPrefix(s.names.of(tc.Function.Name).kind)
		it = &item{kind: "function_call", id: NewID(prefix), index: len(s.items), callID: tc.ID, name: tc.Function.Name, names: s.names}
		if it.callID == "" {
			it.callID = NewID("call_")
		}
		s.items = append(s.items, it)
		s.calls[idx] = it
		ev := evItem{OutputIndex: it.index, Item: it.callItem("in_progress")}
		s.emit("response.output_item.added", &ev.evBase, &ev)
	} else if it.name == "" && tc.Function.Name != "" {
		it.name = tc.Function.Name
	}
	if a := tc.Function.Arguments; a != "" {
		it.args.WriteString(a)
		if s.names.of(it.name).kind != kindFunction {
			return // a custom tool's input and a shell command are shown whole at the end
		}
		ev := evArgsDelta{ItemID: it.id, OutputIndex: it.index, Delta: a}
		s.emit("response.function_call_arguments.delta", &ev.evBase, &ev)
	}
}

// thinkingBlock adds a signed thinking block to the open reasoning item
// (opening one when none is): a thinking block without text holds the
// reasoning text streamed since the previous block.
func (s *Stream) thinkingBlock(b oaiwire.ThinkingBlock) {
	if s.cur == nil || s.cur.kind != "reasoning" {
		s.closeCur("completed")
		s.open("reasoning")
	}
	it := s.cur
	var text strings.Builder
	for _, p := range it.parts {
		if p.kind == "reasoning_text" {
			text.WriteString(p.text.String())
		}
	}
	if b.Type == "thinking" && b.Thinking == nil {
		t := text.String()[min(it.held, text.Len()):]
		b.Thinking = &t
	}
	it.held = text.Len()
	it.blocks = append(it.blocks, b)
	it.sealed = s.encrypted
}

// open starts a message or reasoning item.
func (s *Stream) open(kind string) {
	prefix := map[string]string{"message": "msg_", "reasoning": "rs_"}[kind]
	it := &item{kind: kind, id: NewID(prefix), index: len(s.items)}
	s.items = append(s.items, it)
	s.cur = it
	ev := evItem{OutputIndex: it.index, Item: it.textItem("in_progress", false)}
	s.emit("response.output_item.added", &ev.evBase, &ev)
}

// openPart starts a content part of the open item and returns its index.
func (s *Stream) openPart(kind string) int {
	it := s.cur
	it.parts = append(it.parts, &part{kind: kind})
	ci := len(it.parts) - 1
	ev := evPart{ItemID: it.id, OutputIndex: it.index, ContentIndex: ci, Part: it.parts[ci].wire()}
	s.emit("response.content_part.added", &ev.evBase, &ev)
	return ci
}

// closeCur finishes the open message or reasoning item.
func (s *Stream) closeCur(status string) {
	it := s.cur
	if it == nil {
		return
	}
	s.cur = nil
	for ci, p := range it.parts {
		text := p.text.String()
		done := evDone{ItemID: it.id, OutputIndex: it.index, ContentIndex: ci}
		switch p.kind {
		case "output_text":
			done.Text, done.Logprobs = &text, &[]any{}
			s.emit("response.output_text.done", &done.evBase, &done)
		case "refusal":
			done.Refusal = &text
			s.emit("response.refusal.done", &done.evBase, &done)
		default:
			done.Text = &text
			s.emit("response.reasoning_text.done", &done.evBase, &done)
		}
		ev := evPart{ItemID: it.id, OutputIndex: it.index, ContentIndex: ci, Part: p.wire()}
		s.emit("response.content_part.done", &ev.evBase, &ev)
	}
	it.done, it.final = true, it.textItem(status, true)
	ev := evItem{OutputIndex: it.index, Item: it.final}
	s.emit("response.output_item.done", &ev.evBase, &ev)
}

// searches adds n finished web_search_call items: the vendor reports its
// searches only with its usage, at the end.
func (s *Stream) searches(n int64) {
	for _, ws := range searchItems(n) {
		w := ws.(webSearchItem)
		it := &item{kind: "web_search_call", id: w.ID, index: len(s.items), done: true, final: w}
		s.items = append(s.items, it)
		added := w
		added.Status = "in_progress"
		ev := evItem{OutputIndex: it.index, Item: added}
		s.emit("response.output_item.added", &ev.evBase, &ev)
		st := evSearch{ItemID: it.id, OutputIndex: it.index}
		s.emit("response.web_search_call.completed", &st.evBase, &st)
		ev = evItem{OutputIndex: it.index, Item: w}
		s.emit("response.output_item.done", &ev.evBase, &ev)
	}
}

// closeAll finishes every open item, in output order.
func (s *Stream) closeAll(status string) {
	s.closeCur(status)
	for _, it := range s.items {
		if it.kind != "function_call" || it.done {
			continue
		}
		args := it.args.String()
		switch o := s.names.of(it.name); o.kind {
		case kindFunction:
			ev := evArgsDone{ItemID: it.id, OutputIndex: it.index, Name: o.name, Arguments: args}
			s.emit("response.function_call_arguments.done", &ev.evBase, &ev)
		case kindCustom:
			in := customInput(args)
			if in != "" {
				ev := evArgsDelta{ItemID: it.id, OutputIndex: it.index, Delta: in}
				s.emit("response.custom_tool_call_input.delta", &ev.evBase, &ev)
			}
			ev := evInputDone{ItemID: it.id, OutputIndex: it.index, Input: in}
			s.emit("response.custom_tool_call_input.done", &ev.evBase, &ev)
		}
		it.done, it.final = true, it.callItem("completed")
		iv := evItem{OutputIndex: it.index, Item: it.final}
		s.emit("response.output_item.done", &iv.evBase, &iv)
	}
}

// textItem is a message or reasoning item with its parts (none when
// withParts is false, as output_item.added shows them).
func (it *item) textItem(status string, withParts bool) any {
	if it.kind == "reasoning" {
		r := reasoningItem{Type: "reasoning", ID: it.id, Summary: []any{}, Content: []reasoningText{}, Status: status}
		if withParts && it.sealed {
			r.EncryptedContent = sealBlocks(it.blocks)
		}
		for _, p := range it.parts {
			if withParts && p.kind == "reasoning_text" {
				r.Content = append(r.Content, reasoningText{Type: "reasoning_text", Text: p.text.String()})
			}
		}
		return r
	}
	m := messageItem{Type: "message", ID: it.id, Status: status, Role: "assistant", Content: []any{}}
	if withParts {
		for _, p := range it.parts {
			m.Content = append(m.Content, p.wire())
		}
	}
	return m
}

// callItem is the call's output item; names maps its chat function name
// back to the client's tool.
func (it *item) callItem(status string) any {
	return it.names.callOutput(it.id, it.callID, it.name, it.args.String(), status)
}

// wire is the part as content_part events and output items show it.
func (p *part) wire() any {
	switch p.kind {
	case "output_text":
		return newText(p.text.String())
	case "refusal":
		return refusalPart{Type: "refusal", Refusal: p.text.String()}
	}
	return reasoningText{Type: "reasoning_text", Text: p.text.String()}
}
