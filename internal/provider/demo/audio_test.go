package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

func transcribe(t *testing.T, format string, d time.Duration, granularities ...string) *provider.TranscriptionResponse {
	t.Helper()
	req := &provider.TranscriptionRequest{PublicModel: "demo-transcribe", UpstreamModel: TranscribeModel, ResponseFormat: format,
		TimestampGranularities: granularities,
		File:                   provider.AudioFile{Name: "a.wav", Format: "wav", Size: 4, Data: bytes.NewReader([]byte("RIFF")), Duration: d}}
	res, err := New(nil).Transcribe(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestTranscribeFormats(t *testing.T) {
	d := 3 * time.Second
	text := strings.Join(transcript, " ")
	for _, tc := range []struct {
		format, contentType, want string
	}{
		{"text", "text/plain; charset=utf-8", text + "\n"},
		{"srt", "text/plain; charset=utf-8", "1\n00:00:00,000 --> 00:00:01,500\n" + transcript[0] + "\n\n2\n00:00:01,500 --> 00:00:03,000\n" + transcript[1] + "\n\n"},
		{"vtt", "text/plain; charset=utf-8", "WEBVTT\n\n00:00:00.000 --> 00:00:01.500\n" + transcript[0] + "\n\n00:00:01.500 --> 00:00:03.000\n" + transcript[1] + "\n\n"},
	} {
		res := transcribe(t, tc.format, d)
		if string(res.Body) != tc.want || res.ContentType != tc.contentType || res.Duration != d {
			t.Errorf("%s: got %q (%s, %v), want %q", tc.format, res.Body, res.ContentType, res.Duration, tc.want)
		}
	}

	var plain oai.Transcription
	res := transcribe(t, "json", d)
	if err := json.Unmarshal(res.Body, &plain); err != nil || plain.Text != text || plain.Usage.Seconds != 3 || res.ContentType != "application/json" {
		t.Errorf("json: %s (%v)", res.Body, err)
	}

	for _, tc := range []struct {
		granularities    []string
		segments, words  int
		unknownDurationS float64
	}{
		{nil, 2, 0, 0},
		{[]string{"segment"}, 2, 0, 0},
		{[]string{"word"}, 0, 20, 0},
		{[]string{"word", "segment"}, 2, 20, 0},
	} {
		var v oai.TranscriptionVerbose
		res := transcribe(t, "verbose_json", d, tc.granularities...)
		if err := json.Unmarshal(res.Body, &v); err != nil {
			t.Fatal(err)
		}
		if v.Duration != 3 || v.Text != text || len(v.Segments) != tc.segments || len(v.Words) != tc.words || v.Language != "english" {
			t.Errorf("verbose %v: duration %v, %d segments, %d words: %s", tc.granularities, v.Duration, len(v.Segments), len(v.Words), res.Body)
		}
		if tc.segments > 0 && (v.Segments[1].Start != 1.5 || v.Segments[1].End != 3) {
			t.Errorf("segment times %v..%v, want 1.5..3", v.Segments[1].Start, v.Segments[1].End)
		}
		if tc.words > 0 && (v.Words[0].Start != 0 || v.Words[len(v.Words)-1].End != 3) {
			t.Errorf("words span %v..%v, want 0..3", v.Words[0].Start, v.Words[len(v.Words)-1].End)
		}
	}

	var dz struct {
		Duration float64 `json:"duration"`
		Segments []struct {
			Speaker string `json:"speaker"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(transcribe(t, "diarized_json", d).Body, &dz); err != nil || dz.Duration != 3 || len(dz.Segments) != 2 || dz.Segments[0].Speaker != "A" {
		t.Errorf("diarized: %+v, %v", dz, err)
	}
}

// Without a readable duration the demo still answers, over one second.
func TestTranscribeUnknownDuration(t *testing.T) {
	var v oai.TranscriptionVerbose
	res := transcribe(t, "verbose_json", 0)
	if err := json.Unmarshal(res.Body, &v); err != nil || v.Duration != 1 || res.Duration != time.Second {
		t.Errorf("got %s, %v", res.Body, err)
	}
}

func TestTranscribeOtherModel(t *testing.T) {
	req := &provider.TranscriptionRequest{PublicModel: "demo-chat", UpstreamModel: "demo-chat", ResponseFormat: "json"}
	_, err := New(nil).Transcribe(context.Background(), req)
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Param != "model" {
		t.Fatalf("got %v, want 400 on model", err)
	}
}
