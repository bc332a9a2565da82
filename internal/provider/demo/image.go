package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // edits accept gif sources
	_ "image/jpeg"
	"image/png"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

var (
	_ provider.ImageGenerator = (*Provider)(nil)
	_ provider.ImageEditor    = (*Provider)(nil)
)

// ImageModel is the demo model that draws images.
const ImageModel = "demo-image"

// ImageSizes are the sizes the demo draws (the catalog lists the same).
var ImageSizes = []string{"256x256", "512x512", "1024x1024"}

// maxEditPixels bounds the source images the demo decodes.
const maxEditPixels = 4096 * 4096

// GenerateImages draws n PNGs determined by the prompt and the image's
// index: a diagonal gradient between two colours with a checker pattern.
func (p *Provider) GenerateImages(_ context.Context, req *provider.ImageRequest) (*provider.ImageResponse, error) {
	w, h, err := demoSize(req.PublicModel, req.UpstreamModel, req.Size)
	if err != nil {
		return nil, err
	}
	res := &provider.ImageResponse{Created: p.now().Unix(), Size: fmt.Sprintf("%dx%d", w, h)}
	for i := range max(req.N, 1) {
		img := draw(seed(req.Prompt, i), w, h)
		b64, err := encodePNG(img)
		if err != nil {
			return nil, err
		}
		res.Images = append(res.Images, provider.GeneratedImage{B64JSON: b64, MIMEType: "image/png"})
	}
	return res, nil
}

// EditImages answers with tinted copies of the first image, scaled to the
// size asked for; with a mask, only where the mask is transparent (where
// OpenAI's models would edit). Sources the demo cannot decode (webp) are
// replaced by a drawn image.
func (p *Provider) EditImages(_ context.Context, req *provider.ImageEditRequest) (*provider.ImageResponse, error) {
	w, h, err := demoSize(req.PublicModel, req.UpstreamModel, req.Size)
	if err != nil {
		return nil, err
	}
	var src, mask image.Image
	for _, f := range req.Files {
		switch {
		case src == nil && (f.Field == "image" || f.Field == "image[]"):
			src, err = decodeFile(f)
		case mask == nil && f.Field == "mask":
			mask, err = decodeFile(f)
		}
		if err != nil {
			return nil, err
		}
	}
	res := &provider.ImageResponse{Created: p.now().Unix(), Size: fmt.Sprintf("%dx%d", w, h)}
	for i := range max(req.N, 1) {
		s := seed(req.Prompt, i)
		var img *image.NRGBA
		if src == nil {
			img = draw(s, w, h)
		} else {
			img = tint(src, mask, w, h, color.NRGBA{s[0], s[1], s[2], 255})
		}
		b64, err := encodePNG(img)
		if err != nil {
			return nil, err
		}
		res.Images = append(res.Images, provider.GeneratedImage{B64JSON: b64, MIMEType: "image/png"})
	}
	return res, nil
}

// demoSize reads the size to draw: 1024x1024 by default, else one of ImageSizes.
func demoSize(public, upstream, size string) (int, int, error) {
	if upstream != ImageModel {
		return 0, 0, apierr.Invalid("model", "The model '%s' does not support images.", public)
	}
	if size == "" || size == "auto" {
		size = "1024x1024"
	}
	if !slices.Contains(ImageSizes, size) {
		return 0, 0, apierr.Invalid("size", "Invalid value for 'size': '%s'. Supported values for the model '%s' are: '%s'.",
			size, public, strings.Join(ImageSizes, "', '"))
	}
	ws, hs, _ := strings.Cut(size, "x")
	w, _ := strconv.Atoi(ws)
	h, _ := strconv.Atoi(hs)
	return w, h, nil
}

// seed is the 32 bytes every pixel choice of image i of a prompt comes from.
func seed(prompt string, i int) [32]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(i))
	return sha256.Sum256(append(b[:], prompt...))
}

// draw paints the demo picture for seed s.
func draw(s [32]byte, w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	a, b := [3]int{int(s[0]), int(s[1]), int(s[2])}, [3]int{int(s[3]), int(s[4]), int(s[5])}
	cell := 16 << (s[6] % 3) // 16, 32 or 64 pixels
	span := w + h - 2
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride:]
		for x := 0; x < w; x++ {
			t := x + y
			shade := 0
			if (x/cell+y/cell)%2 == 0 {
				shade = 24
			}
			o := row[4*x : 4*x+4 : 4*x+4]
			for c := 0; c < 3; c++ {
				v := (a[c]*(span-t)+b[c]*t)/max(span, 1) - shade
				o[c] = uint8(max(v, 0))
			}
			o[3] = 255
		}
	}
	return img
}

// tint scales src to w×h (nearest pixel) and blends half of c into it,
// only where mask (scaled alike) is transparent when there is a mask.
func tint(src, mask image.Image, w, h int, c color.NRGBA) *image.NRGBA {
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	sb := src.Bounds()
	var mb image.Rectangle
	if mask != nil {
		mb = mask.Bounds()
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			px := color.NRGBAModel.Convert(src.At(sb.Min.X+x*sb.Dx()/w, sb.Min.Y+y*sb.Dy()/h)).(color.NRGBA)
			edit := true
			if mask != nil {
				_, _, _, ma := mask.At(mb.Min.X+x*mb.Dx()/w, mb.Min.Y+y*mb.Dy()/h).RGBA()
				edit = ma == 0
			}
			if edit {
				px = color.NRGBA{uint8((int(px.R) + int(c.R)) / 2), uint8((int(px.G) + int(c.G)) / 2), uint8((int(px.B) + int(c.B)) / 2), 255}
			}
			out.SetNRGBA(x, y, px)
		}
	}
	return out
}

// decodeFile decodes a held png, jpeg or gif upload; nil for other types.
func decodeFile(f provider.FormFile) (image.Image, error) {
	switch f.ContentType {
	case "image/png", "image/jpeg", "image/gif":
	default:
		return nil, nil
	}
	open := func() (io.ReadCloser, error) {
		r, err := f.Open()
		if err != nil {
			return nil, apierr.Internal(fmt.Errorf("demo: open %s: %w", f.Field, err))
		}
		return r, nil
	}
	r, err := open()
	if err != nil {
		return nil, err
	}
	cfg, _, err := image.DecodeConfig(r)
	r.Close()
	if err != nil {
		return nil, apierr.Invalid(f.Field, "The demo could not read the image in '%s': %v.", f.Field, err)
	}
	if cfg.Width*cfg.Height > maxEditPixels {
		return nil, apierr.Invalid(f.Field, "The demo edits images of at most %d pixels; '%s' has %dx%d.", maxEditPixels, f.Field, cfg.Width, cfg.Height)
	}
	if r, err = open(); err != nil {
		return nil, err
	}
	defer r.Close()
	img, _, err := image.Decode(r)
	if err != nil {
		return nil, apierr.Invalid(f.Field, "The demo could not read the image in '%s': %v.", f.Field, err)
	}
	return img, nil
}

func encodePNG(img image.Image) (string, error) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, img); err != nil {
		return "", fmt.Errorf("demo: encode png: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}
