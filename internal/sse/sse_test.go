package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type ev struct{ typ, id, data string }

var readCases = []struct {
	name string
	in   string
	want []ev
	err  error
}{
	{"openai", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []ev{{"", "", `{"a":1}`}, {"", "", "[DONE]"}}, nil},
	{"crlf", "data: x\r\n\r\ndata: y\r\n\r\n", []ev{{"", "", "x"}, {"", "", "y"}}, nil},
	{"typed", "event: message_start\ndata: {}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n",
		[]ev{{"message_start", "", "{}"}, {"ping", "", `{"type":"ping"}`}}, nil},
	{"multiline data", "data: a\ndata: b\n\n", []ev{{"", "", "a\nb"}}, nil},
	{"no space", "data:x\n\n", []ev{{"", "", "x"}}, nil},
	{"comments and retry", ": keep-alive\nretry: 10\n\nid: 7\ndata: z\n\n", []ev{{"", "7", "z"}}, nil},
	{"event without data is dropped", "event: x\n\ndata: y\n\n", []ev{{"", "", "y"}}, nil},
	{"no final blank line", "data: a\n\ndata: b", []ev{{"", "", "a"}, {"", "", "b"}}, nil},
	{"empty data line", "data:\n\n", []ev{{"", "", ""}}, nil},
	{"empty", "", nil, nil},
	{"only blanks", "\n\n\n", nil, nil},
	{"data then more lines", "data: a\nid: 3\n\ndata: b\r\nevent: e\r\n\r\n", []ev{{"", "3", "a"}, {"e", "", "b"}}, nil},
	{"field named like data", "datum: x\ndata: y\n\n", []ev{{"", "", "y"}}, nil},
	{"blank data then blank line", "data:\r\n\r\ndata:  two spaces\n\n", []ev{{"", "", ""}, {"", "", " two spaces"}}, nil},
}

func readAll(r *Reader) ([]ev, error) {
	var out []ev
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Type, e.ID, string(e.Data)})
	}
}

func equal(a, b []ev) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReader(t *testing.T) {
	for _, tc := range readCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(NewReader(strings.NewReader(tc.in), 0))
			if err != nil || !equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
			// One byte at a time must give the same events.
			got, err = readAll(NewReader(iotest.OneByteReader(strings.NewReader(tc.in)), 0))
			if err != nil || !equal(got, tc.want) {
				t.Fatalf("one byte at a time: got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestReaderLargeEvent(t *testing.T) {
	big := strings.Repeat("x", 200<<10) // larger than the 32 KiB buffer and Scanner's 64 KiB
	in := "data: " + big + "\n\ndata: small\n\n"
	got, err := readAll(NewReader(strings.NewReader(in), 1<<20))
	if err != nil || len(got) != 2 || got[0].data != big || got[1].data != "small" {
		t.Fatalf("large event: %d events, err %v", len(got), err)
	}
}

func TestReaderLimit(t *testing.T) {
	cases := []struct{ name, in string }{
		{"long line", "data: " + strings.Repeat("x", 100<<10) + "\n\n"},
		{"many lines", strings.Repeat("data: "+strings.Repeat("y", 1000)+"\n", 200) + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(NewReader(strings.NewReader(tc.in), 64<<10))
			if !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("err = %v, want ErrEventTooLarge", err)
			}
		})
	}
}

func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(boom)), 0)
	got, err := readAll(r)
	if len(got) != 1 || !errors.Is(err, boom) {
		t.Fatalf("got %v, %v", got, err)
	}
}

// splitReader returns the input in two reads cut at a given offset.
type splitReader struct {
	parts []string
}

func (s *splitReader) Read(p []byte) (int, error) {
	for len(s.parts) > 0 && s.parts[0] == "" {
		s.parts = s.parts[1:]
	}
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.parts[0])
	s.parts[0] = s.parts[0][n:]
	return n, nil
}

func FuzzReader(f *testing.F) {
	for _, tc := range readCases {
		f.Add(tc.in, uint16(3))
	}
	f.Fuzz(func(t *testing.T, in string, cut uint16) {
		want, werr := readAll(NewReader(strings.NewReader(in), 1<<16))
		at := int(cut) % (len(in) + 1)
		got, gerr := readAll(NewReader(&splitReader{parts: []string{in[:at], in[at:]}}, 1<<16))
		if (werr == nil) != (gerr == nil) || !equal(got, want) {
			t.Fatalf("cut at %d changed the events: %v/%v vs %v/%v", at, got, gerr, want, werr)
		}
	})
}

// Buffered is true only when a whole next event is in memory: bytes of an
// event still arriving must not hold back the flush of the one before.
func TestReaderBuffered(t *testing.T) {
	cases := []struct {
		in   string
		want bool // after the first event
	}{
		{"data: a\n\n", false},
		{"data: a\n\ndata: b\n\n", true},
		{"data: a\n\ndata: b\r\n\r\n", true},
		{"data: a\n\ndata: {\"par", false},
		{"data: a\n\ndata: b\n", false},
		{"data: a\n\ndata: b\n\ndata: {\"c", true},
	}
	for _, tc := range cases {
		r := NewReader(strings.NewReader(tc.in), 0)
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if got := r.Buffered(); got != tc.want {
			t.Errorf("%q: Buffered() = %v, want %v", tc.in, got, tc.want)
		}
		r.Release()
	}
}

// Data returned in place stays intact until the next call, even when the
// next event arrives in later reads.
func TestReaderDataInPlace(t *testing.T) {
	in := "data: first\n\ndata: second\n\n"
	for cut := 0; cut <= len(in); cut++ {
		r := NewReader(&splitReader{parts: []string{in[:cut], in[cut:]}}, 0)
		var got []string
		for {
			e, err := r.Next()
			if err != nil {
				break
			}
			_ = r.Buffered()
			got = append(got, string(e.Data))
		}
		if len(got) != 2 || got[0] != "first" || got[1] != "second" {
			t.Fatalf("cut %d: %q", cut, got)
		}
		r.Release()
	}
}
