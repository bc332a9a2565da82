package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/contract"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
)

// Video requests: the spec's POST /v1/videos/generations (JSON) and
// OpenAI's POST /v1/videos (JSON or multipart), parsed into one shape.

const (
	maxVideoPrompt = 32000    // characters (OpenAI's maxLength)
	maxVideoImage  = 20 << 20 // bytes of an input image, uploaded or by data: URL
	maxVideoForm   = maxVideoImage + formOverhead
	defaultSora    = "sora-2" // OpenAI's default model for POST /v1/videos
)

// videoParams is a parsed video request. Seconds is 0 when the client sent
// none (the model's default applies).
type videoParams struct {
	Model, Prompt, Size string
	Seconds             int
	SecondsParam        string // "duration" (spec) or "seconds" (OpenAI)
	ImageParam          string // "image" (spec) or "input_reference" (OpenAI)
	ImageURL            string // http(s) or data: URL
	ImageFile           *provider.InputImage
}

// The members each front door's JSON body takes.
var (
	specVideoKeys   = []string{"model", "prompt", "duration", "async", "size", "image"} // POST /v1/videos/generations
	openaiVideoKeys = []string{"model", "prompt", "seconds", "size", "input_reference"} // POST /v1/videos (CreateVideoJsonBody)
)

// parseSpecVideo reads the spec's JSON body; model is required.
func parseSpecVideo(body []byte) (videoParams, *apierr.Error) {
	p, e := parseVideoJSON(body, specVideoKeys, videoParams{SecondsParam: "duration", ImageParam: "image"})
	switch {
	case e != nil:
		return p, e
	case p.Model == "":
		return p, missingParam("model")
	}
	return p, p.checkPrompt()
}

// parseOpenAIVideoJSON reads OpenAI's CreateVideoJsonBody; model
// defaults to sora-2, as OpenAI's does.
func parseOpenAIVideoJSON(body []byte) (videoParams, *apierr.Error) {
	p, e := parseVideoJSON(body, openaiVideoKeys, videoParams{SecondsParam: "seconds", ImageParam: "input_reference"})
	if e == nil {
		e = p.checkPrompt()
	}
	return p.openaiDefaults(), e
}

// parseVideoJSON reads the members of a JSON body that may name only keys:
// the spec's integer duration and image URL, or OpenAI's string seconds
// and input_reference object. Callers check what is required.
func parseVideoJSON(body []byte, keys []string, p videoParams) (videoParams, *apierr.Error) {
	if e := checkJSON(body); e != nil {
		return p, e
	}
	e := strictMembers(body, keys, func(key string, val []byte) *apierr.Error {
		var e *apierr.Error
		switch key {
		case "model":
			p.Model, _, e = str(val, key)
		case "prompt":
			p.Prompt, _, e = str(val, key)
		case "size":
			p.Size, _, e = str(val, key)
		case "duration":
			var v int64
			if v, _, e = integer(val, key, 1, 3600); e == nil {
				p.Seconds = int(v)
			}
		case "seconds":
			var s string
			if s, _, e = str(val, key); e == nil && s != "" {
				p.Seconds, e = secondsValue(s)
			}
		case "async":
			_, _, e = boolean(val, key) // tasks are always asynchronous
		case "image":
			p.ImageURL, _, e = str(val, key)
		case "input_reference":
			e = p.imageRef(val)
		}
		return e
	})
	return p, e
}

// imageRef reads {"image_url": "..."} (OpenAI's ImageRefParam); file ids
// name files the gateway does not keep.
func (p *videoParams) imageRef(val []byte) *apierr.Error {
	if isNull(val) {
		return nil
	}
	if kind(val) != "object" {
		return wrongType("input_reference", "an object", val)
	}
	return strictMembersAt(val, "input_reference", []string{"image_url", "file_id"}, func(key string, v []byte) *apierr.Error {
		var e *apierr.Error
		switch key {
		case "image_url":
			p.ImageURL, _, e = str(v, "input_reference.image_url")
		case "file_id":
			if !isNull(v) {
				e = apierr.Invalid("input_reference.file_id", "This gateway does not keep uploaded files; send the image as 'image_url' (an https or data: URL) or upload it in a multipart 'input_reference' field.")
			}
		}
		return e
	})
}

