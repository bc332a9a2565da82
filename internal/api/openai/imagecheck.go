package openai

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of uploads
	_ "image/png"
	"mime"
	"path"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
)

// uploadTypes are the image types an edit accepts, with their extension.
var uploadTypes = map[string]string{"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}

// extTypes maps file extensions to the type they claim.
var extTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif"}

// sniffImage reads the real type of an upload from its first bytes.
func sniffImage(head []byte) string {
	switch {
	case len(head) >= 8 && string(head[:8]) == "\x89PNG\r\n\x1a\n":
		return "image/png"
	case len(head) >= 3 && string(head[:3]) == "\xff\xd8\xff":
		return "image/jpeg"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "image/webp"
	case len(head) >= 6 && (string(head[:6]) == "GIF87a" || string(head[:6]) == "GIF89a"):
		return "image/gif"
	}
	return ""
}

// checkType sniffs the file and refuses what is not a png, jpeg or webp
// image, and a file whose declared Content-Type or filename extension
// names another image type than its bytes (a lying content type).
// application/octet-stream and no type at all are not claims.
func (hf *heldImage) checkType() error {
	param := formParam(hf.field)
	hf.sniffed = sniffImage(hf.head)
	if hf.sniffed == "" || uploadTypes[hf.sniffed] == "" {
		return apierr.Invalid(param, "The file '%s' in '%s' is not a png, jpeg or webp image.", hf.filename, hf.field)
	}
	if hf.declared != "" {
		mt, _, err := mime.ParseMediaType(hf.declared)
		if err != nil {
			return apierr.Invalid(param, "The file '%s' in '%s' has an invalid Content-Type %q.", hf.filename, hf.field, hf.declared)
		}
		if mt == "image/jpg" {
			mt = "image/jpeg"
		}
		if mt != "application/octet-stream" && mt != hf.sniffed {
			return apierr.Invalid(param, "The file '%s' in '%s' is declared as %s but its content is %s.", hf.filename, hf.field, mt, hf.sniffed)
		}
	}
	if claimed := extTypes[strings.ToLower(path.Ext(hf.filename))]; claimed != "" && claimed != hf.sniffed {
		return apierr.Invalid(param, "The file '%s' in '%s' is named as %s but its content is %s.", hf.filename, hf.field, claimed, hf.sniffed)
	}
	return nil
}

// upstreamName is the filename sent upstream: the client's, with the
// extension of the real type (vendors read the type from it).
func (hf *heldImage) upstreamName() string {
	name := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' || r == '/' {
			return '_'
		}
		return r
	}, hf.filename)
	base := strings.TrimSuffix(name, path.Ext(name))
	if base == "" || base == "anonymous_file" {
		base = formParam(hf.field)
	}
	return base + "." + uploadTypes[hf.sniffed]
}

// dims reads an image's width and height from its header.
func (hf *heldImage) dims() (int, int, error) {
	if hf.sniffed == "image/webp" {
		return webpDims(hf.head)
	}
	r, err := hf.open()
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	cfg, _, err := image.DecodeConfig(r)
	if err != nil {
		return 0, 0, err
	}
	return cfg.Width, cfg.Height, nil
}

// webpDims reads the canvas size of a WebP file from its first chunk
// (VP8 lossy, VP8L lossless, or VP8X extended).
func webpDims(b []byte) (int, int, error) {
	if len(b) < 30 {
		return 0, 0, errors.New("webp header too short")
	}
	switch string(b[12:16]) {
	case "VP8 ":
		if b[23] != 0x9d || b[24] != 0x01 || b[25] != 0x2a {
			return 0, 0, errors.New("bad VP8 start code")
		}
		return int(binary.LittleEndian.Uint16(b[26:]) & 0x3fff), int(binary.LittleEndian.Uint16(b[28:]) & 0x3fff), nil
	case "VP8L":
		if b[20] != 0x2f {
			return 0, 0, errors.New("bad VP8L signature")
		}
		v := binary.LittleEndian.Uint32(b[21:])
		return int(v&0x3fff) + 1, int(v>>14&0x3fff) + 1, nil
	case "VP8X":
		w := int(b[24]) | int(b[25])<<8 | int(b[26])<<16
		h := int(b[27]) | int(b[28])<<8 | int(b[29])<<16
		return w + 1, h + 1, nil
	}
	return 0, 0, fmt.Errorf("unknown webp chunk %q", b[12:16])
}

