// Package tokenize counts tokens with the tokenizer of a model family,
// entirely offline.
//
// The byte-pair-encoding vocabularies (o200k_base for the GPT-4o/o-series
// family, cl100k_base for the GPT-4/GPT-3.5 family) are embedded in the
// binary by github.com/pkoukk/tiktoken-go-loader and run by
// github.com/pkoukk/tiktoken-go, whose counts match OpenAI's tiktoken.
// Nothing is downloaded or read from disk, ever: the vocabularies are read
// from the embedded files directly, never through tiktoken-go's GetEncoding
// (whose default loader downloads). A vocabulary is parsed the first time a
// Tokenizer of a Set uses it, so a process that never counts tokens pays
// nothing but the binary size.
//
// Models of other vendors (Anthropic, Google, Mistral, ...) have tokenizers
// whose vocabularies are not public or not shipped here; they are counted with
// o200k and the Tokenizer reports Exact() == false.
//
// Long inputs are tokenized in segments cut where the tokenizer's
// pre-tokenization regular expression always starts a new piece (see
// safeCut), so segmenting does not change the count while bounding the
// temporary memory of the regular expression engine (it converts its input to
// runes). Only a pathological stretch of maxUncut bytes without any such
// position (one long run of whitespace, punctuation or letters) is cut
// elsewhere, trading a token or so of accuracy for time: the tokenizer's
// byte-pair merge is quadratic in the length of a piece.
package tokenize

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

const (
	// countChunk is the segment size Count aims for on long inputs.
	countChunk = 16 << 10
	// maxUncut is the longest stretch Count tokenizes without a safe cut.
	maxUncut = 2 << 10
)

// encoding describes one tiktoken encoding (values from tiktoken).
type encoding struct {
	file    string // embedded vocabulary file
	pattern string // pre-tokenization regular expression
	special map[string]int
}

