package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

// TranscribeModel is the demo model that serves audio transcriptions.
const TranscribeModel = "demo-transcribe"

var _ provider.Transcriber = (*Provider)(nil)

// transcript is the demo's fixed text, one entry per segment.
var transcript = []string{
	"Hello from the modelgate demo.",
	"This transcription was generated offline; point modelgate at a real provider to transcribe your audio.",
}

// Transcribe answers every response_format with the same fixed transcript,
// its segments spread over the file's duration (1 s when the gateway could
// not read it), so timestamps and billing line up with the upload.
func (p *Provider) Transcribe(_ context.Context, req *provider.TranscriptionRequest) (*provider.TranscriptionResponse, error) {
	if req.UpstreamModel != TranscribeModel {
		return nil, apierr.Invalid("model", "The model '%s' does not support audio transcription; use %s.", req.PublicModel, TranscribeModel)
	}
	d := req.File.Duration
	if d <= 0 {
		d = time.Second
	}
	t := newTimeline(d)
	var (
		body []byte
		err  error
		ct   = "text/plain; charset=utf-8"
	)
	switch req.ResponseFormat {
	case "text":
		body = []byte(strings.Join(transcript, " ") + "\n")
	case "srt":
		body = t.subtitles(true)
	case "vtt":
		body = t.subtitles(false)
	case "verbose_json":
		body, err = t.verbose(req)
		ct = "application/json"
	case "diarized_json":
		body, err = t.diarized()
		ct = "application/json"
	default:
		body, err = json.Marshal(map[string]any{"text": strings.Join(transcript, " "), "usage": t.usage()})
		ct = "application/json"
	}
	if err != nil {
		return nil, apierr.Internal(fmt.Errorf("demo: encode transcription: %w", err))
	}
	return &provider.TranscriptionResponse{Body: body, ContentType: ct, Duration: d}, nil
}

// timeline places the transcript's segments and words over the audio.
type timeline struct {
	dur   time.Duration
	spans [][2]time.Duration // per segment
}

func newTimeline(d time.Duration) *timeline {
	t := &timeline{dur: d}
	step := d / time.Duration(len(transcript))
	for i := range transcript {
		end := step * time.Duration(i+1)
		if i == len(transcript)-1 {
			end = d
		}
		t.spans = append(t.spans, [2]time.Duration{step * time.Duration(i), end})
	}
	return t
}

// secs renders a time in seconds, to the millisecond.
func secs(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

func (t *timeline) usage() map[string]any {
	return map[string]any{"type": "duration", "seconds": math.Ceil(t.dur.Seconds())}
}

// subtitles renders SRT (numbered cues, comma decimals) or WebVTT.
func (t *timeline) subtitles(srt bool) []byte {
	var b strings.Builder
	if !srt {
		b.WriteString("WEBVTT\n\n")
	}
	for i, text := range transcript {
		if srt {
			fmt.Fprintf(&b, "%d\n", i+1)
		}
		fmt.Fprintf(&b, "%s --> %s\n%s\n\n", stamp(t.spans[i][0], srt), stamp(t.spans[i][1], srt), text)
	}
	return []byte(b.String())
}

func stamp(d time.Duration, srt bool) string {
	ms := d.Milliseconds()
	sep := "."
	if srt {
		sep = ","
	}
	return fmt.Sprintf("%02d:%02d:%02d%s%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
}

type segment struct {
	ID               int     `json:"id"`
	Seek             int     `json:"seek"`
	Start            float64 `json:"start"`
	End              float64 `json:"end"`
	Text             string  `json:"text"`
	Tokens           []int   `json:"tokens"`
	Temperature      float64 `json:"temperature"`
	AvgLogprob       float64 `json:"avg_logprob"`
	CompressionRatio float64 `json:"compression_ratio"`
	NoSpeechProb     float64 `json:"no_speech_prob"`
}

type word struct {
	Word  string  `json:"word"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// verbose is the verbose_json answer: segments unless only word
// timestamps were asked for, words when they were.
func (t *timeline) verbose(req *provider.TranscriptionRequest) ([]byte, error) {
	lang := "english"
	if req.Language != "" {
		lang = req.Language
	}
	v := map[string]any{"task": "transcribe", "language": lang, "duration": secs(t.dur),
		"text": strings.Join(transcript, " "), "usage": t.usage()}
	g := req.TimestampGranularities
	if len(g) == 0 || slices.Contains(g, "segment") {
		segs := make([]segment, len(transcript))
		for i, text := range transcript {
			segs[i] = segment{ID: i, Start: secs(t.spans[i][0]), End: secs(t.spans[i][1]), Text: " " + text,
				Tokens: []int{}, Temperature: req.Temperature, AvgLogprob: -0.25, CompressionRatio: 1.2, NoSpeechProb: 0.01}
		}
		v["segments"] = segs
	}
	if slices.Contains(g, "word") {
		var words []word
		for i, text := range transcript {
			ws := strings.Fields(text)
			start, span := t.spans[i][0], t.spans[i][1]-t.spans[i][0]
			for j, w := range ws {
				words = append(words, word{Word: strings.Trim(w, ".,;"),
					Start: secs(start + span*time.Duration(j)/time.Duration(len(ws))),
					End:   secs(start + span*time.Duration(j+1)/time.Duration(len(ws)))})
			}
		}
		v["words"] = words
	}
	return json.Marshal(v)
}

// diarized is the diarized_json answer: one speaker, "A".
func (t *timeline) diarized() ([]byte, error) {
	type dseg struct {
		Type    string  `json:"type"`
		ID      string  `json:"id"`
		Start   float64 `json:"start"`
		End     float64 `json:"end"`
		Text    string  `json:"text"`
		Speaker string  `json:"speaker"`
	}
	segs := make([]dseg, len(transcript))
	lines := make([]string, len(transcript))
	for i, text := range transcript {
		segs[i] = dseg{Type: "transcript.text.segment", ID: fmt.Sprintf("seg_%03d", i+1), Start: secs(t.spans[i][0]),
			End: secs(t.spans[i][1]), Text: text, Speaker: "A"}
		lines[i] = "A: " + text
	}
	return json.Marshal(map[string]any{"task": "transcribe", "duration": secs(t.dur), "text": strings.Join(lines, "\n"),
		"segments": segs, "usage": t.usage()})
}
