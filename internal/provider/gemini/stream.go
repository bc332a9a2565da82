package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
	"github.com/modelgate/modelgate/internal/sse"
)

// ChatStream sends a streamed request (streamGenerateContent?alt=sse) and
// returns chat.completion.chunk objects translated event by event.
func (c *Client) ChatStream(ctx context.Context, req *provider.ChatRequest) (provider.ChatStream, error) {
	k, resp, err := c.send(ctx, req)
	if err != nil {
		return nil, err
	}
	if !provider.IsEventStream(resp.Header.Get("Content-Type")) {
		defer k.Release()
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		if w := parseWireError(b); w != nil {
			return nil, c.vendorFailure(w)
		}
		return nil, provider.BadResponse(c.name, fmt.Errorf("stream answered with Content-Type %q", resp.Header.Get("Content-Type")))
	}
	return c.newStream(k, resp.Body, req.PublicModel, req.IncludeUsage), nil
}

func (c *Client) newStream(k *provider.Call, body io.ReadCloser, model string, includeUsage bool) *stream {
	return &stream{c: c, SSEBody: provider.NewSSEBody(k, body), model: model,
		includeUsage: includeUsage, created: c.now().Unix(),
		started: map[int]bool{}, calls: map[int]int{}, finished: map[int]bool{}}
}

// stream reads Gemini's SSE events one at a time; it keeps only the current
// chunk and per-choice counters.
type stream struct {
	c *Client
	provider.SSEBody
	model        string
	includeUsage bool
	id           string
	created      int64

	started  map[int]bool // choices whose first (role) delta was sent
	calls    map[int]int  // tool calls sent per choice, for delta indexes
	finished map[int]bool // choices that got a finish_reason

	queue    []oaiwire.Chunk // chunks of the current event not yet returned
	chunk    []byte
	usage    provider.Usage
	hasUsage bool
	searches int64 // the grounding queries reported so far
	final    bool  // usage came with (or after) the event that finished every choice
	err      error
}

var (
	_ provider.ChatStream = (*stream)(nil)
	_ provider.Buffered   = (*stream)(nil)
)

// Next reads upstream events until one yields a chunk. Gemini ends its
// stream with EOF (no [DONE]); then, if the client asked for usage, one
// usage-only chunk follows.
func (s *stream) Next() bool {
	if s.err != nil || s.Closed() {
		return false
	}
	if len(s.queue) > 0 {
		return s.pop()
	}
	for {
		ev, err := s.R.Next()
		if err != nil {
			return s.end(err)
		}
		if len(ev.Data) == 0 {
			continue
		}
		var gr genResponse
		if err := json.Unmarshal(ev.Data, &gr); err != nil {
			s.err = provider.BadResponse(s.c.name, fmt.Errorf("stream event: %w", err))
			return false
		}
		if gr.Error != nil {
			s.err = s.c.vendorFailure(gr.Error)
			return false
		}
		if n, ok := searches(&gr); ok {
			s.searches = n // grounding metadata is the answer's so far
		}
		if gr.UsageMetadata != nil {
			s.usage, s.hasUsage = usage(gr.UsageMetadata), true
		}
		s.usage.WebSearches, s.usage.WebSearchesCounted = s.searches, true
		if s.id == "" {
			s.id = s.c.responseID(gr.ResponseID)
		}
		s.queue = s.chunks(&gr, s.queue[:0])
		s.final = s.final || (gr.UsageMetadata != nil && s.complete())
		if len(s.queue) == 0 {
			continue
		}
		return s.pop()
	}
}

// pop emits the first queued chunk.
func (s *stream) pop() bool {
	ch := s.queue[0]
	s.queue = s.queue[1:]
	if err := s.emit(ch); err != nil {
		s.err = err
		return false
	}
	return true
}

