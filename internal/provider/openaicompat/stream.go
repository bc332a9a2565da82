package openaicompat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/redact"
	"github.com/modelgate/modelgate/internal/sse"
)

// ChatStream sends a streamed request and returns the chunks as they arrive.
func (c *Client) ChatStream(ctx context.Context, req *provider.ChatRequest) (provider.ChatStream, error) {
	k := c.start(ctx)
	resp, err := c.send(k, req)
	if err != nil {
		k.Release()
		return nil, err
	}
	if !provider.IsEventStream(resp.Header.Get("Content-Type")) {
		// Some vendors answer a stream request with one JSON error body.
		defer k.Release()
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		if ev, ok := jsonx.Field(b, "error"); jsonx.Check(b, 64) == nil && ok && !jsonx.IsNull(ev) {
			return nil, provider.FromStatus(c.name, http.StatusBadGateway, resp.Header, c.vendorError(b))
		}
		return nil, provider.BadResponse(c.name, fmt.Errorf("stream answered with Content-Type %q", resp.Header.Get("Content-Type")))
	}
	return newStream(c.name, c.secrets, k, resp.Body, publicModel(req), req.IncludeUsage), nil
}

func newStream(name string, secrets *redact.Redactor, k *provider.Call, body io.ReadCloser, model []byte, includeUsage bool) *stream {
	return &stream{name: name, secrets: secrets, SSEBody: provider.NewSSEBody(k, body),
		model: model, includeUsage: includeUsage}
}

// stream reads upstream SSE event by event; it keeps only the current chunk.
type stream struct {
	name    string
	secrets *redact.Redactor // redacts an error event (only)
	provider.SSEBody
	model        []byte // quoted public model id
	includeUsage bool

	chunk    []byte             // the current chunk, patched; in *buf's array
	buf      *[]byte            // from chunkPool, returned by Close
	check    jsonx.ChunkChecker // most chunks differ from the last only in their content
	spans    [5]jsonx.Span
	usage    provider.Usage
	hasUsage bool
	finished bool // a finish_reason was seen
	err      error
}

var (
	_ provider.ChatStream = (*stream)(nil)
	_ provider.Buffered   = (*stream)(nil)
)

// chunkKeys are the top-level members of a chunk the gateway looks at.
var chunkKeys = []string{"model", "usage", "error", "service_tier", "choices"}

const (
	keyModel = iota
	keyUsage
	keyError
	keyTier
	keyChoices
)

