package demo

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

func demoProvider() *Provider { return New(func() time.Time { return time.Unix(1700000000, 0) }) }

func decodePNG(t *testing.T, b64 string) image.Image {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestGenerateImages(t *testing.T) {
	p := demoProvider()
	for _, tc := range []struct {
		size string
		w    int
	}{{"", 1024}, {"256x256", 256}, {"512x512", 512}} {
		res, err := p.GenerateImages(context.Background(), &provider.ImageRequest{PublicModel: "d", UpstreamModel: ImageModel,
			Prompt: "a boat", N: 2, Size: tc.size})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Images) != 2 || res.Created != 1700000000 || res.Images[0].MIMEType != "image/png" {
			t.Fatalf("%s: %+v", tc.size, res)
		}
		if b := decodePNG(t, res.Images[0].B64JSON).Bounds(); b.Dx() != tc.w || b.Dy() != tc.w {
			t.Fatalf("%s: drew %v", tc.size, b)
		}
		if res.Images[0].B64JSON == res.Images[1].B64JSON {
			t.Fatalf("%s: the two images are the same", tc.size)
		}
	}
}

func TestGenerateImagesDeterministic(t *testing.T) {
	gen := func(prompt string) string {
		res, err := demoProvider().GenerateImages(context.Background(), &provider.ImageRequest{UpstreamModel: ImageModel,
			Prompt: prompt, N: 1, Size: "256x256"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Images[0].B64JSON
	}
	if gen("a") != gen("a") || gen("a") == gen("b") {
		t.Fatal("images must depend on the prompt, and only on it")
	}
}

func TestImageRefusals(t *testing.T) {
	p := demoProvider()
	for _, tc := range []struct {
		model, size, param string
	}{{"demo-chat", "", "model"}, {ImageModel, "1792x1024", "size"}, {ImageModel, "300x300", "size"}} {
		_, err := p.GenerateImages(context.Background(), &provider.ImageRequest{PublicModel: tc.model, UpstreamModel: tc.model, Prompt: "x", N: 1, Size: tc.size})
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != 400 || e.Param != tc.param {
			t.Errorf("%s %s: %v", tc.model, tc.size, err)
		}
		_, err = p.EditImages(context.Background(), &provider.ImageEditRequest{PublicModel: tc.model, UpstreamModel: tc.model, Prompt: "x", N: 1, Size: tc.size})
		if !errors.As(err, &e) || e.Status != 400 || e.Param != tc.param {
			t.Errorf("edit %s %s: %v", tc.model, tc.size, err)
		}
	}
}

// held makes a FormFile from bytes.
func held(field, ct string, b []byte) provider.FormFile {
	return provider.FormFile{Field: field, ContentType: ct, Size: int64(len(b)),
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

func solidPNG(t *testing.T, w, h int, c color.NRGBA, transparentLeft bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			px := c
			if transparentLeft && x < w/2 {
				px.A = 0
			}
			img.SetNRGBA(x, y, px)
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func TestEditImages(t *testing.T) {
	p := demoProvider()
	src := solidPNG(t, 32, 32, color.NRGBA{0, 0, 0, 255}, false)
	mask := solidPNG(t, 32, 32, color.NRGBA{0, 0, 0, 255}, true)
	res, err := p.EditImages(context.Background(), &provider.ImageEditRequest{UpstreamModel: ImageModel, Prompt: "tint", N: 2,
		Size: "256x256", Files: []provider.FormFile{held("image", "image/png", src), held("mask", "image/png", mask)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Images) != 2 || res.Images[0].B64JSON == res.Images[1].B64JSON {
		t.Fatal("two different tints wanted")
	}
	img := decodePNG(t, res.Images[0].B64JSON)
	left := color.NRGBAModel.Convert(img.At(5, 5)).(color.NRGBA)
	right := color.NRGBAModel.Convert(img.At(250, 5)).(color.NRGBA)
	if img.Bounds().Dx() != 256 || right != (color.NRGBA{0, 0, 0, 255}) || left == right {
		t.Fatalf("size %v, left %v, right %v", img.Bounds(), left, right)
	}
	// A source the demo cannot decode (webp) gets a drawn image instead.
	webp := []byte("RIFF\x00\x00\x00\x00WEBPVP8L")
	if res, err := p.EditImages(context.Background(), &provider.ImageEditRequest{UpstreamModel: ImageModel, Prompt: "x", N: 1,
		Size: "256x256", Files: []provider.FormFile{held("image", "image/webp", webp)}}); err != nil || len(res.Images) != 1 {
		t.Fatalf("webp: %v", err)
	}
	// A broken PNG is the client's 400.
	_, err = p.EditImages(context.Background(), &provider.ImageEditRequest{UpstreamModel: ImageModel, Prompt: "x", N: 1,
		Files: []provider.FormFile{held("image", "image/png", []byte("\x89PNG\r\n\x1a\nbroken"))}})
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Param != "image" {
		t.Fatalf("broken png: %v", err)
	}
}
