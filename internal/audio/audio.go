// Package audio recognises the audio containers the transcription endpoint
// accepts and reads how long a recording is from the file itself, without
// decoding any audio and without loading the file into memory.
//
// A file's headers are claims its sender wrote; its frames are what a
// decoder plays. Duration reads both and answers the larger, so a client
// cannot make a recording cheaper by writing a short length into its
// header, while a header that claims more than the frames hold is still
// honoured. Per container:
//
//	WAV   claim: fact's sample count, data bytes ÷ the byte rate field.
//	      content: every byte from the data chunk to the end of the file
//	      that is not a well-formed chunk, at the byte rate the frame
//	      layout implies (PCM, float, A-law, µ-law), the block layout
//	      (IMA and MS ADPCM, GSM), the MPEG frames walked, or 8 kbit/s
//	      for other codecs. The data size is trusted as far as the file goes.
//	MP3   claim: the Xing/Info or VBRI frame count. content: every MPEG
//	      audio frame walked (each at its own sample rate), resyncing past
//	      junk and tags anywhere in the file.
//	FLAC  claim: STREAMINFO's total samples. content: every frame header
//	      found (CRC-8 checked, consistent with the first), block sizes summed.
//	OGG   claim: the last granule position. content: every packet's
//	      duration from its own bytes (Opus TOC, Vorbis modes, FLAC frame
//	      headers, Speex frames), the last packet left out (it may be
//	      trimmed); streams side by side count once, chained ones add up.
//	MP4   claim: mvhd, mehd and the audio tracks' mdhd durations. content:
//	      the audio tracks' sample counts (sample tables and fragments) ×
//	      the codec's frame length (AAC, ALAC, MPEG audio, AMR, AC-3, Opus
//	      at its shortest frame), or the sample durations (stts, trun).
//	WebM  claim: Info's Duration and the last block's timestamp. content:
//	      every Opus or Vorbis frame in every block (lacing included),
//	      durations from the frames' own bytes.
//
// The duration is what billing reserves against before the upstream call,
// and what is charged when the upstream does not report its own figure.
package audio

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"time"
)

// Format is an audio container the gateway recognises.
type Format string

// The recognised formats; the zero Format is "not recognised".
const (
	WAV  Format = "wav"
	MP3  Format = "mp3" // MPEG audio (layer I, II or III): .mp3, .mpeg, .mpga
	FLAC Format = "flac"
	OGG  Format = "ogg"
	MP4  Format = "mp4" // ISO base media: .mp4, .m4a
	WebM Format = "webm"
)

// Ext is the file extension the upstream expects for f (with the dot).
func (f Format) Ext() string {
	if f == "" {
		return ""
	}
	return "." + string(f)
}

// ContentType is the canonical media type of f.
func (f Format) ContentType() string {
	switch f {
	case WAV:
		return "audio/wav"
	case MP3:
		return "audio/mpeg"
	case FLAC:
		return "audio/flac"
	case OGG:
		return "audio/ogg"
	case MP4:
		return "audio/mp4"
	case WebM:
		return "audio/webm"
	}
	return "application/octet-stream"
}

// extensions are the file extensions OpenAI's transcription API lists.
var extensions = map[string]Format{
	".flac": FLAC, ".mp3": MP3, ".mpeg": MP3, ".mpga": MP3, ".mp4": MP4, ".m4a": MP4,
	".ogg": OGG, ".wav": WAV, ".webm": WebM,
}

