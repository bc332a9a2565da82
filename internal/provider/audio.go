package provider

import (
	"context"
	"io"
	"time"
)

// Transcriber is the optional capability of turning speech into text
// (POST /v1/audio/transcriptions).
type Transcriber interface {
	Transcribe(ctx context.Context, req *TranscriptionRequest) (*TranscriptionResponse, error)
}

// AudioFile is an upload the gateway has already checked (size, format
// sniffed from its bytes) and spooled, so an adapter can stream it
// upstream, even more than once, without holding it in memory.
type AudioFile struct {
	// Name is the client's file name, with the extension of Format
	// appended when it had none the upstream would recognise.
	Name        string
	ContentType string // the client's when specific, else Format's canonical type
	Format      string // the container sniffed from the bytes: wav, mp3, flac, ogg, mp4, webm
	Size        int64
	Data        io.ReaderAt
	// Duration is the length read from the file; 0 when it could not be read.
	Duration time.Duration
}

// Reader returns a fresh reader over the whole file.
func (f *AudioFile) Reader() io.Reader { return io.NewSectionReader(f.Data, 0, f.Size) }

// TranscriptionRequest is a validated transcription request on its way
// upstream.
type TranscriptionRequest struct {
	PublicModel   string
	UpstreamModel string
	File          AudioFile
	// Fields are the client's text fields other than model, in order and
	// byte for byte, so OpenAI-compatible adapters forward fields the
	// gateway does not interpret (include[], chunking_strategy, ...).
	Fields []FormField

	// The fields the gateway validated, for adapters that translate.
	ResponseFormat         string // json, text, srt, vtt, verbose_json or diarized_json; never empty
	Language               string
	Prompt                 string
	Temperature            float64
	TimestampGranularities []string // word, segment
}

// TranscriptionResponse is the upstream's answer in OpenAI's wire format for
// the requested response_format: JSON for json, verbose_json and
// diarized_json, plain text for text, srt and vtt.
type TranscriptionResponse struct {
	Body        []byte
	ContentType string
	// Duration is the audio length the vendor reported (verbose_json's or
	// diarized_json's duration, or usage.seconds); 0 when it gave none.
	Duration time.Duration
}

// JSONFormat reports whether a transcription response_format answers JSON.
func JSONFormat(responseFormat string) bool {
	switch responseFormat {
	case "json", "verbose_json", "diarized_json":
		return true
	}
	return false
}