var (
	o200kBase = encoding{
		file: "o200k_base.tiktoken",
		pattern: strings.Join([]string{
			`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
			`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
			`\p{N}{1,3}`,
			` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
			`\s*[\r\n]+`,
			`\s+(?!\S)`,
			`\s+`,
		}, "|"),
		special: map[string]int{"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
	}
	cl100kBase = encoding{
		file:    "cl100k_base.tiktoken",
		pattern: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
		special: map[string]int{"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
			"<|fim_middle|>": 100259, "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
	}
)

// lazyCodec builds the codec of one encoding on first use.
type lazyCodec struct {
	once  sync.Once
	enc   *encoding
	codec *tiktoken.Tiktoken
}

func (l *lazyCodec) get() *tiktoken.Tiktoken {
	l.once.Do(func() {
		ranks, err := loader.NewOfflineLoader().LoadTiktokenBpe(l.enc.file)
		if err != nil {
			// The file is embedded: only a broken build gets here.
			panic("tokenize: " + l.enc.file + ": " + err.Error())
		}
		bpe, err := tiktoken.NewCoreBPE(ranks, l.enc.special, l.enc.pattern)
		if err != nil {
			panic("tokenize: " + l.enc.file + ": " + err.Error())
		}
		l.codec = tiktoken.NewTiktoken(bpe, nil, nil)
	})
	return l.codec
}

// Tokenizer counts tokens for one encoding. Safe for concurrent use.
type Tokenizer struct {
	lazy  *lazyCodec
	exact bool
	limit int // > 0: stop counting once more than limit tokens are seen (AtMost)
}

// AtMost returns a copy of t that gives up counting once it has seen more
// than limit tokens: its counts are exact up to limit and only say "more"
// beyond it. It bounds the work spent on huge prompts when all a caller
// wants to know is whether they fit a context window.
func (t *Tokenizer) AtMost(limit int) *Tokenizer {
	c := *t
	c.limit = limit
	return &c
}

// Set holds the lazily initialised encodings; create one per process (app
// wiring) and share it. Its zero value is not usable; call NewSet.
type Set struct {
	o200k, cl100k lazyCodec

	o200kTok, cl100kTok, approxTok Tokenizer
}

// NewSet returns a Set whose encodings are built on first use. It is cheap:
// no vocabulary is loaded until a Tokenizer counts something.
func NewSet() *Set {
	s := &Set{}
	s.o200k.enc = &o200kBase
	s.cl100k.enc = &cl100kBase
	s.o200kTok = Tokenizer{lazy: &s.o200k, exact: true}
	s.cl100kTok = Tokenizer{lazy: &s.cl100k, exact: true}
	s.approxTok = Tokenizer{lazy: &s.o200k, exact: false}
	return s
}

// For returns the tokenizer for a catalog tokenizer name: "o200k", "cl100k";
// any other name (including "") returns o200k marked approximate. It never
// allocates and never loads a vocabulary by itself.
func (s *Set) For(name string) *Tokenizer {
	switch name {
	case "o200k":
		return &s.o200kTok
	case "cl100k":
		return &s.cl100kTok
	default:
		return &s.approxTok
	}
}

// Exact reports whether counts are made with the model's own tokenizer; it
// is false when approximating another vendor's tokenizer with o200k.
func (t *Tokenizer) Exact() bool { return t.exact }

// Count returns the number of tokens in text, as tiktoken's encode_ordinary
// would (special-token markers such as "<|endoftext|>" count as plain text).
// It does not copy text, which must not be modified during the call.
func (t *Tokenizer) Count(text []byte) int {
	return countChunked(t.lazy.get(), text, countChunk, maxUncut, t.limit)
}

// countString is Count for a string, without copying it.
func (t *Tokenizer) countString(s string) int {
	return t.Count(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// countChunked counts text in segments of about chunk bytes, each cut at a
// safe position, so the result equals counting text in one piece unless a
// stretch of maxUncut bytes has no safe position (see chunkCut).
func countChunked(c *tiktoken.Tiktoken, text []byte, chunk, maxUncut, limit int) int {
	n := 0
	for len(text) > 0 && (limit <= 0 || n <= limit) {
		cut := len(text)
		if cut > chunk || cut > maxUncut {
			cut = chunkCut(text, chunk, maxUncut)
		}
		n += countSegment(c, text[:cut])
		text = text[cut:]
	}
	return n
}

// chunkCut returns where to end the first segment of b: its last safe cut
// before offset limit, else its first safe cut after it; but never a segment
// holding a stretch of maxUncut bytes without a safe cut: such a stretch ends
// the segment at the safe cut before it, or, at the start of a segment, is
// cut by force at the first character boundary maxUncut bytes in.
func chunkCut(b []byte, limit, maxUncut int) int {
	last := 0 // last safe cut seen; 0 when none
	for i := 1; i < len(b); i++ {
		if safeCut(b, i) {
			last = i
		}
		if last > 0 && (i >= limit || i-last >= maxUncut) {
			return last
		}
		if i >= maxUncut && last == 0 {
			for i < len(b) && !utf8.RuneStart(b[i]) {
				i++
			}
			return i
		}
	}
	return len(b)
}

// countSegment tokenizes one segment. The codec only reads the string for
// the duration of the call and keeps no reference to it, so aliasing the
// bytes instead of copying them is safe.
func countSegment(c *tiktoken.Tiktoken, b []byte) int {
	if len(b) == 0 {
		return 0
	}
	return len(c.EncodeOrdinary(unsafe.String(unsafe.SliceData(b), len(b))))
}

// safeCut reports whether the pre-tokenization regular expression of
// o200k_base and cl100k_base always starts a new piece at byte offset i of b
// (0 < i < len(b)), whatever text surrounds b[i-4:i+4]; counting b[:i] and
// b[i:] separately then gives exactly the count of b. Let p be the character
// before i and c the one at i. The offset qualifies when
//
//	(a) c is whitespace other than \r and \n, and p is not whitespace;
//	(b) p is a letter and c is not a letter, a mark or an apostrophe;
//	(c) p is a number and c is not; or
//	(d) c is a number and p is neither a number nor whitespace.
//
// Why: no alternative of either pattern takes a non-whitespace character
// followed by whitespace other than \r\n; letter runs only continue with
// letters, marks or a contraction ('s, 't, 're, 've, 'm, 'll, 'd); numbers
// only continue with numbers; and nothing takes a non-number followed by a
// number. The only lookahead, (?!\S), follows a whitespace run, which none of
// the cases ends at i. So the decisions before i are the same whether or not
// the text continues, and the match from i cannot look back.
// The tests and the fuzz test check this against counting whole texts.
func safeCut(b []byte, i int) bool {
	if i <= 0 || i >= len(b) {
		return false
	}
	if b[i] == ' ' && b[i-1] > ' ' && b[i-1] < 0x7f { // fast path for (a)
		return true
	}
	if !utf8.RuneStart(b[i]) {
		return false
	}
	c, n := utf8.DecodeRune(b[i:])
	p, m := utf8.DecodeLastRune(b[:i])
	if c == utf8.RuneError && n <= 1 || p == utf8.RuneError && m <= 1 {
		return false
	}
	switch {
	case unicode.IsSpace(c):
		return c != '\r' && c != '\n' && !unicode.IsSpace(p) ||
			unicode.IsLetter(p) || unicode.IsNumber(p)
	case unicode.IsNumber(c):
		return !unicode.IsNumber(p) && !unicode.IsSpace(p)
	case unicode.IsNumber(p):
		return true
	default:
		return unicode.IsLetter(p) && c != '\'' && !unicode.IsLetter(c) && !unicode.IsMark(c)
	}
}
