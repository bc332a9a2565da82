// Package jsonx holds the small, allocation-light JSON operations the request
// path needs on raw bodies: a strict validator (syntax, UTF-8, nesting depth,
// duplicate keys) and top-level field lookup and replacement, so a body can be
// forwarded byte for byte with only the fields the gateway owns patched.
package jsonx

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf8"
)

// SyntaxError describes why a body is not acceptable JSON, with the byte
// offset where the problem was found.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at byte offset %d", e.Msg, e.Offset)
}

// Check verifies that b holds exactly one JSON value with valid UTF-8 strings,
// at most maxDepth nested containers, and no object with the same key twice
// (parsers disagree on which duplicate wins, so a gateway that validates one
// and forwards both could be smuggled past).
func Check(b []byte, maxDepth int) error {
	s := checkers.Get().(*checker)
	defer func() { s.b = nil; checkers.Put(s) }()
	*s = checker{b: b, max: maxDepth, keys: keyStack{keys: s.keys.keys[:0], sets: s.keys.sets[:0]}}
	s.ws()
	if err := s.value(); err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.b) {
		return s.fail("unexpected data after the top-level value")
	}
	return nil
}

// checkers recycles the key stacks between calls, so checking a request
// allocates nothing.
var checkers = sync.Pool{New: func() any { return new(checker) }}

type checker struct {
	b     []byte
	i     int
	depth int
	max   int
	keys  keyStack

	// For CheckObject: the top-level keys to locate and where they are,
	// and duplicate keys checked at the top level only.
	topDupsOnly bool
	want        []string
	spans       []Span
	closeAt     int

	// For CheckObjectProbe: a member named probeKey with a string value
	// in an object directly inside the value of top-level member
	// want[probeIn] (probeIn -1: none). inProbe is set while that value is
	// being read.
	probeIn  int
	probeKey string
	inProbe  bool
	probeHit bool

	// For ChunkChecker: where each string value starts and ends (quotes
	// included), when noteStrings is set.
	noteStrings bool
	strs        []strSpan
}

func (s *checker) fail(msg string) error { return &SyntaxError{Offset: s.i, Msg: msg} }

func (s *checker) ws() {
	for s.i < len(s.b) {
		// One comparison for the usual case: no whitespace at all
		// (every JSON whitespace byte is <= ' ').
		if c := s.b[s.i]; c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return
		}
		s.i++
	}
}

func (s *checker) value() error {
	if s.i >= len(s.b) {
		return s.fail("unexpected end of JSON input")
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		start := s.i
		_, err := s.str()
		if s.noteStrings && err == nil {
			s.strs = append(s.strs, strSpan{start, s.i})
		}
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		return s.fail(fmt.Sprintf("invalid character %s looking for a value", quoteByte(c)))
	}
}

func quoteByte(c byte) string {
	if c < utf8.RuneSelf {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (s *checker) literal(lit string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return s.fail("invalid literal, expected " + lit)
	}
	s.i += len(lit)
	return nil
}

func (s *checker) enter() error {
	s.depth++
	if s.depth > s.max {
		return s.fail(fmt.Sprintf("JSON nested deeper than %d levels", s.max))
	}
	return nil
}

func (s *checker) object() error {
	if err := s.enter(); err != nil {
		return err
	}
	s.i++ // '{'
	// Duplicate keys are looked for at every depth, except below the top
	// level when the caller only edits top-level members (topDupsOnly).
	dups := !s.topDupsOnly || s.depth == 1
	var keys keyMark
	if dups {
		keys = s.keys.open()
		defer s.keys.close(keys)
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		if s.depth == 1 {
			s.closeAt = s.i
		}
		s.i++
		s.depth--
		return nil
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return s.fail("expected a string object key")
		}
		start := s.i
		escaped, err := s.str()
		if err != nil {
			return err
		}
		if dups && s.keys.addDup(keys, s.b[start+1:s.i-1], escaped) {
			s.i = start
			return s.fail("duplicate object key " + string(s.b[start:start+min(len(s.b)-start, 64)]))
		}
		keyEnd := s.i
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return s.fail("expected ':' after object key")
		}
		s.i++
		s.ws()
		if s.depth == 1 && len(s.want) > 0 {
			// A wanted member is known by its key before its value is
			// read: the value's span is noted after, without a second look.
			w := s.wanted(start, keyEnd, escaped)
			s.inProbe = w >= 0 && w == s.probeIn
			valStart := s.i
			if err := s.value(); err != nil {
				return err
			}
			s.inProbe = false
			if w >= 0 {
				s.spans[w] = Span{KeyStart: start, ValStart: valStart, ValEnd: s.i}
			}
		} else {
			if s.inProbe && s.depth == 3 && !s.probeHit && s.i < len(s.b) && s.b[s.i] == '"' &&
				s.isKey(start, keyEnd, escaped, s.probeKey) {
				s.probeHit = true
			}
			if err := s.value(); err != nil {
				return err
			}
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.fail("unexpected end of JSON input in object")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			if s.depth == 1 {
				s.closeAt = s.i
			}
			s.i++
			s.depth--
			return nil
		default:
			return s.fail("expected ',' or '}' in object")
		}
	}
}

func (s *checker) array() error {
	if err := s.enter(); err != nil {
		return err
	}
	s.i++ // '['
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return nil
	}
	for {
		s.ws()
		if err := s.value(); err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.fail("unexpected end of JSON input in array")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return nil
		default:
			return s.fail("expected ',' or ']' in array")
		}
	}
}

// plain marks the bytes a string may contain as they are: printable ASCII
// other than the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Eight bytes at a time: lsb has the low bit of every byte set, msb the
// high bit.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special returns the high bit of every byte of x that a string cannot
// hold as it is (a control character, '"', '\\' or a non-ASCII byte),
// possibly with false positives above the first true one (borrows only
// propagate upwards), so the lowest bit set always marks a special byte.
func special(x uint64) uint64 {
	q := x ^ (lsb * '"')
	e := x ^ (lsb * '\\')
	return (x | (x - lsb*0x20) | (q - lsb) | (e - lsb)) & msb
}

// str consumes a string starting at the opening quote and reports whether
// it contained escapes.
func (s *checker) str() (escaped bool, err error) {
	s.i++ // opening quote
	b := s.b
	for {
		i := s.i
		for i+8 <= len(b) {
			if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto found
			}
			i += 8
		}
		for i < len(b) && plain[b[i]] {
			i++
		}
	found:
		s.i = i
		if i >= len(b) {
			return escaped, s.fail("unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			s.i++
			return escaped, nil
		case c == '\\':
			escaped = true
			if err := s.escape(); err != nil {
				return escaped, err
			}
		case c < 0x20:
			return escaped, s.fail("control character in string")
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return escaped, s.fail("invalid UTF-8 in string")
			}
			s.i += size
		}
	}
}

func (s *checker) escape() error {
	if s.i+1 >= len(s.b) {
		return s.fail("unterminated escape")
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return nil
	case 'u':
		if s.i+6 > len(s.b) {
			return s.fail("short \\u escape")
		}
		for _, h := range s.b[s.i+2 : s.i+6] {
			if !isHex(h) {
				return s.fail("invalid \\u escape")
			}
		}
		s.i += 6
		return nil
	default:
		return s.fail("invalid escape")
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (s *checker) number() error {
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.b) {
		return s.fail("unexpected end of number")
	}
	switch {
	case s.b[s.i] == '0':
		s.i++
	case s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return s.fail("invalid number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return s.fail("invalid number: no digits after '.'")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return s.fail("invalid number: no digits in exponent")
		}
	}
	return nil
}

func (s *checker) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}
