package sse

import (
	"errors"
	"io"
	"strconv"
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
			// One byte at a time, or the last bytes with io.EOF, must
			// give the same events.
			for name, r := range map[string]io.Reader{
				"one byte at a time": iotest.OneByteReader(strings.NewReader(tc.in)),
				"data with EOF":      iotest.DataErrReader(strings.NewReader(tc.in)),
				"half reads":         iotest.HalfReader(strings.NewReader(tc.in)),
			} {
				got, err = readAll(NewReader(r, 0))
				if err != nil || !equal(got, tc.want) {
					t.Fatalf("%s: got %v, %v; want %v", name, got, err, tc.want)
				}
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

// watchedReader serves parts, one per read, and notes for each read how
// much the reader asked for and whether it held a read buffer meanwhile.
type watchedReader struct {
	parts []string
	rd    *Reader
	reads []string
}

func (w *watchedReader) Read(p []byte) (int, error) {
	held := "buffer"
	if w.rd.br == nil {
		held = "none"
	}
	w.reads = append(w.reads, held+":"+strconv.Itoa(min(len(p), 2)))
	if len(w.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, w.parts[0])
	if w.parts[0] = w.parts[0][n:]; w.parts[0] == "" {
		w.parts = w.parts[1:]
	}
	return n, nil
}

// A reader with nothing buffered waits for the next byte without a read
// buffer (a held stream waits most of its life), and takes one only once
// a byte has come; an event split over reads keeps its buffer until whole.
func TestReaderWaitsWithoutBuffer(t *testing.T) {
	w := &watchedReader{parts: []string{"data: a\n\ndata: b\n\n", "data: c", "\n\n"}}
	r := NewReader(w, 0)
	w.rd = r
	got, err := readAll(r)
	if err != nil || !equal(got, []ev{{"", "", "a"}, {"", "", "b"}, {"", "", "c"}}) {
		t.Fatalf("got %v, %v", got, err)
	}
	want := []string{
		"none:1",   // waits for a and b
		"buffer:2", // the rest of a and b
		"none:1",   // a and b consumed: waits for c without a buffer
		"buffer:2", // the rest of "data: c", in the buffer
		"buffer:2", // c's end: the buffer holds the unfinished line meanwhile
		"none:1",   // c consumed: waits, and finds the end
	}
	if strings.Join(w.reads, " ") != strings.Join(want, " ") {
		t.Errorf("reads %v, want %v", w.reads, want)
	}
	if r.br != nil {
		t.Error("the reader kept a buffer at the stream's end")
	}
	r.Release()
}

// An error that comes with the byte a wait brought is returned after it.
func TestReaderErrorWithWaitedByte(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\n"), &byteThenErr{b: 'd', err: boom}), 0)
	got, err := readAll(r)
	if len(got) != 1 || !errors.Is(err, boom) {
		t.Fatalf("got %v, %v; want one event, then boom", got, err)
	}
}

// byteThenErr returns one byte together with an error.
type byteThenErr struct {
	b   byte
	err error
}

func (e *byteThenErr) Read(p []byte) (int, error) {
	p[0] = e.b
	return 1, e.err
}