// Next reads the next upstream event. Each chunk is validated, its members
// located and a choice's finish_reason noticed in one pass (a chunk that
// differs from the last only inside one string value, most often its
// content, by that string alone; see jsonx.ChunkChecker), then copied once
// with model set to the public id (and, when the client did not ask for
// usage, the usage member removed).
func (s *stream) Next() bool {
	if s.err != nil || s.Closed() {
		return false
	}
	sp := s.spans[:] // a field: the checker keeps it, so a local would escape
	if s.buf != nil && !s.Buffered() {
		// The next event is not here yet: the last chunk is done with (the
		// caller's hold on it ends with this call), and a stream waiting
		// for its vendor holds no chunk buffer meanwhile.
		s.putBuf()
	}
	for {
		ev, err := s.R.Next()
		if err != nil {
			s.fail(err)
			return false
		}
		data := ev.Data
		if bytes.Equal(data, []byte("[DONE]")) {
			s.Finish()
			return false
		}
		if blank(data) {
			continue
		}
		probe := keyChoices // look for choices[].finish_reason until one is seen
		if s.finished {
			probe = -1
		}
		closeAt, finish, err := s.check.Check(data, 256, chunkKeys, sp, probe, "finish_reason")
		if err != nil {
			s.err = provider.BadResponse(s.name, fmt.Errorf("stream chunk: %w", err))
			return false
		}
		if ev := sp[keyError].Value(data); ev != nil && !jsonx.IsNull(ev) {
			s.err = provider.FromStatus(s.name, http.StatusBadGateway, nil, parseVendorError(data).Redact(s.secrets))
			return false
		}
		if finish {
			s.finished = true
		}
		var edits [2]jsonx.Edit
		n := 0
		if m := sp[keyModel]; m.Found() {
			edits[n] = jsonx.Edit{Start: m.ValStart, End: m.ValEnd, With: s.model}
		} else {
			edits[n] = jsonx.Edit{Start: closeAt, End: closeAt, With: modelMember(data[:closeAt], s.model)}
		}
		n++
		if u := sp[keyUsage]; u.Found() {
			if v := u.Value(data); !jsonx.IsNull(v) {
				s.usage, s.hasUsage = parseUsage(v)
				s.usage.ServiceTier = serviceTier(sp[keyTier].Value(data))
			}
			if !s.includeUsage {
				// The client did not ask for usage: drop the extra usage-only
				// chunk and the usage member we asked for, as OpenAI would.
				if isEmptyArray(sp[keyChoices].Value(data)) {
					continue
				}
				edits[n] = jsonx.Removal(data, u)
				n++
			}
		}
		if n == 2 && edits[1].Start < edits[0].Start {
			edits[0], edits[1] = edits[1], edits[0]
		}
		if s.buf == nil {
			s.buf = chunkPool.Get().(*[]byte)
			s.chunk = *s.buf
		}
		s.chunk = jsonx.AppendEdits(s.chunk[:0], data, edits[:n]...)
		return true
	}
}

// modelMember is the text that adds a model member with the JSON string
// model to an object that has none, given the object up to its closing
// brace.
func modelMember(head, model []byte) []byte {
	sep := ","
	if jsonx.NoMembers(head) {
		sep = ""
	}
	return append([]byte(sep+`"model":`), model...)
}

// blank reports whether b holds only whitespace; a chunk's first byte
// (its '{') ends the look.
func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// isEmptyArray reports whether raw, a valid JSON value (a span's value, so
// without surrounding whitespace), is an empty array; it looks no further
// than the first element.
func isEmptyArray(raw []byte) bool {
	return len(raw) >= 2 && raw[0] == '[' && blank(raw[1:len(raw)-1])
}

// fail records why reading stopped. A stream that ends without [DONE] but
// after a finish_reason is accepted (several vendors omit [DONE]); one that
// ends before that was cut off.
func (s *stream) fail(err error) {
	if errors.Is(err, io.EOF) {
		if s.finished {
			s.Finish()
			return
		}
		s.err = provider.BadResponse(s.name, errors.New("stream ended before it finished"))
		return
	}
	if errors.Is(err, sse.ErrEventTooLarge) {
		s.err = provider.BadResponse(s.name, err)
		return
	}
	if e := provider.FromTransport(s.K.Ctx, s.name, err); e != nil {
		s.err = e
		return
	}
	s.err = err
}

// chunkPool recycles the buffers chunks are patched into; one that grew
// past maxPooledChunk is left to the collector.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledChunk = 64 << 10

// Close releases the upstream connection (see provider.SSEBody.Close)
// and hands the chunk checker's buffers and the chunk's to the next
// stream; Chunk is empty afterwards.
func (s *stream) Close() error {
	s.check.Release()
	s.putBuf()
	return s.SSEBody.Close()
}

// putBuf gives the chunk buffer back to the pool; Chunk is empty afterwards.
func (s *stream) putBuf() {
	if p := s.buf; p != nil {
		*p, s.buf, s.chunk = s.chunk[:0], nil, nil
		if cap(*p) <= maxPooledChunk {
			chunkPool.Put(p)
		}
	}
}

func (s *stream) Chunk() []byte                 { return s.chunk }
func (s *stream) Usage() (provider.Usage, bool) { return s.usage, s.hasUsage }
func (s *stream) Err() error                    { return s.err }
