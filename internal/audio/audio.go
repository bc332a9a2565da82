// Package audio recognises the audio containers the transcription endpoint
// accepts and reads how long a recording is from the file itself, without
// decoding any audio and without loading the file into memory:
//
//	WAV   the fmt and data chunks (fact for compressed WAV; RF64's ds64)
//	MP3   the Xing/Info or VBRI header when present, else every frame walked
//	FLAC  total samples and sample rate from STREAMINFO
//	OGG   the last page's granule position (Opus, Vorbis, FLAC, Speex)
//	MP4   mvhd's duration (M4A too), mehd for fragmented files
//	WebM  Info's Duration, else the last block's timestamp (best effort)
//
// The duration is what billing reserves against before the upstream call;
// the upstream's own figure, when it gives one, is what is charged.
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

// Duration reads how long the recording in r (size bytes, of format f) is.
// The error wraps ErrUnknownDuration when the file does not tell.
func Duration(r io.ReaderAt, size int64, f Format) (time.Duration, error) {
	c := newCursor(r, size)
	var (
		d   time.Duration
		err error
	)
	switch f {
	case WAV:
		d, err = wavDuration(c)
	case MP3:
		d, err = mp3Duration(c)
	case FLAC:
		d, err = flacDuration(c)
	case OGG:
		d, err = oggDuration(c)
	case MP4:
		d, err = mp4Duration(c)
	case WebM:
		d, err = webmDuration(c)
	default:
		return 0, fmt.Errorf("%w: format %q", ErrUnknownDuration, f)
	}
	if err != nil {
		if !errors.Is(err, ErrUnknownDuration) {
			err = fmt.Errorf("%w: %s: %w", ErrUnknownDuration, f, err)
		}
		return 0, err
	}
	if d < 0 || d > maxDuration {
		return 0, fmt.Errorf("%w: %s claims %v", ErrUnknownDuration, f, d)
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
