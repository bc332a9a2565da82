package anthropic

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// The stream translator: chat.completion.chunk objects from an
// OpenAI-style upstream in, Anthropic's stream events out. Each chunk is
// read in one pass over its members (jsonx), and its text pieces (content,
// reasoning_content, tool call arguments) are copied into the events as
// the raw JSON strings they already are, never decoded and encoded again.
// The events are appended to one buffer reused from chunk to chunk.

// Kinds of content block.
const (
	openNone = iota
	openThinking
	openText
	openTool
)

// Members read from a chunk, its first choice, the choice's delta, a tool
// call and its function.
var (
	chunkKeys    = []string{"choices", "usage"}
	choiceKeys   = []string{"delta", "finish_reason"}
	deltaKeys    = []string{"content", "reasoning_content", "reasoning", "refusal", "tool_calls"}
	toolCallKeys = []string{"index", "id", "function"}
	functionKeys = []string{"name", "arguments"}
)

// toEvents turns one chat stream into Anthropic's events: message_start
// first; a content block for each run of reasoning (thinking), of text and
// for each tool call (by its index: parallel calls become consecutive
// blocks), each started on its first piece and stopped when the next block
// starts or the answer finishes; message_delta with the stop reason and
// usage once both the finish reason and the usage are known (or at end);
// message_stop.
type toEvents struct {
	model string
	id    string
	input int64 // message_start's input_tokens, an estimate

	buf     []byte // the events of the current call; reused
	started bool   // message_start sent
	done    bool   // message_delta and message_stop sent

	next  int   // the next block's index
	open  int   // the open block's index
	kind  int   // the open block's kind; openNone when none is open
	tools []int // block index of each tool call, by the call's index

	stop     string // the stop reason, once finish_reason arrived
	usageSet bool
	u        provider.Usage

	spans [5]jsonx.Span
	call  [3]jsonx.Span
	fn    [2]jsonx.Span
}

// newToEvents starts a stream answering for publicModel, whose prompt is
// estimated at inputEstimate tokens (the usage the client sees until the
// upstream's arrives).
func newToEvents(publicModel string, inputEstimate int64) *toEvents {
	return &toEvents{model: publicModel, id: oaiwire.NewID("msg_"), input: inputEstimate, buf: make([]byte, 0, 1024)}
}

// chunk translates one chat.completion.chunk (JSON, valid as the adapters
// deliver it) into the SSE bytes of the events it makes, possibly none.
// The bytes are valid until the next call.
func (t *toEvents) chunk(chunk []byte) ([]byte, error) {
	t.buf = t.buf[:0]
	if t.done {
		return t.buf, nil
	}
	t.begin()
	sp := t.spans[:len(chunkKeys)]
	if _, err := jsonx.Members(chunk, chunkKeys, sp); err != nil {
		return nil, fmt.Errorf("chat chunk: %w", err)
	}
	if u := sp[1].Value(chunk); !jsonx.IsNull(u) {
		if err := t.chunkUsage(u); err != nil {
			return nil, err
		}
	}
	if choices := sp[0].Value(chunk); len(choices) > 0 && choices[0] == '[' {
		if c := firstElement(choices); c != nil {
			if err := t.choice(c); err != nil {
				return nil, err
			}
		}
	}
	t.maybeFinish()
	return t.buf, nil
}

// usage records the final usage the stream reported, for message_delta.
// A zero Usage (the stream reported none) is ignored: message_start's
// estimate then stands.
func (t *toEvents) usage(u provider.Usage) {
	if u == (provider.Usage{}) {
		return
	}
	t.u, t.usageSet = u, true
}

// end returns the closing events not yet sent: the open block's stop,
// message_delta (with end_turn when no finish reason came) and
// message_stop; message_start first if no chunk came at all.
func (t *toEvents) end() []byte {
	t.buf = t.buf[:0]
	if t.done {
		return t.buf
	}
	t.begin()
	t.closeBlock()
	if t.stop == "" {
		t.stop = anthropicwire.StopEndTurn
	}
	t.finish()
	return t.buf
}

