package app_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/oapitest"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
)

// speechWAV is a real 16 kHz mono PCM WAV of d: a 440 Hz tone.
func speechWAV(d time.Duration) []byte {
	n := int(d / (time.Second / 16000))
	data := make([]byte, 0, 2*n)
	for i := range n {
		data = binary.LittleEndian.AppendUint16(data, uint16(int16(6000*math.Sin(2*math.Pi*440*float64(i)/16000))))
	}
	b := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(36+len(data)))...)
	b = append(b, "WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00"...)
	b = binary.LittleEndian.AppendUint32(b, 16000)
	b = binary.LittleEndian.AppendUint32(b, 32000)
	b = append(b, "\x02\x00\x10\x00data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// startAudioGateway serves whisper-1 and scenario models through the fake
// OpenAI upstream, priced per second of audio.
func startAudioGateway(t *testing.T) *gateway {
	return startGateway(t, func(c *config.Config) {
		c.Providers[0].Models = append(c.Providers[0].Models, config.ModelRef{ID: "whisper-1", Upstream: "whisper-1"},
			config.ModelRef{ID: "whisper-400", Upstream: "err-400"}, config.ModelRef{ID: "whisper-401", Upstream: "err-401"},
			config.ModelRef{ID: "whisper-malformed", Upstream: "malformed"}, config.ModelRef{ID: "whisper-pricey", Upstream: "whisper-1"})
		audio, cheap, pricey := "audio", config.Amount(100), config.Amount(200*money.Unit)
		for _, id := range []string{"whisper-400", "whisper-401", "whisper-malformed"} {
			c.Models = append(c.Models, config.ModelConfig{ID: id, Modality: &audio, AudioPerSecond: &cheap})
		}
		c.Models = append(c.Models, config.ModelConfig{ID: "whisper-pricey", Modality: &audio, AudioPerSecond: &pricey})
		// The fake vendor parses multi-megabyte forms slowly under -race on
		// a busy machine: well over the harness's one-second idle timeout.
		c.Providers[0].IdleTimeout = config.Duration(30 * time.Second)
	})
}

// Every response_format through the official SDK, against a passed-through
// vendor (billed per second) and the demo (free): JSON formats with
// Audio.Transcriptions.New, text formats with Client.Post into a string,
// as the SDK documents (New cannot decode text/plain).
func TestTranscriptionsSDK(t *testing.T) {
	g := startAudioGateway(t)
	cl := g.client(g.keys["default"])
	ctx := context.Background()
	wav := speechWAV(1500 * time.Millisecond)
	params := func(model string, format oai.AudioResponseFormat) oai.AudioTranscriptionNewParams {
		p := oai.AudioTranscriptionNewParams{File: oai.File(bytes.NewReader(wav), "speech.wav", "audio/wav"), Model: model,
			Language: oai.String("en"), Prompt: oai.String("A tone."), Temperature: oai.Float(0.2), ResponseFormat: format}
		if format == oai.AudioResponseFormatVerboseJSON {
			p.TimestampGranularities = []string{"word", "segment"}
		}
		return p
	}
	tests := []struct {
		model  string
		format oai.AudioResponseFormat
		cost   string
	}{
		{"whisper-1", oai.AudioResponseFormatJSON, "0.000900"},         // usage.seconds 9
		{"whisper-1", oai.AudioResponseFormatVerboseJSON, "0.000847"},  // duration 8.470000267 s, by the ms
		{"whisper-1", oai.AudioResponseFormatDiarizedJSON, "0.004270"}, // duration 42.7 s
		{"whisper-1", oai.AudioResponseFormatText, "0.000150"},         // the file's 1.5 s
		{"whisper-1", oai.AudioResponseFormatSRT, "0.000150"},
		{"whisper-1", oai.AudioResponseFormatVTT, "0.000150"},
		{"demo-transcribe", oai.AudioResponseFormatJSON, "0.000000"},
		{"demo-transcribe", oai.AudioResponseFormatVerboseJSON, "0.000000"},
		{"demo-transcribe", oai.AudioResponseFormatDiarizedJSON, "0.000000"},
		{"demo-transcribe", oai.AudioResponseFormatText, "0.000000"},
		{"demo-transcribe", oai.AudioResponseFormatSRT, "0.000000"},
		{"demo-transcribe", oai.AudioResponseFormatVTT, "0.000000"},
	}
	for _, tc := range tests {
		t.Run(tc.model+" "+string(tc.format), func(t *testing.T) {
			var resp *http.Response
			jsonFormat := !strings.Contains("text srt vtt", string(tc.format))
			if jsonFormat {
				res, err := cl.Audio.Transcriptions.New(ctx, params(tc.model, tc.format), option.WithResponseInto(&resp))
				if err != nil {
					t.Fatal(err)
				}
				if res.Text == "" || (tc.format == oai.AudioResponseFormatVerboseJSON && (res.Duration == 0 || len(res.Segments) == 0 || len(res.Words) == 0)) {
					t.Errorf("answer %+v", res)
				}
				var raw []byte
				if err := cl.Post(ctx, "audio/transcriptions", params(tc.model, tc.format), &raw); err != nil {
					t.Fatal(err)
				}
				checkTranscriptionSpec(t, tc.format, raw)
			} else {
				var text string
				if err := cl.Post(ctx, "audio/transcriptions", params(tc.model, tc.format), &text, option.WithResponseInto(&resp)); err != nil {
					t.Fatal(err)
				}
				want := map[oai.AudioResponseFormat]string{"text": "openai/transcription.txt", "srt": "openai/transcription.srt", "vtt": "openai/transcription.vtt"}[tc.format]
				if tc.model == "whisper-1" && text != string(providertest.Fixture(t, want)) {
					t.Errorf("got %q, want the upstream's %s", text, want)
				}
				if tc.model == "demo-transcribe" && (!strings.Contains(text, "Hello from the modelgate demo.") ||
					(tc.format == "srt" && !strings.Contains(text, "00:00:00,750 --> 00:00:01,500")) ||
					(tc.format == "vtt" && !strings.HasPrefix(text, "WEBVTT\n"))) {
					t.Errorf("demo %s: %q", tc.format, text)
				}
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
					t.Errorf("Content-Type %q", ct)
				}
			}
			if got := resp.Header.Get("X-Modelgate-Cost"); got != tc.cost {
				t.Errorf("cost %s, want %s", got, tc.cost)
			}
		})
	}

	// The SDK's typed call cannot read a text answer; it says so.
	if _, err := cl.Audio.Transcriptions.New(ctx, params("demo-transcribe", oai.AudioResponseFormatText)); err == nil ||
		!strings.Contains(err.Error(), "expected destination type") {
		t.Errorf("New with response_format text: %v", err)
	}

	// What the vendor received: its model id, the fields, the file untouched.
	got := providertest.ReceivedTranscription(t, g.upstream.Last())
	if !bytes.Equal(got.File.Data, wav) || got.File.Filename != "speech.wav" || got.File.ContentType != "audio/wav" {
		t.Errorf("upstream file %s (%s), %d bytes", got.File.Filename, got.File.ContentType, len(got.File.Data))
	}
	for name, want := range map[string]string{"model": "whisper-1", "language": "en", "prompt": "A tone.", "temperature": "0.2", "response_format": "vtt"} {
		if v := got.Fields[name]; len(v) != 1 || v[0] != want {
			t.Errorf("upstream field %s = %q, want %q", name, v, want)
		}
	}

	// One record per request (two per JSON case: New and the raw Post), each with its cost.
	var costs []string
	estimated := 0
	for _, r := range g.usage() {
		if r.Endpoint != "audio.transcriptions" || r.Model != "whisper-1" {
			continue
		}
		if r.Status != 200 || r.Provider != "fake-openai" || r.UpstreamModel != "whisper-1" {
			t.Errorf("record %+v", r)
		}
		costs = append(costs, r.Cost.String())
		if r.Estimated {
			estimated++
		}
	}
	if len(costs) != 9 || estimated != 3 {
		t.Errorf("records: costs %v, %d estimated; want 9 records, the 3 text ones estimated", costs, estimated)
	}
}