// FormatOfName is the format a file name's extension promises, or "" when
// the name has no extension from the supported list.
func FormatOfName(name string) Format {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || strings.ContainsAny(name[i:], `/\`) {
		return ""
	}
	return extensions[strings.ToLower(name[i:])]
}

// Extensions lists the supported extensions, for error messages.
const Extensions = "flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm"

// contentTypes maps the media types clients commonly send to a format.
var contentTypes = map[string]Format{
	"audio/wav": WAV, "audio/x-wav": WAV, "audio/wave": WAV, "audio/vnd.wave": WAV, "audio/x-pn-wav": WAV,
	"audio/mpeg": MP3, "audio/mp3": MP3, "audio/mpeg3": MP3, "audio/x-mpeg": MP3, "audio/x-mp3": MP3, "audio/mpga": MP3,
	"audio/flac": FLAC, "audio/x-flac": FLAC,
	"audio/ogg": OGG, "application/ogg": OGG, "audio/opus": OGG, "audio/vorbis": OGG, "video/ogg": OGG, "audio/x-ogg": OGG,
	"audio/mp4": MP4, "video/mp4": MP4, "audio/m4a": MP4, "audio/x-m4a": MP4, "audio/aac": MP4, "audio/x-aac": MP4,
	"video/quicktime": MP4,
	"audio/webm":      WebM, "video/webm": WebM,
}

// FormatOfContentType is the format a media type (parameters already
// removed, lower case) names, or "" for generic or unknown types.
func FormatOfContentType(mt string) Format { return contentTypes[mt] }

// ErrUnknownDuration means the file's length cannot be read from it (an
// unsupported variant, a header that says "unknown", a truncated file).
var ErrUnknownDuration = errors.New("audio: duration not readable from the file")

// maxDuration bounds what a header may claim, so arithmetic cannot overflow
// and an absurd claim counts as unreadable.
const maxDuration = 1000 * time.Hour

// reading is what a parser learnt about a file's length: what its headers
// claim and what its content (frames, packets, samples) shows. Either is 0
// when the file does not tell; a claim past maxDuration is dropped.
type reading struct{ claim, content time.Duration }

// Duration reads how long the recording in r (size bytes, of format f) is:
// the larger of what its headers claim and what its frames hold (see the
// package comment). The error wraps ErrUnknownDuration when the file tells
// neither.
func Duration(r io.ReaderAt, size int64, f Format) (time.Duration, error) {
	c := newCursor(r, size)
	var (
		rd  reading
		err error
	)
	switch f {
	case WAV:
		rd, err = wavDuration(c)
	case MP3:
		rd, err = mp3Duration(c)
	case FLAC:
		rd, err = flacDuration(c)
	case OGG:
		rd, err = oggDuration(c)
	case MP4:
		rd, err = mp4Duration(c)
	case WebM:
		rd, err = webmDuration(c)
	default:
		return 0, fmt.Errorf("%w: format %q", ErrUnknownDuration, f)
	}
	if err != nil {
		if !errors.Is(err, ErrUnknownDuration) {
			err = fmt.Errorf("%w: %s: %w", ErrUnknownDuration, f, err)
		}
		return 0, err
	}
	if rd.claim < 0 || rd.claim > maxDuration {
		rd.claim = 0 // an absurd claim says nothing
	}
	d := max(rd.claim, rd.content)
	if d <= 0 || d > maxDuration {
		return 0, fmt.Errorf("%w: %s: claim %v, content %v", ErrUnknownDuration, f, rd.claim, rd.content)
	}
	return d, nil
}

// Sniff recognises the container from the file's first bytes (skipping
// ID3v2 tags), or returns "" when it is none of the supported ones.
func Sniff(r io.ReaderAt, size int64) Format {
	c := newCursor(r, size)
	if b, err := c.peek(12); err == nil {
		switch {
		case (string(b[:4]) == "RIFF" || string(b[:4]) == "RF64") && string(b[8:12]) == "WAVE":
			return WAV
		case string(b[:4]) == "fLaC":
			return FLAC
		case string(b[:4]) == "OggS":
			return OGG
		case string(b[4:8]) == "ftyp":
			return MP4
		case string(b[:4]) == "\x1a\x45\xdf\xa3":
			if webmDocType(c) {
				return WebM
			}
			return ""
		}
	}
	if err := skipID3(c); err != nil {
		return ""
	}
	if b, err := c.peek(4); err == nil && string(b) == "fLaC" {
		return FLAC // an ID3 tag in front of FLAC: unusual but seen
	}
	// Without a tag the first frame must start the file; after one, some
	// padding is tolerated.
	var slack int64
	if c.pos > 0 {
		slack = 64 << 10
	}
	if _, ok := findFrame(c, slack); ok {
		return MP3
	}
	return ""
}

// claimed is seconds for a header's claim: an absurd one is no claim (0).
func claimed(n, rate uint64) time.Duration {
	d, err := seconds(n, rate)
	if err != nil {
		return 0
	}
	return d
}

// seconds converts n units of 1/rate second to a duration, refusing
// values past maxDuration (and so any overflow).
func seconds(n, rate uint64) (time.Duration, error) {
	if rate == 0 {
		return 0, fmt.Errorf("%w: zero rate", ErrUnknownDuration)
	}
	whole := n / rate
	if whole > uint64(maxDuration/time.Second) {
		return 0, fmt.Errorf("%w: %d units at %d/s is too long", ErrUnknownDuration, n, rate)
	}
	hi, lo := bits.Mul64(n%rate, uint64(time.Second))
	frac, _ := bits.Div64(hi, lo, rate) // hi < rate: the quotient is below 1e9
	return time.Duration(whole)*time.Second + time.Duration(frac), nil
}
