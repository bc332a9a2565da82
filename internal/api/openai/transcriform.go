package openai

import (
	"context"
	"errors"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/audio"
	"github.com/modelgate/modelgate/internal/contract"
	"github.com/modelgate/modelgate/internal/provider"
)

// Limits of a transcription upload.
const (
	maxAudioFile       = 25 << 20 // OpenAI's 25 MB, read as MiB
	maxTranscribeField = 64 << 10 // one text field
	maxTranscribeParts = 64
)

// transcribeFormats are the response_format values of the official API.
var transcribeFormats = []string{"json", "text", "srt", "verbose_json", "vtt", "diarized_json"}

// transcriptionForm is a validated transcription request.
type transcriptionForm struct {
	model         string
	file          *spooled
	format        audio.Format  // sniffed from the bytes
	duration      time.Duration // read from the file; 0 unknown
	fields        []provider.FormField
	respFormat    string
	language      string
	prompt        string
	temperature   float64
	granularities []string
}

// close frees the spooled upload.
func (f *transcriptionForm) close() {
	if f != nil {
		f.file.Close()
	}
}

// readTranscriptionForm reads and validates the whole form. The file is
// spooled once (refused with 413 as soon as it passes 25 MB) and checked:
// its bytes must be one of the supported containers, agreeing with its
// extension and Content-Type when those name one.
func readTranscriptionForm(w http.ResponseWriter, r *http.Request) (*transcriptionForm, error) {
	mr, err := openMultipart(w, r, maxAudioFile+formOverhead, "file")
	if err != nil {
		return nil, err
	}
	f := &transcriptionForm{}
	seen := map[string]bool{}
	for n := 0; ; n++ {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.close()
			return nil, multipartError(err, "file", maxAudioFile)
		}
		if err := f.part(r.Context(), p, n, seen); err != nil {
			f.close()
			return nil, err
		}
	}
	if err := f.check(); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// part reads the n-th part of the form.
func (f *transcriptionForm) part(ctx context.Context, p *multipart.Part, n int, seen map[string]bool) error {
	name := p.FormName()
	if n >= maxTranscribeParts {
		return apierr.Invalid(name, "The form has more than %d fields.", maxTranscribeParts)
	}
	if name == "" {
		return apierr.Invalid("", "A multipart/form-data part has no field name.")
	}
	single := name != "timestamp_granularities" && !strings.HasSuffix(name, "[]")
	if single && seen[name] {
		return apierr.Invalid(name, "The '%s' field is given more than once.", name)
	}
	seen[name] = true
	if name == "file" {
		if !isFilePart(p) {
			return apierr.Invalid("file", "The 'file' field must be a file upload (a form part with a filename), not a text value.")
		}
		s, err := spoolPart(ctx, p, "file", maxAudioFile)
		if err != nil {
			return err
		}
		f.file = s
		return nil
	}
	if isFilePart(p) {
		return apierr.Invalid(name, "Only the 'file' field may be a file upload; '%s' is a file.", name)
	}
	v, err := readFormValue(ctx, p, maxTranscribeField)
	if err != nil {
		return multipartError(err, name, maxAudioFile)
	}
	return f.field(name, v)
}

// field checks one text field and keeps it for the upstream.
func (f *transcriptionForm) field(name, v string) error {
	if e := contract.Field(contract.Transcriptions, name, v); e != nil {
		return e
	}
	switch name {
	case "model":
		if v == "" || len(v) > 256 {
			return apierr.Invalid("model", "Invalid 'model': must be a model id of 1 to 256 characters.")
		}
		f.model = v
		return nil // the upstream gets its own id
	case "language":
		if !isLanguageCode(v) {
			return apierr.Invalid("language", "Invalid 'language': '%s'. Give the audio's language as a two-letter ISO-639-1 code such as 'en'.", v)
		}
		f.language = v
	case "prompt":
		f.prompt = v
	case "response_format":
		if !slices.Contains(transcribeFormats, v) {
			return oneOf("response_format", v, transcribeFormats...)
		}
		f.respFormat = v
	case "temperature":
		t, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(t) || t < 0 || t > 1 {
			return apierr.Invalid("temperature", "Invalid 'temperature': '%s'. It must be a number between 0 and 1.", v)
		}
		f.temperature = t
	case "timestamp_granularities[]", "timestamp_granularities":
		if v != "word" && v != "segment" {
			return oneOf("timestamp_granularities", v, "word", "segment")
		}
		f.granularities = append(f.granularities, v)
	case "stream":
		if b, err := strconv.ParseBool(v); err != nil || b {
			return apierr.Invalid("stream", "Streaming transcriptions are not supported by this gateway; leave 'stream' out or set it to false.")
		}
	}
	f.fields = append(f.fields, provider.FormField{Name: name, Value: v})
	return nil
}

// check validates the form as a whole and the file's format.
func (f *transcriptionForm) check() error {
	if f.file == nil {
		return missing("file")
	}
	if f.model == "" {
		return missing("model")
	}
	counts := map[string]int{"file": 1, "model": 1} // both checked above
	for _, fl := range f.fields {
		counts[formParam(fl.Name)]++
	}
	if e := contract.Form(contract.Transcriptions, counts); e != nil {
		return e
	}
	if f.respFormat == "" {
		f.respFormat = "json"
	}
	if len(f.granularities) > 0 && f.respFormat != "verbose_json" {
		return apierr.Invalid("timestamp_granularities", "'timestamp_granularities' requires response_format 'verbose_json' (got '%s').", f.respFormat)
	}
	if f.file.Size == 0 {
		return apierr.Invalid("file", "The audio file is empty.")
	}
	data := f.file.ReaderAt()
	f.format = audio.Sniff(data, f.file.Size)
	if f.format == "" {
		return apierr.Invalid("file", "The file is not audio in a supported format. Supported formats: %s.", audio.Extensions)
	}
	if ext := audio.FormatOfName(f.file.Name); ext != "" && ext != f.format {
		return apierr.Invalid("file", "The file name '%s' says %s, but its content is %s audio.", f.file.Name, ext, f.format)
	}
	if ct := f.file.ContentType; ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		mt = strings.ToLower(mt)
		named := audio.FormatOfContentType(mt)
		generic := mt == "application/octet-stream" || mt == "binary/octet-stream"
		media := strings.HasPrefix(mt, "audio/") || strings.HasPrefix(mt, "video/")
		if err != nil || (named != "" && named != f.format) || (named == "" && !generic && !media) {
			return apierr.Invalid("file", "The file's Content-Type '%s' does not match its content, which is %s audio.", ct, f.format)
		}
	}
	if d, err := audio.Duration(data, f.file.Size, f.format); err == nil {
		f.duration = d
	}
	return nil
}

// upstreamFile is the file as adapters see it: named with an extension of
// its real format (OpenAI identifies the format by it) and typed with the
// client's media type only when that names the same format.
func (f *transcriptionForm) upstreamFile() provider.AudioFile {
	name := f.file.Name
	if audio.FormatOfName(name) != f.format {
		name += f.format.Ext()
	}
	ct := f.format.ContentType()
	if mt, _, err := mime.ParseMediaType(f.file.ContentType); err == nil && audio.FormatOfContentType(strings.ToLower(mt)) == f.format {
		ct = f.file.ContentType
	}
	return provider.AudioFile{Name: name, ContentType: ct, Format: string(f.format), Size: f.file.Size,
		Data: f.file.ReaderAt(), Duration: f.duration}
}

// isLanguageCode reports whether s has the shape of an ISO-639-1 code.
func isLanguageCode(s string) bool {
	return len(s) == 2 && s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z'
}
