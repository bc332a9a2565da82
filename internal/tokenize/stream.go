package tokenize

import "unicode/utf8"

// StreamBuffer is the most text a Stream holds before tokenizing it.
const StreamBuffer = 16 << 10

// Stream counts the tokens of text that arrives in pieces (streamed deltas)
// with bounded memory: it buffers at most StreamBuffer bytes and tokenizes
// the buffered text up to its last safe cut (a position where the tokenizer
// always starts a new piece; in practice every space after a word) once half
// the buffer is used, so counting a long stream never holds the whole text.
//
// The total is exactly Count of the concatenated text, however the writes
// split it, unless StreamBuffer bytes arrive without a single safe cut (e.g.
// a long run of digits or whitespace): the buffer is then cut at a UTF-8
// character boundary, which may change the total by a token or two per such
// forced cut.
//
// Not safe for concurrent use (one per stream). A Stream is small and cheap
// to create; its buffer is allocated on first Write and grows only as
// needed. Reset makes it reusable, e.g. from a sync.Pool.
type Stream struct {
	tok     *Tokenizer
	max     int    // buffer cap; StreamBuffer outside tests
	buf     []byte // pending text, not yet counted in total
	scanned int    // buf offsets below this hold no safe cut
	total   int    // tokens of the text already flushed
	tail    int    // tokens of buf, valid when tailOK
	tailOK  bool
	forced  int // forced cuts so far (for tests)
}

// NewStream returns a Stream counting with t.
func (t *Tokenizer) NewStream() *Stream {
	return &Stream{tok: t, max: StreamBuffer}
}

// Reset empties s for a new stream counted with t, keeping its buffer.
func (s *Stream) Reset(t *Tokenizer) {
	*s = Stream{tok: t, max: StreamBuffer, buf: s.buf[:0]}
}

// Write adds the next piece of text. Pieces may split UTF-8 characters.
func (s *Stream) Write(p []byte) {
	if len(p) == 0 {
		return
	}
	s.tailOK = false
	for len(p) > 0 {
		if len(s.buf) == s.max {
			s.flush(true)
		}
		n := min(s.max-len(s.buf), len(p))
		s.grow(n)
		s.buf = append(s.buf, p[:n]...)
		p = p[n:]
		if len(s.buf) >= s.max/2 {
			s.flush(false)
		}
	}
}

// Tokens returns the total so far, including the buffered tail. Counting the
// tail costs up to StreamBuffer bytes of tokenization; the result is cached
// until the next Write, so calling it once per delta is wasteful but correct.
func (s *Stream) Tokens() int {
	if !s.tailOK {
		s.tail = countSegment(s.tok.lazy.get(), s.buf)
		s.tailOK = true
	}
	return s.total + s.tail
}

// grow makes room for n more bytes without letting cap(buf) exceed max.
func (s *Stream) grow(n int) {
	need := len(s.buf) + n
	if need <= cap(s.buf) {
		return
	}
	c := min(max(2*cap(s.buf), need, 512), s.max)
	b := make([]byte, len(s.buf), c)
	copy(b, s.buf)
	s.buf = b
}

// flush counts the buffer up to its last safe cut. With force, a full buffer
// without a safe cut is cut at its last character boundary instead.
func (s *Stream) flush(force bool) {
	cut := s.lastSafeCut()
	if cut == 0 && force {
		cut = lastRuneStart(s.buf)
		s.forced++
	}
	if cut == 0 {
		return
	}
	s.total += countSegment(s.tok.lazy.get(), s.buf[:cut])
	n := copy(s.buf, s.buf[cut:])
	s.buf = s.buf[:n]
	// Offsets of the kept tail were scanned already, except its last few
	// bytes whose verdict may change once the character they start is
	// complete.
	s.scanned = max(0, n-utf8.UTFMax)
}

// lastSafeCut returns the last safe cut in buf, or 0, scanning each offset
// once across calls.
func (s *Stream) lastSafeCut() int {
	for i := len(s.buf) - 1; i >= max(1, s.scanned); i-- {
		if safeCut(s.buf, i) {
			return i
		}
	}
	s.scanned = max(s.scanned, len(s.buf)-utf8.UTFMax)
	return 0
}

// lastRuneStart returns the offset of the last character start in b that
// is not 0, so that a cut there splits no UTF-8 sequence; len(b) when b ends
// with a complete character, and len(b) as well for invalid UTF-8.
func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i > 0 && i >= len(b)-utf8.UTFMax; i-- {
		if !utf8.RuneStart(b[i]) {
			continue
		}
		if utf8.FullRune(b[i:]) {
			return len(b)
		}
		return i
	}
	return len(b)
}
