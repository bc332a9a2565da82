package openai

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	chg "github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/money"
)

// testWAV is a silent 16-bit mono PCM WAV of d at 8 kHz.
func testWAV(d time.Duration) []byte {
	n := int(d / (time.Second / 8000))
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(36+2*n))
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint32(b, 8000)
	b = binary.LittleEndian.AppendUint32(b, 16000)
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 16)
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(2*n))
	return append(b, make([]byte, 2*n)...)
}

// testMP3 is n MPEG-1 layer III frames (128 kbit/s, 44.1 kHz).
func testMP3(n int) []byte {
	var b []byte
	for range n {
		f := make([]byte, 417)
		copy(f, []byte{0xFF, 0xFB, 0x90, 0x00})
		b = append(b, f...)
	}
	return b
}

// part is one part of a test form; filename or contentType make it a file.
type part struct {
	name, filename, contentType string
	data                        []byte
}

func field(name, v string) part { return part{name: name, data: []byte(v)} }

func fileOf(name, ct string, data []byte) part {
	return part{name: "file", filename: name, contentType: ct, data: data}
}

func buildForm(t testing.TB, parts ...part) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.filename != "" {
			h.Set("Content-Disposition", multipart.FileContentDisposition(p.name, p.filename))
		} else {
			h.Set("Content-Disposition", `form-data; name="`+p.name+`"`)
		}
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(p.data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

func readForm(t testing.TB, contentType string, body io.Reader, length int64) (*transcriptionForm, error) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/audio/transcriptions", body)
	r.Header.Set("Content-Type", contentType)
	r.ContentLength = length
	f, err := readTranscriptionForm(httptest.NewRecorder(), r)
	if err == nil {
		t.Cleanup(f.close)
	}
	return f, err
}

func TestTranscriptionFormValid(t *testing.T) {
	wav := testWAV(1500 * time.Millisecond)
	tests := []struct {
		name             string
		parts            []part
		wantName, wantCT string
		wantDur          time.Duration
		wantFields       string
		wantFormat       string
	}{
		{"sdk defaults: anonymous_file, octet-stream", []part{fileOf("anonymous_file", "application/octet-stream", wav), field("model", "whisper-1")},
			"anonymous_file.wav", "audio/wav", 1500 * time.Millisecond, "", "json"},
		{"named, typed, every field kept in order", []part{field("model", "whisper-1"), field("language", "en"), field("prompt", "Names: Zoë"),
			field("response_format", "verbose_json"), field("temperature", "0.2"), field("timestamp_granularities[]", "word"),
			field("timestamp_granularities[]", "segment"), field("include[]", "logprobs"), field("x_vendor", "v"), fileOf("Talk.WAV", "audio/x-wav", wav)},
			"Talk.WAV", "audio/x-wav", 1500 * time.Millisecond,
			"language=en prompt=Names: Zoë response_format=verbose_json temperature=0.2 timestamp_granularities[]=word timestamp_granularities[]=segment include[]=logprobs x_vendor=v",
			"verbose_json"},
		{"mp3 without extension or type", []part{fileOf("voice", "", testMP3(100)), field("model", "m"), field("stream", "false")},
			"voice.mp3", "audio/mpeg", 100 * 1152 * time.Second / 44100, "stream=false", "json"},
		{"unknown audio type tolerated", []part{fileOf("x.wav", "audio/x-something", wav), field("model", "m"), field("response_format", "srt")},
			"x.wav", "audio/wav", 1500 * time.Millisecond, "response_format=srt", "srt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, ct := buildForm(t, tc.parts...)
			f, err := readForm(t, ct, bytes.NewReader(body), int64(len(body)))
			if err != nil {
				t.Fatal(err)
			}
			up := f.upstreamFile()
			var fields []string
			for _, fl := range f.fields {
				fields = append(fields, fl.Name+"="+fl.Value)
			}
			if up.Name != tc.wantName || up.ContentType != tc.wantCT || up.Duration != tc.wantDur || strings.Join(fields, " ") != tc.wantFields || f.respFormat != tc.wantFormat {
				t.Errorf("got %s (%s) %v, fields %q, format %s", up.Name, up.ContentType, up.Duration, fields, f.respFormat)
			}
			got, _ := io.ReadAll(up.Reader())
			if int64(len(got)) != up.Size || !bytes.Equal(got, tc.parts[indexOfFile(tc.parts)].data) {
				t.Errorf("spooled file differs: %d bytes", len(got))
			}
		})
	}
}

func indexOfFile(ps []part) int {
	for i, p := range ps {
		if p.name == "file" {
			return i
		}
	}
	return -1
}

