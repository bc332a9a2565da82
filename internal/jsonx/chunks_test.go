package jsonx

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

var streamKeys = []string{"model", "usage", "error", "choices"}

// contentChunk is a chat completion chunk whose delta content is the raw
// string body s (not escaped here, so a test can put anything in it).
func contentChunk(s string) []byte {
	return []byte(`{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,` +
		`"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"content":"` + s + `"},"logprobs":null,"finish_reason":null}],"usage":null}`)
}

// checkLikeCheckObjectProbe feeds chunks to one ChunkChecker and fails
// unless every answer is CheckObjectProbe's. It returns how many chunks
// took the short path.
func checkLikeCheckObjectProbe(t *testing.T, chunks [][]byte, in int) int {
	t.Helper()
	var c ChunkChecker
	return checkWith(t, &c, chunks, in)
}

// checkWith is checkLikeCheckObjectProbe with a given checker.
func checkWith(t *testing.T, cp *ChunkChecker, chunks [][]byte, in int) int {
	t.Helper()
	c := *cp
	defer func() { *cp = c }()
	short := 0
	for n, b := range chunks {
		want := make([]Span, len(streamKeys))
		wantClose, wantHit, wantErr := CheckObjectProbe(b, 16, streamKeys, want, in, "finish_reason")
		if c.same(16, streamKeys, in, "finish_reason") && len(c.spans) == len(streamKeys) {
			probe := c // a copy: checkChanged must not be run twice on the real one
			probe.prev = bytes.Clone(c.prev)
			probe.strs = append([]strSpan(nil), c.strs...)
			probe.spans = append([]Span(nil), c.spans...)
			if _, ok := probe.checkChanged(b, make([]Span, len(streamKeys))); ok {
				short++
			}
		}
		got := make([]Span, len(streamKeys))
		gotClose, gotHit, gotErr := c.Check(b, 16, streamKeys, got, in, "finish_reason")
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("chunk %d %q: error %v, CheckObjectProbe says %v", n, b, gotErr, wantErr)
		}
		if gotErr != nil {
			continue
		}
		if gotClose != wantClose || gotHit != wantHit || !slices.Equal(got, want) {
			t.Fatalf("chunk %d %q: closeAt %d hit %v spans %v; CheckObjectProbe: %d %v %v", n, b, gotClose, gotHit, got, wantClose, wantHit, want)
		}
	}
	return short
}