// begin sends message_start once.
func (t *toEvents) begin() {
	if t.started {
		return
	}
	t.started = true
	ev := anthropicwire.MessageStartEvent{Message: anthropicwire.Response{ID: t.id, Model: t.model,
		Usage: anthropicwire.Usage{InputTokens: t.input, OutputTokens: 1}}}
	t.buf = anthropicwire.AppendEventOf(t.buf, ev)
}

// choice translates the first choice of a chunk.
func (t *toEvents) choice(c []byte) error {
	sp := t.spans[:len(choiceKeys)]
	if _, err := jsonx.Members(c, choiceKeys, sp); err != nil {
		return fmt.Errorf("chat chunk choice: %w", err)
	}
	d := sp[0].Value(c)
	fr := sp[1].Value(c)
	if len(d) > 0 && d[0] == '{' {
		if err := t.delta(d); err != nil {
			return err
		}
	}
	if len(fr) > 2 && fr[0] == '"' {
		t.closeBlock()
		t.stop = stopReason(string(fr[1 : len(fr)-1]))
	}
	return nil
}

// delta translates a choice's delta: reasoning, then text, then tool
// calls, as a chunk carrying several would have meant them.
func (t *toEvents) delta(d []byte) error {
	sp := t.spans[:len(deltaKeys)]
	if _, err := jsonx.Members(d, deltaKeys, sp); err != nil {
		return fmt.Errorf("chat chunk delta: %w", err)
	}
	reasoning := sp[1].Value(d)
	if !nonEmptyString(reasoning) {
		reasoning = sp[2].Value(d)
	}
	if nonEmptyString(reasoning) {
		t.piece(openThinking, reasoning)
	}
	if text := sp[0].Value(d); nonEmptyString(text) {
		t.piece(openText, text)
	}
	if refusal := sp[3].Value(d); nonEmptyString(refusal) {
		t.piece(openText, refusal)
	}
	if calls := sp[4].Value(d); len(calls) > 0 && calls[0] == '[' {
		var err error
		if e := jsonx.EachElement(calls, func(el []byte) bool {
			err = t.toolCall(el)
			return err == nil
		}); e != nil {
			return fmt.Errorf("chat chunk tool_calls: %w", e)
		}
		return err
	}
	return nil
}

// piece adds a text or reasoning piece (a raw JSON string) to the open
// block of its kind, starting one if needed.
func (t *toEvents) piece(kind int, raw []byte) {
	if t.kind != kind {
		t.closeBlock()
		t.startBlock(kind)
		if kind == openThinking {
			t.buf = append(t.buf, `{"type":"thinking","thinking":"","signature":""}}`...)
		} else {
			t.buf = append(t.buf, `{"type":"text","text":""}}`...)
		}
		t.buf = append(t.buf, '\n', '\n')
	}
	t.deltaHead(t.open)
	if kind == openThinking {
		t.buf = append(t.buf, `{"type":"thinking_delta","thinking":`...)
	} else {
		t.buf = append(t.buf, `{"type":"text_delta","text":`...)
	}
	t.buf = append(t.buf, raw...)
	t.buf = append(t.buf, "}}\n\n"...)
}

// toolCall translates one element of a delta's tool_calls.
func (t *toEvents) toolCall(el []byte) error {
	sp := t.call[:]
	if _, err := jsonx.Members(el, toolCallKeys, sp); err != nil {
		return fmt.Errorf("chat chunk tool call: %w", err)
	}
	n, ok := parseIndex(sp[0].Value(el))
	if !ok {
		n = max(len(t.tools)-1, 0) // a vendor that leaves out index sends one call at a time
	}
	var name, args []byte
	if f := sp[2].Value(el); len(f) > 0 && f[0] == '{' {
		fs := t.fn[:]
		if _, err := jsonx.Members(f, functionKeys, fs); err != nil {
			return fmt.Errorf("chat chunk tool call function: %w", err)
		}
		name, args = fs[0].Value(f), fs[1].Value(f)
	}
	for len(t.tools) <= n {
		t.tools = append(t.tools, -1)
	}
	if t.tools[n] < 0 {
		id := sp[1].Value(el)
		if !nonEmptyString(id) && !nonEmptyString(name) && !nonEmptyString(args) {
			return nil // nothing to start the block with yet
		}
		t.closeBlock()
		t.startBlock(openTool)
		t.tools[n] = t.open
		t.buf = append(t.buf, `{"type":"tool_use","id":`...)
		if nonEmptyString(id) {
			t.buf = append(t.buf, id...)
		} else {
			t.buf = anthropicwire.AppendString(t.buf, oaiwire.NewID("toolu_"))
		}
		t.buf = append(t.buf, `,"name":`...)
		if len(name) > 0 && name[0] == '"' {
			t.buf = append(t.buf, name...)
		} else {
			t.buf = append(t.buf, `""`...)
		}
		t.buf = append(t.buf, `,"input":{}}}`...)
		t.buf = append(t.buf, '\n', '\n')
	}
	if nonEmptyString(args) {
		t.deltaHead(t.tools[n])
		t.buf = append(t.buf, `{"type":"input_json_delta","partial_json":`...)
		t.buf = append(t.buf, args...)
		t.buf = append(t.buf, "}}\n\n"...)
	}
	return nil
}