// checkTranscriptionSpec validates a JSON answer against the official
// spec. The operation's oneOf cannot tell the formats apart (every
// verbose or diarized answer is also a valid plain json one, so
// CheckResponse always reports "matches more than one"), so each answer
// is checked against its own format's schema.
func checkTranscriptionSpec(t *testing.T, format oai.AudioResponseFormat, raw []byte) {
	t.Helper()
	schema := map[oai.AudioResponseFormat]string{"json": "CreateTranscriptionResponseJson",
		"verbose_json": "CreateTranscriptionResponseVerboseJson", "diarized_json": "CreateTranscriptionResponseDiarizedJson"}[format]
	oapitest.CheckComponent(t, schema, raw)
}

// tpart is one part of a hand-made form.
type tpart struct{ name, filename, contentType, value string }

func rawForm(parts ...tpart) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.filename != "" {
			h.Set("Content-Disposition", multipart.FileContentDisposition(p.name, p.filename))
			h.Set("Content-Type", p.contentType)
		} else {
			h.Set("Content-Disposition", `form-data; name="`+p.name+`"`)
		}
		w, _ := mw.CreatePart(h)
		_, _ = io.WriteString(w, p.value)
	}
	_ = mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// Bad input gets a 400 (or 413, 404, 429) naming the parameter, and the
