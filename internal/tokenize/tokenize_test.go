package tokenize

import (
	"strings"
	"sync"
	"testing"
)

// sharedSet is built once for all tests so each vocabulary is parsed once.
var sharedSet = NewSet()

func TestCountKnown(t *testing.T) {
	// Expected counts are the lengths of the token-ID lists in
	// tiktoken-go/tokenizer's own tests and of tiktoken's published examples.
	tests := []struct {
		enc  string
		text string
		want int
	}{
		{"o200k", "", 0},
		{"o200k", "hello world", 2},
		{"o200k", "hello  world", 3},
		{"o200k", "hello   world", 3},
		{"o200k", "'RE", 2},
		{"o200k", "supercalifragilistic", 6},
		{"o200k", "We know what we are, but know not what we may be.", 14},
		{"cl100k", "", 0},
		{"cl100k", "hello world", 2},
		{"cl100k", "hello  world", 3},
		{"cl100k", "hello   world", 3},
		{"cl100k", "'RE", 1},
		{"cl100k", "supercalifragilistic", 7},
		{"cl100k", "We know what we are, but know not what we may be.", 14},
		{"cl100k", "tiktoken is great!", 6},                   // tiktoken README
		{"cl100k", "antidisestablishmentarianism", 6},         // OpenAI cookbook
		{"cl100k", "2 + 2 = 4", 7},                            // OpenAI cookbook
		{"cl100k", "お誕生日おめでとう", 9},                            // OpenAI cookbook
		{"o200k", "antidisestablishmentarianism", 6},          // OpenAI cookbook
		{"o200k", "2 + 2 = 4", 7},                             // OpenAI cookbook
		{"o200k", "お誕生日おめでとう", 8},                             // OpenAI cookbook
		{"o200k", strings.Repeat("hello world ", 3000), 6001}, // > countChunk; trailing " " is a token
	}
	for _, tt := range tests {
		got := sharedSet.For(tt.enc).Count([]byte(tt.text))
		if got != tt.want {
			t.Errorf("%s Count(%.40q) = %d, want %d", tt.enc, tt.text, got, tt.want)
		}
	}
}

func TestFor(t *testing.T) {
	s := sharedSet
	tests := []struct {
		name  string
		exact bool
		same  *Tokenizer
	}{
		{"o200k", true, s.For("o200k")},
		{"cl100k", true, s.For("cl100k")},
		{"", false, s.For("claude")},
		{"llama3", false, s.For("")},
	}
	for _, tt := range tests {
		tok := s.For(tt.name)
		if tok.Exact() != tt.exact {
			t.Errorf("For(%q).Exact() = %v, want %v", tt.name, tok.Exact(), tt.exact)
		}
		if tok != tt.same {
			t.Errorf("For(%q) returned a different tokenizer on a second call", tt.name)
		}
	}
	// The approximate tokenizer counts with o200k.
	text := []byte("Bonjour, comment ça va ? 你好")
	if a, b := s.For("gemini").Count(text), s.For("o200k").Count(text); a != b {
		t.Errorf("approximate count %d != o200k count %d", a, b)
	}
	if s.For("cl100k").lazy == s.For("o200k").lazy {
		t.Error("cl100k and o200k share an encoding")
	}
}

func TestLazyInit(t *testing.T) {
	s := NewSet()
	if s.o200k.codec != nil || s.cl100k.codec != nil {
		t.Fatal("NewSet loaded an encoding")
	}
	s.For("cl100k").Count([]byte("x"))
	if s.o200k.codec != nil || s.cl100k.codec == nil {
		t.Fatal("counting with cl100k should load exactly cl100k")
	}
}

func TestConcurrentCount(t *testing.T) {
	s := NewSet()
	text := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 50))
	want := sharedSet.For("o200k").Count(text)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := s.For("o200k").Count(text); got != want {
				t.Errorf("concurrent Count = %d, want %d", got, want)
			}
		})
	}
	wg.Wait()
}