// readOpenAIVideoForm reads OpenAI's CreateVideoMultipartBody (what the
// official SDKs send).
func (h *Handler) readOpenAIVideoForm(w http.ResponseWriter, r *http.Request) (videoParams, error) {
	p := videoParams{SecondsParam: "seconds", ImageParam: "input_reference"}
	mr, err := openMultipart(w, r, maxVideoForm, "prompt")
	if err != nil {
		return p, err
	}
	seen := map[string]bool{}
	for parts := 0; ; parts++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p, multipartError(err, "", maxVideoImage)
		}
		name := part.FormName()
		if name == "input_reference[image_url]" { // how the SDKs encode {"image_url": ...} in a form
			name = "input_reference"
		}
		if parts == 16 {
			return p, apierr.Invalid(name, "The form has more than 16 parts.")
		}
		if !slices.Contains(openaiVideoKeys, name) {
			return p, unknownParam(name)
		}
		if seen[name] {
			return p, apierr.Invalid(name, "The form names '%s' more than once.", name)
		}
		seen[name] = true
		if name == "input_reference" && isFilePart(part) {
			data, err := readLimited(r.Context(), part, maxVideoImage)
			if err != nil {
				return p, multipartError(err, name, maxVideoImage)
			}
			img, e := videoInputImage(data, name)
			if e != nil {
				return p, e
			}
			p.ImageFile = img
			continue
		}
		v, err := readLimited(r.Context(), part, maxVideoPrompt*4+1)
		if err != nil {
			return p, multipartError(err, name, maxVideoPrompt*4)
		}
		if len(v) > maxVideoPrompt*4 || !utf8.Valid(v) {
			return p, apierr.Invalid(name, "'%s' must be UTF-8 text of at most %d characters.", name, maxVideoPrompt)
		}
		switch s := string(v); name {
		case "model":
			p.Model = s
		case "prompt":
			p.Prompt = s
		case "seconds":
			var e *apierr.Error
			if p.Seconds, e = secondsValue(s); e != nil {
				return p, e
			}
		case "size":
			p.Size = s
		case "input_reference":
			p.ImageURL = s // a URL sent as a text field
		}
	}
	if !seen["prompt"] {
		return p, missingParam("prompt")
	}
	if e := p.checkPrompt(); e != nil {
		return p, e
	}
	return p.openaiDefaults(), nil
}

// readLimited reads r whole, at most limit bytes (one more reports it).
func readLimited(_ context.Context, r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	return data, nil
}

func (p videoParams) openaiDefaults() videoParams {
	if p.Model == "" {
		p.Model = defaultSora
	}
	return p
}

// secondsValue reads OpenAI's seconds ("4", "8", "12": a string).
func secondsValue(s string) (int, *apierr.Error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 3600 {
		return 0, apierr.Broken(contract.CodeInvalidValue, "seconds", "Invalid value for 'seconds': '%s'. Send a whole number of seconds as a string, such as '4'.", s)
	}
	return n, nil
}

// checkPrompt refuses an empty prompt and one over maxVideoPrompt
// characters.
func (p videoParams) checkPrompt() *apierr.Error {
	switch n := utf8.RuneCountInString(p.Prompt); {
	case strings.TrimSpace(p.Prompt) == "":
		if p.Prompt == "" {
			return missingParam("prompt")
		}
		return apierr.Broken(contract.CodeInvalidValue, "prompt", "Invalid 'prompt': it must not be blank.")
	case n > maxVideoPrompt:
		return apierr.Broken(contract.CodeStringTooLong, "prompt",
			"Invalid 'prompt': string too long. Expected a string with maximum length %d, but got a string with length %d instead.", maxVideoPrompt, n)
	}
	return nil
}

// forModel checks seconds and size against the model and returns the
// seconds the upstream makes (and bills) and the size to ask for.
func (p videoParams) forModel(m catalog.Model) (upstreamSeconds int, size string, e *apierr.Error) {
	d := p.Seconds
	if d == 0 && len(m.VideoDurations) > 0 {
		d = m.VideoDurations[0]
	}
	up, ok := m.UpstreamSeconds(d)
	if !ok {
		return 0, "", apierr.Broken(contract.CodeInvalidValue, p.SecondsParam, "Invalid value for '%s': %d. The model '%s' makes videos of %s seconds.",
			p.SecondsParam, d, p.Model, durationList(m))
	}
	size = p.Size
	if size == "" && len(m.ImageSizes) > 0 {
		size = m.ImageSizes[0]
	}
	if !slices.Contains(m.ImageSizes, size) {
		return 0, "", apierr.Broken(contract.CodeInvalidValue, "size", "Invalid value for 'size': '%s'. The model '%s' makes videos of size '%s'.",
			size, p.Model, strings.Join(m.ImageSizes, "', '"))
	}
	return up, size, nil
}

