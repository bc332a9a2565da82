package lifecycle

import (
	"bytes"
	"sync"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// deliveredBuffer is how many bytes of relayed chunks a stream keeps before
// it extracts their text for counting; streams shorter than this (almost
// all) never pay for extraction unless their usage goes missing.
const deliveredBuffer = 64 << 10

// Delivered remembers what a stream sent to the client, so that when the
// vendor's usage never comes (the client left, or the vendor sends none) the
// gateway can count the completion itself. It keeps the raw chunks up to
// deliveredBuffer bytes and only then extracts their text into a bounded
// token counter: memory stays bounded and the common case costs a copy.
//
// A stream holds its buffer for as long as it lasts, so chat chunks are
// kept without what comes before their "choices" (id, object, created,
// model, fingerprint: more than half of a short chunk, and the same in
// every chunk of a stream), which the text is never in: a held chat stream
// needs a buffer half the size.
type Delivered struct {
	tok    *tokenize.Tokenizer
	text   func(s *tokenize.Stream, chunk []byte) // extracts a chunk's text; nil: a chat chunk's deltas
	raw    *[]byte
	ends   []int // end offset of each chunk in raw
	stream *tokenize.Stream
	// head is, for chat chunks, the length of the first kept chunk's
	// members before "choices": that chunk is kept whole at the start of
	// raw, and a chunk that starts with the same bytes has its "choices"
	// at the same offset, at the top level. 0: none known.
	head  int
	spans [1]jsonx.Span // a field, not a local: Members keeps it
}

// Buffers of kept chunks: chat streams keep theirs trimmed (see Delivered)
// in smaller buffers than the other doors' events.
var (
	rawPool     = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}
	chatRawPool = sync.Pool{New: func() any { b := make([]byte, 0, chatRawSize); return &b }}
)

// chatRawSize holds the trimmed chunks of a stream of some 40 chunks.
const chatRawSize = 4 << 10

// Add notes a chunk that reached the client.
func (d *Delivered) Add(chunk []byte) {
	if d == nil {
		return
	}
	if d.raw == nil {
		if d.text == nil {
			d.raw = chatRawPool.Get().(*[]byte)
		} else {
			d.raw = rawPool.Get().(*[]byte)
		}
	}
	if d.text == nil {
		if rest, ok := d.choices(chunk); ok {
			*d.raw = append(append(*d.raw, '{'), rest...)
			d.ends = append(d.ends, len(*d.raw))
			if len(*d.raw) >= deliveredBuffer {
				d.drain()
			}
			return
		}
	}
	*d.raw = append(*d.raw, chunk...)
	d.ends = append(d.ends, len(*d.raw))
	if len(*d.raw) >= deliveredBuffer {
		d.drain()
	}
}

// choicesKey starts the member of a chat chunk its text is in.
var (
	choicesKey  = []byte(`"choices"`)
	choicesOnly = []string{"choices"}
)

// choices returns chunk from its top-level "choices" member on, when the
// chunk starts as the first kept one did (that one, kept whole, gives the
// offset). A chunk that does not is kept whole and, when raw is empty,
// becomes the one the next are compared with.
func (d *Delivered) choices(chunk []byte) ([]byte, bool) {
	raw := *d.raw
	if n := d.head; n > 0 && len(raw) >= n && len(chunk) > n && bytes.Equal(chunk[:n], raw[:n]) && bytes.HasPrefix(chunk[n:], choicesKey) {
		return chunk[n:], true
	}
	if len(raw) == 0 {
		d.head = 0
		if _, err := jsonx.Members(chunk, choicesOnly, d.spans[:]); err == nil && d.spans[0].Found() {
			d.head = d.spans[0].KeyStart
		}
	}
	return nil, false
}

// drain moves the buffered chunks' text into the token counter.
func (d *Delivered) drain() {
	if d.raw == nil || len(d.ends) == 0 {
		return
	}
	if d.stream == nil {
		d.stream = d.tok.NewStream()
	}
	start := 0
	for _, end := range d.ends {
		if d.text != nil {
			d.text(d.stream, (*d.raw)[start:end])
		} else {
			AddText(d.stream, (*d.raw)[start:end], "delta")
		}
		start = end
	}
	*d.raw, d.ends = (*d.raw)[:0], d.ends[:0]
	d.head = 0 // the chunk the offset came from is gone
}

// Tokens counts the completion delivered so far.
func (d *Delivered) Tokens() int64 {
	d.drain()
	if d.stream == nil {
		return 0
	}
	return int64(d.stream.Tokens())
}

// Release returns the buffer to the pool; d is unusable afterwards.
func (d *Delivered) Release() {
	if d == nil || d.raw == nil {
		return
	}
	switch c := cap(*d.raw); {
	case c <= chatRawSize:
		*d.raw = (*d.raw)[:0]
		chatRawPool.Put(d.raw)
	case c <= 2*deliveredBuffer:
		*d.raw = (*d.raw)[:0]
		rawPool.Put(d.raw)
	}
	d.raw = nil
}