// safeCutSamples exercise every kind of boundary of the pre-tokenizer.
var safeCutSamples = []string{
	"hello world, it's a test: don't we've they'll I'd I'M",
	"Numbers 1234567 and 12 345,678.90 x1y22z333 ab12cd",
	"  leading  and   trailing spaces   \n\n\tTabs\tand\r\nCRLF\r\n",
	"punct!!! ... ?? (paren) [bracket] {brace} \"quote\" 'single' //path/to/x",
	"Ünïcödé wörds, naïve café; Ελληνικά κείμενα. Русский текст!",
	"中文文本，没有空格。日本語のテキスト、句読点！한국어 문장입니다.",
	"e\u0301\u0301 combining marks a\u0308b \u0915\u093f\u0937 \u05e9\u05c1",
	"CamelCaseWords HTTPServer XMLHttpRequest iPhone macOS 'S 'T",
	"{\"key\":\"value\",\"n\":[1,2,3],\"nested\":{\"a\":null}}",
	"base64: SGVsbG8gV29ybGQhIFRoaXMgaXMgYmFzZTY0Lg==/+AbC",
	"emoji 👍🏽 family 👨‍👩‍👧 flags 🇫🇷🇩🇪 text",
	"nbsp\u00a0here\u2003em\u3000ideographic x\u00a0 y \u00a0z",
	"invalid \xff\xfe bytes \xe4\xb8 cut \xc3( mid",
	"ſt long s's ǅ title'LL 'Re ’s curly",
}

func TestChunkedCountIsExact(t *testing.T) {
	for _, name := range []string{"o200k", "cl100k"} {
		c := sharedSet.For(name).lazy.get()
		for _, text := range safeCutSamples {
			b := []byte(strings.Repeat(text, 3))
			want := countSegment(c, b)
			for chunk := 1; chunk <= 24; chunk++ {
				if got := countChunked(c, b, chunk, 1<<30, 0); got != want {
					t.Errorf("%s chunk %d: %d tokens, want %d for %q", name, chunk, got, want, text)
				}
			}
		}
	}
}

func TestSafeCut(t *testing.T) {
	tests := []struct {
		text string
		i    int
		want bool
	}{
		{"a b", 1, true},      // space after a letter
		{"1 b", 1, true},      // space after a digit
		{". b", 1, true},      // space after punctuation
		{"a  b", 2, false},    // space after a space
		{"\n b", 1, false},    // space after a newline
		{"ab", 1, false},      // inside a word
		{"a,b", 1, true},      // punctuation after a letter
		{"a'b", 1, false},     // possible contraction
		{"a1", 1, true},       // number after a letter
		{"1a", 1, true},       // letter after a number
		{"12", 1, false},      // inside a number
		{" 1", 1, false},      // number after a space: (?!\S) decides
		{".1", 1, true},       // number after punctuation
		{".\n", 1, false},     // punctuation runs take newlines
		{"a\n", 1, true},      // newline after a letter
		{".\t", 1, true},      // tab after punctuation
		{"é b", 2, true},      // space after a non-ASCII letter
		{"é b", 1, false},     // mid-rune
		{"中。", 3, true},       // CJK punctuation after a letter
		{"e\u0301", 1, false}, // combining mark after a letter
		{"ab", 0, false},      // ends are never cuts
		{"ab", 2, false},
	}
	for _, tt := range tests {
		if got := safeCut([]byte(tt.text), tt.i); got != tt.want {
			t.Errorf("safeCut(%q, %d) = %v, want %v", tt.text, tt.i, got, tt.want)
		}
	}
}

// AtMost counts exactly up to its limit and stops soon after it, so a
// huge prompt costs work in proportion to the limit, not to its size.
func TestAtMost(t *testing.T) {
	tok := NewSet().For("o200k")
	text := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20000)) // 200,000 tokens
	full := tok.Count(text)
	for _, limit := range []int{10, 1000, 50000} {
		got := tok.AtMost(limit).Count(text)
		if got <= limit || got >= full || got > limit+20000 {
			t.Errorf("AtMost(%d).Count = %d (full %d)", limit, got, full)
		}
	}
	short := []byte("hello world")
	if got := tok.AtMost(1000).Count(short); got != 2 {
		t.Errorf("under the limit: %d", got)
	}
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"` + string(text) + `"},{"role":"user","content":"x"}]}`)
	if n, err := tok.AtMost(100).ChatPrompt(body); err != nil || n <= 100 || n > 30000 {
		t.Errorf("ChatPrompt under AtMost(100) = %d, %v", n, err)
	}
}