func TestTranscriptionFormInvalid(t *testing.T) {
	wav := testWAV(time.Second)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10")
	good := func(extra ...part) []part {
		return append([]part{fileOf("a.wav", "audio/wav", wav), field("model", "whisper-1")}, extra...)
	}
	tests := []struct {
		name   string
		parts  []part
		status int
		param  string
	}{
		{"no file", []part{field("model", "whisper-1")}, 400, "file"},
		{"file as a text field", []part{field("file", "abc"), field("model", "whisper-1")}, 400, "file"},
		{"no model", []part{fileOf("a.wav", "audio/wav", wav)}, 400, "model"},
		{"empty model", good(field("model", "")), 400, "model"},
		{"model twice", good(field("model", "other")), 400, "model"},
		{"bad response_format", good(field("response_format", "xml")), 400, "response_format"},
		{"language name", good(field("language", "english")), 400, "language"},
		{"language upper case", good(field("language", "EN")), 400, "language"},
		{"temperature above 1", good(field("temperature", "1.5")), 400, "temperature"},
		{"temperature negative", good(field("temperature", "-0.1")), 400, "temperature"},
		{"temperature NaN", good(field("temperature", "NaN")), 400, "temperature"},
		{"temperature text", good(field("temperature", "hot")), 400, "temperature"},
		{"granularities without verbose_json", good(field("timestamp_granularities[]", "word")), 400, "timestamp_granularities"},
		{"bad granularity", good(field("response_format", "verbose_json"), field("timestamp_granularities[]", "char")), 400, "timestamp_granularities"},
		{"stream", good(field("stream", "true")), 400, "stream"},
		{"png named wav", []part{fileOf("a.wav", "audio/wav", png), field("model", "m")}, 400, "file"},
		{"text file", []part{fileOf("notes.txt", "text/plain", []byte("just some words, no audio")), field("model", "m")}, 400, "file"},
		{"wav named mp3", []part{fileOf("a.mp3", "", wav), field("model", "m")}, 400, "file"},
		{"wav typed image/png", []part{fileOf("a.wav", "image/png", wav), field("model", "m")}, 400, "file"},
		{"wav typed audio/mpeg", []part{fileOf("a", "audio/mpeg", wav), field("model", "m")}, 400, "file"},
		{"empty file", []part{fileOf("a.wav", "audio/wav", nil), field("model", "m")}, 400, "file"},
		{"second file", good(part{name: "mask", filename: "m.wav", data: wav}), 400, "mask"},
		{"two files", good(fileOf("b.wav", "audio/wav", wav)), 400, "file"},
		{"long prompt", good(field("prompt", strings.Repeat("a", maxTranscribeField+1))), 400, "prompt"},
		{"binary prompt", good(field("prompt", "\xff\xfe")), 400, "prompt"},
		{"too many fields", good(func() []part {
			var ps []part
			for range maxTranscribeParts {
				ps = append(ps, field("include[]", "logprobs"))
			}
			return ps
		}()...), 400, "include[]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, ct := buildForm(t, tc.parts...)
			_, err := readForm(t, ct, bytes.NewReader(body), int64(len(body)))
			checkErr(t, err, tc.status, tc.param)
		})
	}
}

func checkErr(t *testing.T, err error, status int, param string) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != status || e.Param != param {
		t.Fatalf("got %v, want %d on %q", err, status, param)
	}
}

func TestTranscriptionFormFraming(t *testing.T) {
	body, ct := buildForm(t, fileOf("a.wav", "audio/wav", testWAV(time.Second)), field("model", "m"))
	for _, tc := range []struct {
		name, contentType string
		body              []byte
	}{
		{"json body", "application/json", []byte(`{"model":"m"}`)},
		{"no content type", "", body},
		{"no boundary", "multipart/form-data", body},
		{"wrong boundary", "multipart/form-data; boundary=nope", body},
		{"truncated", ct, body[:len(body)/2]},
		{"garbage", ct, []byte("this is not multipart at all")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readForm(t, tc.contentType, bytes.NewReader(tc.body), int64(len(tc.body)))
			checkErr(t, err, 400, "file")
		})
	}
}