// upstream never hears of it.
func TestTranscriptionsBadInput(t *testing.T) {
	g := startAudioGateway(t)
	wav := string(speechWAV(time.Second))
	file := tpart{"file", "a.wav", "audio/wav", wav}
	model := tpart{name: "model", value: "whisper-1"}
	form := func(ps ...tpart) func() ([]byte, string) { return func() ([]byte, string) { return rawForm(ps...) } }
	tests := []struct {
		name   string
		form   func() ([]byte, string)
		key    string
		status int
		param  string
	}{
		{"json body", func() ([]byte, string) { return []byte(`{"model":"whisper-1"}`), "application/json" }, "default", 400, "file"},
		{"no boundary", func() ([]byte, string) { b, _ := rawForm(file, model); return b, "multipart/form-data" }, "default", 400, "file"},
		{"file is text", form(tpart{name: "file", value: wav}, model), "default", 400, "file"},
		{"no file", form(model), "default", 400, "file"},
		{"no model", form(file), "default", 400, "model"},
		{"response_format", form(file, model, tpart{name: "response_format", value: "xml"}), "default", 400, "response_format"},
		{"language", form(file, model, tpart{name: "language", value: "English"}), "default", 400, "language"},
		{"temperature", form(file, model, tpart{name: "temperature", value: "2"}), "default", 400, "temperature"},
		{"granularities need verbose_json", form(file, model, tpart{name: "timestamp_granularities[]", value: "word"}), "default", 400, "timestamp_granularities"},
		{"extension lies", form(tpart{"file", "a.mp3", "", wav}, model), "default", 400, "file"},
		{"content type lies", form(tpart{"file", "a.wav", "image/png", wav}, model), "default", 400, "file"},
		{"not audio", form(tpart{"file", "a.wav", "audio/wav", "\x89PNG\r\n\x1a\n not a wav"}, model), "default", 400, "file"},
		{"unknown model", form(file, tpart{name: "model", value: "nope"}), "default", 404, "model"},
		{"outside the key's group", form(file, model), "basic", 404, "model"},
		{"chat model", form(file, tpart{name: "model", value: "gpt-4o-mini"}), "default", 400, "model"},
		{"cannot afford", form(file, tpart{name: "model", value: "whisper-pricey"}), "default", 429, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, ct := tc.form()
			resp, b := g.post("/v1/audio/transcriptions", ct, g.keys[tc.key], bytes.NewReader(body))
			checkAPIError(t, resp, b, tc.status, tc.param)
		})
	}
	if n := len(g.upstream.Received()); n != 0 {
		t.Errorf("the upstream received %d requests for bad input", n)
	}
	for _, r := range g.usage() {
		if r.Endpoint == "audio.transcriptions" && (r.Cost != 0 || r.Status < 400) {
			t.Errorf("record %+v", r)
		}
	}
}