// durationList names the durations a client may ask for, ascending.
func durationList(m catalog.Model) string {
	var ds []int
	ds = append(ds, m.VideoDurations...)
	for d := range m.VideoDurationMap {
		ds = append(ds, d)
	}
	slices.Sort(ds)
	ds = slices.Compact(ds)
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = strconv.Itoa(d)
	}
	return strings.Join(parts, ", ")
}

// strictMembers is members for endpoints that forward nothing raw: an
// unknown member is refused rather than silently dropped.
func strictMembers(raw []byte, known []string, fn func(key string, val []byte) *apierr.Error) *apierr.Error {
	return strictMembersAt(raw, "", known, fn)
}

func strictMembersAt(raw []byte, at string, known []string, fn func(key string, val []byte) *apierr.Error) *apierr.Error {
	if e := members(raw, at, known, fn); e != nil {
		return e
	}
	var bad *apierr.Error
	_ = eachKey(raw, func(key string) bool {
		if !slices.Contains(known, key) {
			bad = unknownParam(join(at, key))
		}
		return bad == nil
	})
	return bad
}

// missingParam is OpenAI's answer to a required member left out.
func missingParam(param string) *apierr.Error {
	return apierr.Broken(contract.CodeMissing, param, "Missing required parameter: '%s'.", param)
}

func unknownParam(param string) *apierr.Error {
	return apierr.Broken(apierr.CodeUnknownParameter, param, "Unrecognized request argument supplied: %s", param)
}

// dataImage decodes a data: URL holding a png, jpeg or webp image.
func dataImage(u, param string) (*provider.InputImage, *apierr.Error) {
	head, payload, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	mt, _, err := mime.ParseMediaType(strings.TrimSuffix(head, ";base64"))
	if !ok || err != nil || !strings.HasSuffix(head, ";base64") || !strings.HasPrefix(mt, "image/") {
		return nil, apierr.Invalid(param, "Invalid '%s': a data URL must look like data:image/png;base64,....", param)
	}
	if base64.StdEncoding.DecodedLen(len(payload)) > maxVideoImage {
		return nil, apierr.Invalid(param, "Invalid '%s': the image is larger than %d MB.", param, maxVideoImage>>20)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, apierr.Invalid(param, "Invalid '%s': the data URL is not valid base64.", param)
	}
	return videoInputImage(data, param)
}

// videoInputImage accepts png, jpeg and webp images, by their bytes.
func videoInputImage(data []byte, param string) (*provider.InputImage, *apierr.Error) {
	var mt string
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		mt = "image/png"
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		mt = "image/jpeg"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		mt = "image/webp"
	default:
		return nil, apierr.Invalid(param, "Invalid '%s': the image must be a PNG, JPEG or WebP file.", param)
	}
	return &provider.InputImage{Data: data, MIMEType: mt}, nil
}

// loadImage resolves the request's image: an upload, a data: URL, or an
// http(s) URL fetched through the SSRF guard.
func (h *Handler) loadImage(ctx context.Context, p *videoParams) (*provider.InputImage, error) {
	switch u := p.ImageURL; {
	case p.ImageFile != nil:
		return p.ImageFile, nil
	case u == "":
		return nil, nil
	case strings.HasPrefix(u, "data:"):
		img, e := dataImage(u, p.ImageParam)
		if e != nil {
			return nil, e
		}
		return img, nil
	case h.Videos == nil || h.Videos.Fetcher == nil:
		return nil, apierr.Invalid(p.ImageParam, "This gateway does not download images from URLs; send the image as a data: URL.")
	default:
		mt, data, err := h.Videos.Fetcher.Fetch(ctx, u)
		if err != nil {
			if ae, ok := err.(*apierr.Error); ok && ae.Status == http.StatusBadRequest {
				c := *ae
				c.Param = p.ImageParam
				return nil, &c
			}
			return nil, err
		}
		if mt == "image/gif" {
			return nil, apierr.Invalid(p.ImageParam, "Invalid '%s': the image must be a PNG, JPEG or WebP file.", p.ImageParam)
		}
		return &provider.InputImage{Data: data, MIMEType: mt}, nil
	}
}

// eachKey calls fn with every member name of the object raw.
func eachKey(raw []byte, fn func(key string) bool) error {
	return jsonx.Each(raw, func(k, _ []byte) bool { return fn(string(k)) })
}