// countingReader counts what the handler read of a body.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// An upload above 25 MB is refused while it streams: with a declared
// length at once, without one as soon as the file passes the limit.
func TestTranscriptionFormTooLarge(t *testing.T) {
	big := make([]byte, 26<<20)
	copy(big, testWAV(time.Second))
	body, ct := buildForm(t, field("model", "m"), fileOf("a.wav", "audio/wav", big), field("language", "en"))

	declared := &countingReader{r: bytes.NewReader(body)}
	_, err := readForm(t, ct, declared, int64(len(body)))
	checkErr(t, err, http.StatusRequestEntityTooLarge, "file")
	if declared.n != 0 {
		t.Errorf("read %d bytes of a body declared too large", declared.n)
	}

	chunked := &countingReader{r: bytes.NewReader(body)}
	_, err = readForm(t, ct, chunked, -1)
	checkErr(t, err, http.StatusRequestEntityTooLarge, "file")
	if chunked.n >= int64(len(body)) || chunked.n > maxAudioFile+formOverhead {
		t.Errorf("read %d of %d bytes before refusing", chunked.n, len(body))
	}

	// Exactly at the limit is fine (and spooled to disk).
	ok := make([]byte, maxAudioFile)
	copy(ok, testWAV(time.Second))
	body, ct = buildForm(t, field("model", "m"), fileOf("a.wav", "audio/wav", ok))
	f, err := readForm(t, ct, bytes.NewReader(body), -1)
	if err != nil || f.file.Size != maxAudioFile || f.file.file == nil {
		t.Fatalf("a file of exactly 25 MB: %v", err)
	}
}

func TestAudioCost(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		perSecond money.Micros
		ratio     int64
		d         time.Duration
		want      money.Micros
	}{
		{100, money.PPM, 1500 * ms, 150},
		{100, money.PPM, 8470000267, 847},  // 8470.000267 ms → 8471 ms → 847.1
		{100, money.PPM, 1000*ms + 1, 100}, // 1001 ms → 100.1
		{7, money.PPM, 1500 * ms, 11},      // 10.5 rounds half up
		{100, money.PPM / 2, 1500 * ms, 75},
		{100, money.PPM, 0, 0},
		{100, money.PPM, 4 * ms, 0}, // 0.4 micro
		{100, money.PPM, 5 * ms, 1}, // 0.5 micro rounds up
	}
	for _, tc := range tests {
		c := &lifecycle.Charge{Charge: &chg.Charge{Price: billing.ModelPrice{AudioPerSecond: tc.perSecond}, Ratio: tc.ratio}}
		got, err := audioCost(c, tc.d)
		if err != nil || got != tc.want {
			t.Errorf("%v at %v/s ×%d ppm: got %v, %v; want %v", tc.d, tc.perSecond, tc.ratio, got, err, tc.want)
		}
	}
	if got, _ := audioCost(&lifecycle.Charge{Charge: &chg.Charge{Price: billing.ModelPrice{Free: true, AudioPerSecond: 100}}}, time.Hour); got != 0 {
		t.Errorf("free model cost %v", got)
	}
	var nilCharge *lifecycle.Charge
	if got, err := audioCost(nilCharge, time.Hour); got != 0 || err != nil {
		t.Errorf("no billing: %v, %v", got, err)
	}
	huge := &lifecycle.Charge{Charge: &chg.Charge{Price: billing.ModelPrice{AudioPerSecond: money.Max}, Ratio: money.PPM}}
	_, err := audioCost(huge, 1000*time.Hour)
	checkErr(t, err, 400, "file")
}

func TestSizeBound(t *testing.T) {
	for size, want := range map[int64]time.Duration{0: 0, 1: time.Second, 1000: time.Second, 1001: 2 * time.Second, 25 << 20: 26215 * time.Second} {
		if got := sizeBound(size); got != want {
			t.Errorf("sizeBound(%d) = %v, want %v", size, got, want)
		}
	}
}

// FuzzTranscriptionForm checks that any body gets a form or a 400/413,
// never a panic or another status.
func FuzzTranscriptionForm(f *testing.F) {
	wav := testWAV(100 * time.Millisecond)
	seeds := [][]part{
		{fileOf("a.wav", "audio/wav", wav), field("model", "m")},
		{field("model", "m"), field("response_format", "verbose_json"), field("timestamp_granularities[]", "word"), fileOf("x", "", testMP3(3))},
		{field("file", "text"), field("temperature", "0.5"), field("language", "en")},
	}
	for _, s := range seeds {
		body, _ := buildForm(f, s...)
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		// The seeds' boundaries are random; find the one the body uses.
		boundary := "x"
		if i := bytes.IndexByte(body, '\r'); i > 2 && body[0] == '-' && body[1] == '-' {
			boundary = string(body[2:i])
		}
		r := httptest.NewRequest(http.MethodPost, "/v1/audio/transcriptions", bytes.NewReader(body))
		r.Header.Set("Content-Type", `multipart/form-data; boundary="`+strings.ReplaceAll(boundary, `"`, "")+`"`)
		form, err := readTranscriptionForm(httptest.NewRecorder(), r)
		if err == nil {
			if form.model == "" || form.file == nil || form.format == "" {
				t.Fatalf("accepted an incomplete form: %+v", form)
			}
			form.close()
			return
		}
		var e *apierr.Error
		if !errors.As(err, &e) || (e.Status != 400 && e.Status != 413) {
			t.Fatalf("error %v", err)
		}
	})
}