func TestChunkChecker(t *testing.T) {
	cases := []struct {
		name   string
		chunks [][]byte
		in     int
		short  int // chunks checked by the changed string alone
	}{
		{"content changes", [][]byte{contentChunk("Hello"), contentChunk(" world"), contentChunk(""), contentChunk("a much longer piece of text")}, 3, 3},
		{"escapes and unicode", [][]byte{contentChunk("a"), contentChunk(`\"quoted\"`), contentChunk(`\u00e9t\u00e9 日本 🎉`), contentChunk(`back\\`)}, 3, 3},
		{"invalid content falls back and fails", [][]byte{contentChunk("a"), contentChunk("\xff"), contentChunk("b")}, 3, 0},
		{"control character", [][]byte{contentChunk("a"), contentChunk("x\ny")}, 3, 0},
		{"unescaped quote ends the string early", [][]byte{contentChunk("a"), contentChunk(`x"y`)}, 3, 0},
		{"a backslash escapes the closing quote", [][]byte{contentChunk("a"), contentChunk(`x\`)}, 3, 0},
		{"quote and comma make a new member", [][]byte{contentChunk("a"), contentChunk(`x","content":"y`)}, 3, 0},
		{"same content again", [][]byte{contentChunk("a"), contentChunk("a")}, 3, 0},
		{"a number changes", [][]byte{contentChunk("a"), bytes.Replace(contentChunk("a"), []byte("1741570283"), []byte("1741570284"), 1)}, 3, 0},
		{"two strings change", [][]byte{contentChunk("a"), bytes.Replace(contentChunk("b"), []byte("chatcmpl-B9"), []byte("chatcmpl-C9"), 1)}, 3, 0},
		{"the finish reason arrives", [][]byte{contentChunk("a"), bytes.Replace(contentChunk(""), []byte(`"finish_reason":null`), []byte(`"finish_reason":"stop"`), 1)}, 3, 0},
		{"a wanted member is the string", [][]byte{[]byte(`{"model":"a","choices":[]}`), []byte(`{"model":"bcd","choices":[]}`), []byte(`{"model":"","choices":[]}`)}, 3, 2},
		{"a string value after the change", [][]byte{[]byte(`{"x":"a","model":"m","choices":[{"finish_reason":"stop"}]}`), []byte(`{"x":"abc","model":"m","choices":[{"finish_reason":"stop"}]}`)}, 3, 1},
		{"a later string changes after an earlier one did", [][]byte{[]byte(`{"a":"x","b":"y","model":"m"}`), []byte(`{"a":"xx","b":"y","model":"m"}`),
			[]byte(`{"a":"xx","b":"yy","model":"m"}`), []byte(`{"a":"xx","b":"yy","model":"mmm"}`), []byte(`{"a":"","b":"yy","model":"mmm"}`)}, 3, 4},
		{"the closing quote moves", [][]byte{contentChunk("ab"), contentChunk(`ab\"`), contentChunk(`ab\\`)}, 3, 2},
		{"no probe", [][]byte{contentChunk("a"), contentChunk("b")}, -1, 1},
		{"not JSON, then JSON", [][]byte{[]byte(`{"a":`), contentChunk("a"), contentChunk("b")}, 3, 1},
		{"a key changes", [][]byte{[]byte(`{"ab":1,"model":"m"}`), []byte(`{"ac":1,"model":"m"}`), []byte(`{"model":"m","model":"n"}`), []byte(`{"model":"m","mode":"n"}`)}, 3, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if short := checkLikeCheckObjectProbe(t, tc.chunks, tc.in); short != tc.short {
				t.Errorf("%d chunks checked by their changed string alone, want %d", short, tc.short)
			}
		})
	}
	// One checker for all the streams, released after each, as a gateway
	// uses it: the buffers an earlier stream left must not change an answer.
	var shared ChunkChecker
	for range 3 {
		for _, tc := range cases {
			if short := checkWith(t, &shared, tc.chunks, tc.in); short != tc.short {
				t.Errorf("%s, after Release: %d chunks checked by their changed string alone, want %d", tc.name, short, tc.short)
			}
			shared.Release()
			if shared.bufs != nil || shared.prev != nil || shared.s.strs != nil {
				t.Fatalf("%s: Release left buffers in the checker", tc.name)
			}
		}
	}
}

// A stream's chunks, checked and then released, allocate nothing once the
// buffers have been pooled.
func TestChunkCheckerReleaseAllocs(t *testing.T) {
	chunks := [][]byte{contentChunk("Hello"), contentChunk(" world"), contentChunk("!"),
		bytes.Replace(contentChunk(""), []byte(`"finish_reason":null`), []byte(`"finish_reason":"stop"`), 1)}
	spans := make([]Span, len(streamKeys))
	run := func() {
		var c ChunkChecker
		for _, b := range chunks {
			if _, _, err := c.Check(b, 16, streamKeys, spans, 3, "finish_reason"); err != nil {
				t.Fatal(err)
			}
		}
		c.Release()
	}
	run()
	// Without the pool a stream makes 7 allocations. The race detector
	// makes sync.Pool drop a quarter of what it is given, so there the
	// mean is ~2.
	limit := 0.0
	if raceEnabled {
		limit = 4
	}
	if n := testing.AllocsPerRun(400, run); n > limit {
		t.Errorf("%v allocations per stream, want at most %v", n, limit)
	}
}

// A changed probe or key list is never answered from the last chunk.
func TestChunkCheckerArguments(t *testing.T) {
	var c ChunkChecker
	sp := make([]Span, len(streamKeys))
	if _, _, err := c.Check(contentChunk("a"), 16, streamKeys, sp, 3, "finish_reason"); err != nil {
		t.Fatal(err)
	}
	if c.same(16, streamKeys, -1, "finish_reason") || c.same(8, streamKeys, 3, "finish_reason") ||
		c.same(16, []string{"model", "usage", "error", "choices"}, 3, "finish_reason") || !c.same(16, streamKeys, 3, "finish_reason") {
		t.Error("same() does not compare every argument")
	}
}

func FuzzChunkChecker(f *testing.F) {
	f.Add(contentChunk("Hello"), uint16(170), uint8(5), []byte(" world"))
	f.Add(contentChunk(`a\"b`), uint16(171), uint8(1), []byte(`\\`))
	f.Add([]byte(`{"model":"x","choices":[{"finish_reason":"stop"}]}`), uint16(10), uint8(1), []byte("yz"))
	f.Fuzz(func(t *testing.T, base []byte, at uint16, cut uint8, with []byte) {
		// The next chunk is base with base[i:j] replaced: most often a
		// change inside one string, the case the short path takes.
		i := int(at) % (len(base) + 1)
		j := min(len(base), i+int(cut))
		next := append(append(append([]byte(nil), base[:i]...), with...), base[j:]...)
		again := append(append(append([]byte(nil), next[:i]...), strings.Repeat("é", int(cut)%3)...), next[min(len(next), i+len(with)):]...)
		for _, in := range []int{3, -1} {
			checkLikeCheckObjectProbe(t, [][]byte{base, next, again, base}, in)
		}
	})
}

// Random edits of a content chunk, most inside its content and some
// anywhere: every answer is CheckObjectProbe's, and the edits that stay
// inside the string take the short path.
func TestChunkCheckerRandomEdits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "é", "日", "🎉", `\"`, `\\`, `\n`, `\u00e9`, `"`, `\`, "\xff", "\x01", "}", ",", ":", " ", "{", "]"}
	base := contentChunk("Hello")
	at := bytes.Index(base, []byte("Hello"))
	short := 0
	const runs = 3000
	for range runs {
		prev := base
		chunks := [][]byte{prev}
		for range 4 {
			i, j := at+rng.IntN(6), at+rng.IntN(6)
			if rng.IntN(8) == 0 { // anywhere
				i, j = rng.IntN(len(prev)), rng.IntN(len(prev))
			}
			i, j = min(i, j, len(prev)), min(max(i, j), len(prev))
			var with []byte
			for range rng.IntN(4) {
				with = append(with, alphabet[rng.IntN(len(alphabet))]...)
			}
			next := append(append(append([]byte(nil), prev[:i]...), with...), prev[j:]...)
			chunks = append(chunks, next)
			if json.Valid(next) {
				prev = next
			}
		}
		short += checkLikeCheckObjectProbe(t, chunks, 3)
	}
	if short < runs { // about one in three edits stays inside a valid string
		t.Errorf("only %d of %d edited chunks took the short path", short, 4*runs)
	}
	t.Logf("%d of %d edited chunks took the short path", short, 4*runs)
}