// chunks translates one event's candidates into chunks shaped as OpenAI
// sends them: a choice's first chunk carries only the role, deltas follow,
// and the finish_reason comes in a chunk of its own with an empty delta.
func (s *stream) chunks(gr *genResponse, out []oaiwire.Chunk) []oaiwire.Chunk {
	cands := gr.Candidates
	if len(cands) == 0 && gr.PromptFeedback != nil && gr.PromptFeedback.BlockReason != "" {
		cands = []candidate{{FinishReason: "PROHIBITED_CONTENT"}} // a blocked prompt: content_filter
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Index < cands[j].Index })
	var roles, deltas, finishes []oaiwire.ChunkChoice
	for _, cd := range cands {
		text, thought, calls := split(cd.Content)
		idx := cd.Index
		if !s.started[idx] {
			s.started[idx] = true
			roles = append(roles, oaiwire.ChunkChoice{Index: idx, Delta: oaiwire.Delta{Role: "assistant", Content: oaiwire.Ptr("")}})
		}
		if text != "" || thought != "" || len(calls) > 0 {
			ch := oaiwire.ChunkChoice{Index: idx}
			if text != "" {
				ch.Delta.Content = &text
			}
			if thought != "" {
				ch.Delta.ReasoningContent = &thought
			}
			for _, fc := range calls {
				i := s.calls[idx]
				s.calls[idx]++
				ch.Delta.ToolCalls = append(ch.Delta.ToolCalls, s.c.toolCall(fc, &i))
			}
			deltas = append(deltas, ch)
		}
		if cd.FinishReason != "" && !s.finished[idx] {
			s.finished[idx] = true
			finishes = append(finishes, oaiwire.ChunkChoice{Index: idx, FinishReason: oaiwire.Ptr(finishReason(cd.FinishReason, s.calls[idx] > 0))})
		}
	}
	for _, cs := range [][]oaiwire.ChunkChoice{roles, deltas, finishes} {
		if len(cs) > 0 {
			out = append(out, oaiwire.Chunk{Choices: cs})
		}
	}
	return out
}

func (s *stream) emit(ch oaiwire.Chunk) error {
	ch.ID, ch.Object, ch.Created, ch.Model = s.id, "chat.completion.chunk", s.created, s.model
	if ch.Choices == nil {
		ch.Choices = []oaiwire.ChunkChoice{}
	}
	b, err := json.Marshal(ch)
	if err != nil {
		return fmt.Errorf("gemini %s: encode chunk: %w", s.c.name, err)
	}
	s.chunk = b
	return nil
}

// end handles the end of the upstream body. A stream whose every choice got
// a finishReason ended cleanly; one that did not was cut off.
func (s *stream) end(err error) bool {
	if !errors.Is(err, io.EOF) {
		switch {
		case errors.Is(err, sse.ErrEventTooLarge):
			s.err = provider.BadResponse(s.c.name, err)
		default:
			if e := provider.FromTransport(s.K.Ctx, s.c.name, err); e != nil {
				s.err = e
			} else {
				s.err = err
			}
		}
		return false
	}
	if !s.complete() {
		s.err = provider.BadResponse(s.c.name, errors.New("stream ended before it finished"))
		return false
	}
	s.final = s.hasUsage
	wantUsage := s.includeUsage && s.hasUsage
	s.Finish()
	if !wantUsage {
		return false
	}
	if s.id == "" {
		s.id = s.c.responseID("")
	}
	if e := s.emit(oaiwire.Chunk{Usage: oaiwire.NewUsage(s.usage)}); e != nil {
		s.err = e
		return false
	}
	return true
}

func (s *stream) complete() bool {
	if len(s.finished) == 0 {
		return false
	}
	for idx := range s.started {
		if !s.finished[idx] {
			return false
		}
	}
	return true
}

func (s *stream) Chunk() []byte { return s.chunk }
func (s *stream) Err() error    { return s.err }

// Usage is Gemini's usageMetadata, which comes with every event and is
// final once every choice finished.
func (s *stream) Usage() (provider.Usage, bool) { return s.usage, s.final }
