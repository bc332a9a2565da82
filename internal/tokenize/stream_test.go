package tokenize

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// forcedCutTolerance bounds how far one forced cut (StreamBuffer bytes
// without a safe cut) may move a Stream's total away from Count: cutting
// inside a pre-tokenizer piece re-tokenizes the two halves separately, which
// in practice costs at most a token or two (e.g. "123456" is "123","456" but
// "1"|"23456" is "1","234","56").
const forcedCutTolerance = 3

// streamCount feeds text to a Stream with a buffer of max bytes in random
// pieces of at most maxPiece bytes, checking the buffer bound after every
// write, and returns the total and the number of forced cuts.
func streamCount(t testing.TB, tok *Tokenizer, text []byte, max, maxPiece int, rng *rand.Rand) (total, forced int) {
	s := tok.NewStream()
	s.max = max
	for len(text) > 0 {
		n := min(len(text), 1+rng.IntN(maxPiece))
		s.Write(text[:n])
		text = text[n:]
		if len(s.buf) > max || cap(s.buf) > max {
			t.Fatalf("buffer len %d cap %d exceeds %d", len(s.buf), cap(s.buf), max)
		}
	}
	return s.Tokens(), s.forced
}

func checkStream(t testing.TB, tok *Tokenizer, text []byte, max, maxPiece int, rng *rand.Rand) {
	t.Helper()
	want := tok.Count(text)
	got, forced := streamCount(t, tok, text, max, maxPiece, rng)
	diff := got - want
	if forced == 0 && diff != 0 || diff > forcedCutTolerance*forced || -diff > forcedCutTolerance*forced {
		t.Fatalf("stream (buffer %d, pieces ≤%d) counted %d, Count %d, forced cuts %d, text %q",
			max, maxPiece, got, want, forced, text)
	}
}

// englishText returns about n bytes of English prose.
func englishText(n int) []byte {
	const para = "It was the best of times, it was the worst of times, it was the age of " +
		"wisdom, it was the age of foolishness, it was the epoch of belief, it was the " +
		"epoch of incredulity, it was the season of Light, it was the season of Darkness. " +
		"The gateway forwards 1,234 requests per second (p99 latency: 87ms) to upstream " +
		"providers; retries use exponential back-off with jitter.\n\n"
	return []byte(strings.Repeat(para, n/len(para)+1)[:n])
}

func TestStreamExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cjk := strings.Repeat("网关在转发请求之前需要估算输入的令牌数量，以便检查余额和选择超时档位。", 500)
	code := strings.Repeat("func f(x int) int {\n\treturn x*2 + 1 // double\n}\n", 800)
	json := strings.Repeat(`{"id":"call_1","arguments":"{\"city\":\"Paris\"}"},`, 800)
	for _, name := range []string{"o200k", "cl100k"} {
		tok := sharedSet.For(name)
		for _, text := range [][]byte{englishText(100 << 10), []byte(cjk), []byte(code), []byte(json)} {
			for _, piece := range []int{1, 7, 100, 5000, 40000} {
				got, forced := streamCount(t, tok, text, StreamBuffer, piece, rng)
				if want := tok.Count(text); got != want || forced != 0 {
					t.Errorf("%s pieces ≤%d: stream %d (forced cuts %d), Count %d", name, piece, got, forced, want)
				}
			}
		}
	}
}

func TestStreamSmallBuffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range []string{"o200k", "cl100k"} {
		tok := sharedSet.For(name)
		for _, text := range safeCutSamples {
			for _, max := range []int{8, 16, 33, 64} {
				for range 20 {
					checkStream(t, tok, []byte(text), max, 1+rng.IntN(12), rng)
				}
			}
		}
	}
}

func TestStreamBoundedWithoutSafeCuts(t *testing.T) {
	// Digits and whitespace runs never offer a safe cut: every StreamBuffer
	// bytes cost a forced cut, and memory stays bounded.
	rng := rand.New(rand.NewPCG(5, 6))
	tok := sharedSet.For("o200k")
	for _, text := range []string{
		strings.Repeat("1234567890", 30000),
		strings.Repeat(" \n", 30000),
	} {
		s := tok.NewStream()
		for i := 0; i < len(text); {
			n := min(len(text)-i, 1+rng.IntN(3000))
			s.Write([]byte(text[i : i+n]))
			i += n
			if len(s.buf) > StreamBuffer || cap(s.buf) > StreamBuffer {
				t.Fatalf("buffer len %d cap %d exceeds %d", len(s.buf), cap(s.buf), StreamBuffer)
			}
		}
		// Count forces a cut every maxUncut bytes here.
		want := tok.Count([]byte(text))
		got := s.Tokens()
		tol := forcedCutTolerance * (s.forced + len(text)/maxUncut + 1)
		if s.forced == 0 || got < want-tol || got > want+tol {
			t.Errorf("stream %d, Count %d, forced cuts %d", got, want, s.forced)
		}
	}
}

func TestStreamTokensAndReset(t *testing.T) {
	tok := sharedSet.For("cl100k")
	s := tok.NewStream()
	if s.Tokens() != 0 {
		t.Fatal("new stream has tokens")
	}
	text := englishText(40 << 10)
	for i := 0; i < len(text); i += 997 {
		s.Write(text[i:min(i+997, len(text))])
		if got, want := s.Tokens(), tok.Count(text[:min(i+997, len(text))]); got != want {
			t.Fatalf("after %d bytes Tokens = %d, want %d", i+997, got, want)
		}
	}
	buf := s.buf
	o := sharedSet.For("o200k")
	s.Reset(o)
	if s.Tokens() != 0 || s.tok != o || cap(s.buf) != cap(buf) {
		t.Fatal("Reset did not empty the stream or dropped its buffer")
	}
	s.Write([]byte("hello world"))
	if s.Tokens() != 2 {
		t.Fatalf("Tokens after Reset = %d, want 2", s.Tokens())
	}
}

func FuzzStream(f *testing.F) {
	for _, s := range safeCutSamples {
		f.Add([]byte(s), uint64(1))
	}
	f.Add([]byte("a  b\n\n c"), uint64(99))
	tok := sharedSet.For("o200k")
	c := tok.lazy.get()
	f.Fuzz(func(t *testing.T, text []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		// Safe cuts never change the count.
		if got, want := countChunked(c, text, 1+int(seed%13), 1<<30, 0), countSegment(c, text); got != want {
			t.Fatalf("chunked count %d, want %d for %q", got, want, text)
		}
		checkStream(t, tok, text, 4+int(seed%61), 1+int(seed%17), rng)
	})
}
