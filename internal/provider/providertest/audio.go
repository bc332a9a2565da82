package providertest

import (
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"testing"
)

// transcriptionExts are the file extensions OpenAI accepts; the fake, like
// OpenAI, identifies the format by the file name.
var transcriptionExts = map[string]bool{".flac": true, ".mp3": true, ".mp4": true, ".mpeg": true, ".mpga": true,
	".m4a": true, ".ogg": true, ".wav": true, ".webm": true}

// transcriptionFixtures are the recorded answers by response_format.
var transcriptionFixtures = map[string]struct{ name, contentType string }{
	"json":          {"openai/transcription.json", "application/json"},
	"verbose_json":  {"openai/transcription_verbose.json", "application/json"},
	"diarized_json": {"openai/transcription_diarized.json", "application/json"},
	"text":          {"openai/transcription.txt", "text/plain; charset=utf-8"},
	"srt":           {"openai/transcription.srt", "text/plain; charset=utf-8"},
	"vtt":           {"openai/transcription.vtt", "text/plain; charset=utf-8"},
}

// serveTranscription answers POST /v1/audio/transcriptions (and Azure's
// /openai/deployments/{id}/audio/transcriptions) and reports whether r was
// one. The form must come with an exact Content-Length, a model and a file
// whose name has an extension OpenAI accepts. Scenarios by model (Azure:
// the deployment): err-NNN as for chat; malformed answers broken JSON;
// anything else the recorded answer for response_format.
func (f *OpenAI) serveTranscription(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/audio/transcriptions") {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	model, format, err := transcriptionRequest(r, body)
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":null}}`, "fake upstream: "+err.Error())
		return true
	}
	if dep, ok := strings.CutPrefix(r.URL.Path, "/openai/deployments/"); ok {
		model = strings.TrimSuffix(dep, "/audio/transcriptions")
	}
	f.add(Received{Header: r.Header.Clone(), Body: body, Model: model})
	if code, ok := strings.CutPrefix(model, "err-"); ok {
		f.fail(w, code)
		return true
	}
	fx, ok := transcriptionFixtures[format]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"Invalid response_format %q","type":"invalid_request_error","param":"response_format","code":null}}`, format)
		return true
	}
	w.Header().Set("Content-Type", fx.contentType)
	if model == "malformed" {
		_, _ = io.WriteString(w, `{"text":"cut off`)
		return true
	}
	_, _ = w.Write(Fixture(f.t, fx.name))
	return true
}

// transcriptionRequest checks a transcription form's framing and returns
// its model and response_format (json when absent).
func transcriptionRequest(r *http.Request, body []byte) (model, format string, err error) {
	if r.ContentLength != int64(len(body)) {
		return "", "", fmt.Errorf("Content-Length %d, body %d bytes", r.ContentLength, len(body))
	}
	parts, err := ParseForm(r.Header.Get("Content-Type"), body)
	if err != nil {
		return "", "", err
	}
	format = "json"
	files := 0
	for _, p := range parts {
		switch p.Field {
		case "file":
			if p.Filename == "" || !transcriptionExts[strings.ToLower(path.Ext(p.Filename))] {
				return "", "", fmt.Errorf("unrecognized file format for file name %q", p.Filename)
			}
			files++
		case "model":
			model = string(p.Data)
		case "response_format":
			format = string(p.Data)
		}
	}
	if files != 1 || model == "" {
		return "", "", fmt.Errorf("want one file and a model, got %d files and model %q", files, model)
	}
	return model, format, nil
}

// Transcription is a transcription form the fake received, parsed.
type Transcription struct {
	Fields map[string][]string // text fields by name, in order
	File   FormPart
}

// ReceivedTranscription parses the form of a recorded transcription
// request; the test fails when it is not one.
func ReceivedTranscription(t testing.TB, rec Received) Transcription {
	t.Helper()
	parts, err := ParseForm(rec.Header.Get("Content-Type"), rec.Body)
	if err != nil {
		t.Fatalf("not a transcription form: %v", err)
	}
	tr := Transcription{Fields: map[string][]string{}}
	for _, p := range parts {
		if p.Field == "file" {
			tr.File = p
			continue
		}
		tr.Fields[p.Field] = append(tr.Fields[p.Field], string(p.Data))
	}
	return tr
}
