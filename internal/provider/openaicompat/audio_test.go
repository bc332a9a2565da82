package openaicompat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// audioRequest is a transcription request carrying data as a WAV file.
func audioRequest(upstream, format string, data []byte, fields ...provider.FormField) *provider.TranscriptionRequest {
	if format != "" {
		fields = append(fields, provider.FormField{Name: "response_format", Value: format})
	} else {
		format = "json"
	}
	return &provider.TranscriptionRequest{PublicModel: "whisper", UpstreamModel: upstream, ResponseFormat: format, Fields: fields,
		File: provider.AudioFile{Name: "talk.wav", ContentType: "audio/wav", Format: "wav", Size: int64(len(data)),
			Data: bytes.NewReader(data), Duration: 1500 * time.Millisecond}}
}

func TestTranscribePassThrough(t *testing.T) {
	data := bytes.Repeat([]byte("RIFF-ish audio bytes "), 5000)
	tests := []struct {
		format, contentType, fixture string
		want                         time.Duration
	}{
		{"", "application/json", "openai/transcription.json", 9 * time.Second}, // usage.seconds
		{"json", "application/json", "openai/transcription.json", 9 * time.Second},
		{"verbose_json", "application/json", "openai/transcription_verbose.json", 8470000267 * time.Nanosecond},
		{"diarized_json", "application/json", "openai/transcription_diarized.json", 42700 * time.Millisecond},
		{"text", "text/plain; charset=utf-8", "openai/transcription.txt", 0},
		{"srt", "text/plain; charset=utf-8", "openai/transcription.srt", 0},
		{"vtt", "text/plain; charset=utf-8", "openai/transcription.vtt", 0},
	}
	for _, tc := range tests {
		t.Run("format "+tc.format, func(t *testing.T) {
			f := providertest.NewOpenAI(t)
			c := newClient(t, f)
			req := audioRequest("whisper-1", tc.format, data, provider.FormField{Name: "language", Value: "en"},
				provider.FormField{Name: "include[]", Value: "logprobs"}, provider.FormField{Name: "x_vendor", Value: "kept"})
			res, err := c.Transcribe(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.Body, providertest.Fixture(t, tc.fixture)) || res.ContentType != tc.contentType || res.Duration != tc.want {
				t.Errorf("got %q (%s), duration %v; want the fixture %s (%s), %v", res.Body, res.ContentType, res.Duration, tc.fixture, tc.contentType, tc.want)
			}
			rec := f.Last()
			got := providertest.ReceivedTranscription(t, rec)
			if rec.Model != "whisper-1" || rec.Header.Get("Authorization") != "Bearer sk-up" {
				t.Errorf("model %q, auth %q", rec.Model, rec.Header.Get("Authorization"))
			}
			if !bytes.Equal(got.File.Data, data) || got.File.Filename != "talk.wav" || got.File.ContentType != "audio/wav" {
				t.Errorf("file %s (%s), %d bytes; want talk.wav (audio/wav), %d bytes", got.File.Filename, got.File.ContentType, len(got.File.Data), len(data))
			}
			for name, want := range map[string]string{"model": "whisper-1", "language": "en", "include[]": "logprobs", "x_vendor": "kept"} {
				if v := got.Fields[name]; len(v) != 1 || v[0] != want {
					t.Errorf("field %s = %q, want %q", name, v, want)
				}
			}
			if tc.format == "json" || tc.format == "verbose_json" {
				var v oai.AudioTranscriptionNewResponseUnion
				if err := json.Unmarshal(res.Body, &v); err != nil || v.Text == "" {
					t.Errorf("the SDK cannot read the answer: %v", err)
				}
			}
		})
	}
}

func TestTranscribeErrors(t *testing.T) {
	data := []byte("audio")
	tests := []struct {
		upstream string
		status   int
		code     string
	}{
		{"err-400", 400, "string_above_max_length"},
		{"err-401", 502, apierr.CodeUpstreamAuth},
		{"err-429", 429, apierr.CodeRateLimitExceeded},
		{"err-500", 502, apierr.CodeUpstreamError},
		{"malformed", 502, apierr.CodeBadUpstreamResponse},
	}
	for _, tc := range tests {
		t.Run(tc.upstream, func(t *testing.T) {
			f := providertest.NewOpenAI(t)
			_, err := newClient(t, f).Transcribe(context.Background(), audioRequest(tc.upstream, "json", data))
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != tc.status || e.Code != tc.code {
				t.Fatalf("got %v, want %d %s", err, tc.status, tc.code)
			}
		})
	}
}

// An upstream that answers before reading the upload must not leave the
// writer stuck.
func TestTranscribeEarlyAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = w.Write([]byte(`{"error":{"message":"Maximum content size limit exceeded.","type":"invalid_request_error","param":null,"code":null}}`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{Name: "early", BaseURL: srv.URL + "/v1", Timeout: 5 * time.Second, IdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Transcribe(context.Background(), audioRequest("whisper-1", "json", make([]byte, 8<<20)))
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != http.StatusRequestEntityTooLarge || !strings.Contains(e.Message, "Maximum content size") {
		t.Fatalf("got %v, want the upstream's 413", err)
	}
}

func TestTranscribeAzure(t *testing.T) {
	f := providertest.NewOpenAI(t)
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery+" key="+r.Header.Get("Api-Key"))
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{Name: "azure", BaseURL: srv.URL, APIKey: "az-key", Azure: true, Timeout: 2 * time.Second, IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Transcribe(context.Background(), audioRequest("my-whisper", "verbose_json", []byte("audio")))
	if err != nil {
		t.Fatal(err)
	}
	want := "/openai/deployments/my-whisper/audio/transcriptions?api-version=2024-10-21 key=az-key"
	if len(seen) != 1 || seen[0] != want || res.Duration == 0 {
		t.Errorf("requests %q, duration %v; want %q", seen, res.Duration, want)
	}
	if got := providertest.ReceivedTranscription(t, f.Last()); got.Fields["model"][0] != "my-whisper" {
		t.Errorf("model field %q, want the deployment", got.Fields["model"])
	}
}

func TestTranscriptionDuration(t *testing.T) {
	tests := []struct {
		body string
		want time.Duration
		bad  bool
	}{
		{`{"text":"x","duration":1.25}`, 1250 * time.Millisecond, false},
		{`{"text":"x","duration":2,"usage":{"type":"duration","seconds":3}}`, 2 * time.Second, false},
		{`{"text":"x","usage":{"type":"duration","seconds":3}}`, 3 * time.Second, false},
		{`{"text":"x","usage":{"type":"tokens","input_tokens":3,"output_tokens":1,"total_tokens":4}}`, 0, false},
		{`{"text":"x","duration":-1}`, 0, false},
		{`{"text":"x"}`, 0, false},
		{`{"text":"x","duration":"long"}`, 0, true},
		{`{"text":`, 0, true},
		{`hello`, 0, true},
	}
	for _, tc := range tests {
		got, err := transcriptionDuration([]byte(tc.body))
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v (error %v)", tc.body, got, err, tc.want, tc.bad)
		}
	}
}