func checkAPIError(t *testing.T, resp *http.Response, body []byte, status int, param string) {
	t.Helper()
	var e struct {
		Error struct {
			Param *string `json:"param"`
			Type  string  `json:"type"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != status || e.Error.Type == "" {
		t.Fatalf("got %d %s, want %d", resp.StatusCode, body, status)
	}
	got := ""
	if e.Error.Param != nil {
		got = *e.Error.Param
	}
	if got != param {
		t.Errorf("param %q, want %q: %s", got, param, body)
	}
}

// An upload past 25 MB is refused with 413 while it streams: a 200 MB
// chunked upload is cut off soon after the limit, and the official SDK's
// 26 MB upload (with a Content-Length) before its body is read. Nothing
// goes upstream.
func TestTranscriptionsUploadTooLarge(t *testing.T) {
	g := startAudioGateway(t)
	const huge = 200 << 20
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	var sent int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mw.WriteField("model", "whisper-1")
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", multipart.FileContentDisposition("file", "long.wav"))
		h.Set("Content-Type", "audio/wav")
		w, _ := mw.CreatePart(h)
		n, err := w.Write(speechWAV(time.Second))
		sent += int64(n)
		chunk := make([]byte, 64<<10)
		for err == nil && sent < huge {
			n, err = w.Write(chunk)
			sent += int64(n)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	resp, body := g.post("/v1/audio/transcriptions", mw.FormDataContentType(), g.keys["default"], pr) // chunked: no length
	checkAPIError(t, resp, body, http.StatusRequestEntityTooLarge, "file")
	_ = pr.Close()
	<-done
	if sent >= huge/2 {
		t.Errorf("the client could send %d MB before the gateway stopped it", sent>>20)
	}
	t.Logf("the gateway stopped a %d MB upload after %d MB", huge>>20, sent>>20)

	// The SDK sends a Content-Length: refused before the body is read.
	big := append(speechWAV(time.Second), make([]byte, 26<<20)...)
	cl := g.client(g.keys["default"])
	_, err := cl.Audio.Transcriptions.New(context.Background(),
		oai.AudioTranscriptionNewParams{File: oai.File(bytes.NewReader(big), "long.wav", "audio/wav"), Model: "whisper-1"})
	if e := apiError(t, err, http.StatusRequestEntityTooLarge, "request_too_large"); e.Param != "file" {
		t.Errorf("param %q", e.Param)
	}
	if n := len(g.upstream.Received()); n != 0 {
		t.Errorf("the upstream received %d requests", n)
	}
}

// Upstream failures are relayed as the client's errors, with nothing
// charged; an answer the gateway cannot read was billed by the vendor, so
// its reservation (the file's second) is; an unreadable file is billed by
// its size bound.
func TestTranscriptionsUpstream(t *testing.T) {
	g := startAudioGateway(t)
	wav := string(speechWAV(time.Second))
	for _, tc := range []struct {
		model  string
		status int
	}{{"whisper-400", 400}, {"whisper-401", 502}, {"whisper-malformed", 502}} {
		body, ct := rawForm(tpart{"file", "a.wav", "audio/wav", wav}, tpart{name: "model", value: tc.model})
		resp, b := g.post("/v1/audio/transcriptions", ct, g.keys["default"], bytes.NewReader(body))
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d %s", tc.model, resp.StatusCode, b)
		}
	}
	// A WebM whose duration cannot be read: 1234 bytes at 8 kbit/s → 2 s.
	webm := "\x1a\x45\xdf\xa3\x40\x08\x42\x82\x40\x04webm\x18\x53\x80\x67\x01\xff\xff\xff\xff\xff\xff\xff"
	webm += strings.Repeat("\x00", 1234-len(webm))
	body, ct := rawForm(tpart{"file", "rec.webm", "audio/webm", webm}, tpart{name: "model", value: "whisper-1"},
		tpart{name: "response_format", value: "text"})
	resp, b := g.post("/v1/audio/transcriptions", ct, g.keys["default"], bytes.NewReader(body))
	if resp.StatusCode != 200 || resp.Header.Get("X-Modelgate-Cost") != "0.000200" {
		t.Errorf("webm: %d cost %s: %s", resp.StatusCode, resp.Header.Get("X-Modelgate-Cost"), b)
	}
	var recs []store.UsageRecord
	for _, r := range g.usage() {
		if r.Endpoint == "audio.transcriptions" {
			recs = append(recs, r)
		}
	}
	if len(recs) != 4 || recs[0].Cost+recs[1].Cost+recs[2].Cost+recs[3].Cost != 300 {
		t.Errorf("records %+v", recs)
	}
	for _, r := range recs {
		if want := map[string]money.Micros{"whisper-malformed": 100, "whisper-1": 200}[r.Model]; r.Cost != want {
			t.Errorf("%s: charged %v, want %v", r.Model, r.Cost, want)
		}
	}
}
