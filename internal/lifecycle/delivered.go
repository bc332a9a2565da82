package lifecycle

import (
	"sync"

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
type Delivered struct {
	tok    *tokenize.Tokenizer
	text   func(s *tokenize.Stream, chunk []byte) // extracts a chunk's text; nil: a chat chunk's deltas
	raw    *[]byte
	ends   []int // end offset of each chunk in raw
	stream *tokenize.Stream
}

var rawPool = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// Add notes a chunk that reached the client.
func (d *Delivered) Add(chunk []byte) {
	if d == nil {
		return
	}
	if d.raw == nil {
		d.raw = rawPool.Get().(*[]byte)
	}
	*d.raw = append(*d.raw, chunk...)
	d.ends = append(d.ends, len(*d.raw))
	if len(*d.raw) >= deliveredBuffer {
		d.drain()
	}
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
	if cap(*d.raw) <= 2*deliveredBuffer {
		*d.raw = (*d.raw)[:0]
		rawPool.Put(d.raw)
	}
	d.raw = nil
}