// startBlock opens the next block and writes content_block_start up to
// its content_block value.
func (t *toEvents) startBlock(kind int) {
	t.open, t.kind = t.next, kind
	t.next++
	t.buf = append(t.buf, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"...)
	t.buf = strconv.AppendInt(t.buf, int64(t.open), 10)
	t.buf = append(t.buf, `,"content_block":`...)
}

// deltaHead writes content_block_delta for block i up to its delta value.
func (t *toEvents) deltaHead(i int) {
	t.buf = append(t.buf, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
	t.buf = strconv.AppendInt(t.buf, int64(i), 10)
	t.buf = append(t.buf, `,"delta":`...)
}

// closeBlock sends content_block_stop for the open block, if any.
func (t *toEvents) closeBlock() {
	if t.kind == openNone {
		return
	}
	t.buf = anthropicwire.AppendEventOf(t.buf, anthropicwire.ContentBlockStopEvent{Index: t.open})
	t.kind = openNone
}

// maybeFinish sends the end once both the stop reason and the usage are
// known.
func (t *toEvents) maybeFinish() {
	if t.stop != "" && t.usageSet && !t.done {
		t.finish()
	}
}

// finish sends message_delta and message_stop.
func (t *toEvents) finish() {
	t.done = true
	var d anthropicwire.DeltaUsage
	if t.usageSet {
		d = deltaUsage(t.u)
	}
	t.buf = anthropicwire.AppendEventOf(t.buf, anthropicwire.MessageDeltaEvent{StopReason: t.stop, Usage: d})
	t.buf = anthropicwire.AppendEventOf(t.buf, anthropicwire.MessageStopEvent{})
}

// chunkUsage reads a chunk's usage object.
func (t *toEvents) chunkUsage(raw []byte) error {
	var u chatUsage
	if err := json.Unmarshal(raw, &u); err != nil {
		return fmt.Errorf("chat chunk usage: %w", err)
	}
	t.usage(u.usage())
	return nil
}

// deltaUsage is message_delta's usage for the upstream's counts: input
// tokens without the cached ones, which are cache reads.
func deltaUsage(u provider.Usage) anthropicwire.DeltaUsage {
	in, cached := max(u.PromptTokens-u.CachedTokens, 0), u.CachedTokens
	d := anthropicwire.DeltaUsage{OutputTokens: u.CompletionTokens, InputTokens: &in, CacheReadInputTokens: &cached}
	if u.ReasoningTokens > 0 {
		d.OutputTokensDetails = &anthropicwire.OutputTokensDetails{ThinkingTokens: u.ReasoningTokens}
	}
	return d
}

// firstElement is the first element of the array raw, nil when empty.
func firstElement(raw []byte) []byte {
	i := jsonx.SkipSpace(raw, 1)
	if i >= len(raw) || raw[i] == ']' {
		return nil
	}
	end := jsonx.SkipValue(raw, i)
	if end < 0 {
		return nil
	}
	return raw[i:end]
}

// nonEmptyString reports whether raw is a JSON string other than "".
func nonEmptyString(raw []byte) bool { return len(raw) > 2 && raw[0] == '"' }

// parseIndex reads a small non-negative JSON integer.
func parseIndex(raw []byte) (int, bool) {
	if len(raw) == 0 || len(raw) > 6 {
		return 0, false
	}
	n := 0
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
