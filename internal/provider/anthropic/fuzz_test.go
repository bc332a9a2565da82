package anthropic

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// splitReader returns its data in pieces of the given sizes (cycled), so a
// stream arrives cut at arbitrary byte boundaries, UTF-8 sequences included.
type splitReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(r.sizes) > 0 {
		n = r.sizes[r.i%len(r.sizes)]
		r.i++
	}
	n = max(1, min(n, len(p), len(r.data)))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func streamFixtures(t testing.TB) [][]byte {
	t.Helper()
	names, _ := filepath.Glob("testdata/streams/*.sse")
	var out [][]byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestStreamSplitsEveryByte cuts each stream fixture into two at every
// byte boundary; the chunks must not change.
func TestStreamSplitsEveryByte(t *testing.T) {
	c := testClient(t)
	for _, in := range streamFixtures(t) {
		want := runStream(t, c, bytes.NewReader(in), "person", true)
		for cut := 1; cut < len(in); cut++ {
			got := runStream(t, c, io.MultiReader(bytes.NewReader(in[:cut]), bytes.NewReader(in[cut:])), "person", true)
			if !bytes.Equal(got, want) {
				t.Fatalf("cut at %d:\n got %s\nwant %s", cut, got, want)
			}
		}
		if got := runStream(t, c, &splitReader{data: in}, "person", true); !bytes.Equal(got, want) {
			t.Fatalf("byte by byte:\n got %s\nwant %s", got, want)
		}
	}
}

// FuzzStreamSplits feeds a stream in random small pieces: the output must
// be the same as when it arrives whole.
func FuzzStreamSplits(f *testing.F) {
	fixtures := streamFixtures(f)
	for i := range fixtures {
		f.Add(uint8(i), uint64(1))
		f.Add(uint8(i), uint64(12345))
	}
	c := testClient(f)
	f.Fuzz(func(t *testing.T, which uint8, seed uint64) {
		in := fixtures[int(which)%len(fixtures)]
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		sizes := make([]int, 64)
		for i := range sizes {
			sizes[i] = 1 + rng.IntN(16)
		}
		want := runStream(t, c, bytes.NewReader(in), "person", true)
		got := runStream(t, c, &splitReader{data: in, sizes: sizes}, "person", true)
		if !bytes.Equal(got, want) {
			t.Fatalf("sizes %v:\n got %s\nwant %s", sizes, got, want)
		}
	})
}