// editRules are a model's limits on edit uploads.
type editRules struct {
	maxImages  int
	maxFile    int64
	types      []string // accepted image types
	square     bool     // the image must be square
	maxPrompt  int      // characters
	maskPNGMax int64    // the mask: a PNG under this size
}

// editRulesFor returns the documented rules: DALL·E 2 takes one square PNG
// under 4 MB and a 1000-character prompt; the GPT image models (and, by
// default, other vendors' models) up to 16 png, webp or jpeg files under
// 50 MB and 32000 characters.
func editRulesFor(public, upstream string) editRules {
	if isModel(public, upstream, "dall-e-2") {
		return editRules{maxImages: 1, maxFile: 4 << 20, types: []string{"image/png"}, square: true, maxPrompt: 1000, maskPNGMax: 4 << 20}
	}
	return editRules{maxImages: 16, maxFile: maxEditFile, types: []string{"image/png", "image/webp", "image/jpeg"},
		maxPrompt: 32000, maskPNGMax: 4 << 20}
}

// checkFiles applies the model's rules to the held images and mask.
func (f *editForm) checkFiles(public string, rules editRules) error {
	var images []*heldImage
	var mask *heldImage
	for _, hf := range f.files {
		switch hf.field {
		case "image", "image[]":
			images = append(images, hf)
		case "mask":
			if mask != nil {
				return apierr.Invalid("mask", "Only one mask may be sent.")
			}
			mask = hf
		}
	}
	switch {
	case len(images) == 0:
		return missing("image")
	case len(images) > rules.maxImages:
		return apierr.Invalid("image", "The model '%s' takes at most %d image(s); got %d.", public, rules.maxImages, len(images))
	}
	var w0, h0 int
	for i, hf := range images {
		if !slices.Contains(rules.types, hf.sniffed) {
			return apierr.Invalid("image", "The model '%s' takes %s images; '%s' is %s.", public, imageTypeList(rules.types), hf.filename, hf.sniffed)
		}
		if hf.size >= rules.maxFile {
			return imageUploadTooLarge("image", rules.maxFile)
		}
		w, h, err := hf.dims()
		if err != nil {
			return apierr.Invalid("image", "The image '%s' could not be read: %v.", hf.filename, err)
		}
		if rules.square && w != h {
			return apierr.Invalid("image", "The model '%s' takes square images; '%s' is %dx%d.", public, hf.filename, w, h)
		}
		if i == 0 {
			w0, h0 = w, h
		}
	}
	if mask == nil {
		return nil
	}
	if mask.sniffed != "image/png" {
		return apierr.Invalid("mask", "The mask must be a PNG image; '%s' is %s.", mask.filename, mask.sniffed)
	}
	if mask.size >= rules.maskPNGMax {
		return imageUploadTooLarge("mask", rules.maskPNGMax)
	}
	w, h, err := mask.dims()
	if err != nil {
		return apierr.Invalid("mask", "The mask '%s' could not be read: %v.", mask.filename, err)
	}
	if w != w0 || h != h0 {
		return apierr.Invalid("mask", "The mask must have the same dimensions as the image: the mask is %dx%d, the image %dx%d.", w, h, w0, h0)
	}
	return nil
}

func imageTypeList(types []string) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = strings.TrimPrefix(t, "image/")
	}
	return strings.Join(names, ", ")
}
