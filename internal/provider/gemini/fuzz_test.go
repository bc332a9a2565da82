package gemini

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// splitReader returns its data in reads whose sizes cycle through sizes.
type splitReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(r.sizes) > 0 {
		n = int(r.sizes[r.i%len(r.sizes)])%7 + 1
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// FuzzStreamSplits: a stream read in arbitrary small pieces translates
// exactly as when read whole.
func FuzzStreamSplits(f *testing.F) {
	files, _ := filepath.Glob("testdata/stream/*.sse")
	var streams [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		streams = append(streams, b)
	}
	for i := range streams {
		f.Add(uint8(i), []byte{1})
		f.Add(uint8(i), []byte{3, 0, 6, 2})
	}
	f.Fuzz(func(t *testing.T, which uint8, sizes []byte) {
		data := streams[int(which)%len(streams)]
		whole := runStream(t, io.NopCloser(bytes.NewReader(data)), true)
		split := runStream(t, io.NopCloser(&splitReader{data: data, sizes: sizes}), true)
		if !bytes.Equal(whole, split) {
			t.Fatalf("split reads changed the output\n--- whole\n%s\n--- split\n%s", whole, split)
		}
	})
}

// TestStreamSplitsEveryByte cuts each stream fixture in two at every byte
// boundary (inside UTF-8 characters, CRLFs and JSON alike) and reads it
// byte by byte: the chunks and the final error must not change.
func TestStreamSplitsEveryByte(t *testing.T) {
	files, _ := filepath.Glob("testdata/stream/*.sse")
	if len(files) == 0 {
		t.Fatal("no stream fixtures")
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		want := runStream(t, io.NopCloser(bytes.NewReader(data)), true)
		for cut := 1; cut < len(data); cut++ {
			r := io.MultiReader(bytes.NewReader(data[:cut]), bytes.NewReader(data[cut:]))
			if got := runStream(t, io.NopCloser(r), true); !bytes.Equal(got, want) {
				t.Fatalf("%s cut at %d:\n got %s\nwant %s", name, cut, got, want)
			}
		}
		if got := runStream(t, io.NopCloser(&splitReader{data: data}), true); !bytes.Equal(got, want) {
			t.Fatalf("%s byte by byte:\n got %s\nwant %s", name, got, want)
		}
	}
}
