package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/oapitest"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// testPNG is a w×h PNG of one colour; transparent makes its left half
// fully transparent (a mask).
func testPNG(t *testing.T, w, h int, transparent bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			a := uint8(255)
			if transparent && x < w/2 {
				a = 0
			}
			img.SetNRGBA(x, y, color.NRGBA{10, 200, 30, a})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testWebP is the header of a lossless w×h WebP (enough for the checks;
// the fake upstream does not decode it).
func testWebP(w, h int) []byte {
	v := uint32(w-1) | uint32(h-1)<<14
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f")
	b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	return append(b, make([]byte, 64)...)
}

// sentForm is the multipart form the fake upstream received last.
func sentForm(t *testing.T, f *providertest.OpenAI) []providertest.FormPart {
	t.Helper()
	last := f.Last()
	parts, err := providertest.ParseForm(last.Header.Get("Content-Type"), last.Body)
	if err != nil {
		t.Fatal(err)
	}
	return parts
}

func fieldValue(parts []providertest.FormPart, name string) (string, bool) {
	for _, p := range parts {
		if p.Field == name && p.Filename == "" {
			return string(p.Data), true
		}
	}
	return "", false
}

// The official SDK's multipart edits reach every kind of vendor: passed
// through to OpenAI-compatible upstreams (streamed, files re-sent as held,
// typed by their content), answered by the demo, refused for Gemini.
func TestImageEdit(t *testing.T) {
	g := startImageGateway(t)
	c := g.client(g.keys["default"])
	img, mask := testPNG(t, 64, 64, false), testPNG(t, 64, 64, true)

	t.Run("dall-e-2 image and mask", func(t *testing.T) {
		var resp *http.Response
		res, err := c.Images.Edit(context.Background(), oai.ImageEditParams{
			Image:  oai.ImageEditParamsImageUnion{OfFile: bytes.NewReader(img)},
			Mask:   oai.File(bytes.NewReader(mask), "mask.png", "image/png"),
			Prompt: "make it blue", Model: "dall-e-2", N: oai.Int(2), Size: "256x256", ResponseFormat: "b64_json",
		}, option.WithResponseInto(&resp))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Data) != 2 || res.Data[0].B64JSON == "" || resp.Header.Get("X-Modelgate-Cost") != "0.032000" {
			t.Fatalf("answer %+v cost %s", res.Data, resp.Header.Get("X-Modelgate-Cost"))
		}
		parts := sentForm(t, g.upstream)
		for name, want := range map[string]string{"model": "dall-e-2", "prompt": "make it blue", "n": "2", "size": "256x256", "response_format": "b64_json"} {
			if got, _ := fieldValue(parts, name); got != want {
				t.Errorf("upstream field %s = %q, want %q", name, got, want)
			}
		}
		files := map[string]providertest.FormPart{}
		for _, p := range parts {
			if p.Filename != "" {
				files[p.Field] = p
			}
		}
		// The SDK sent anonymous_file as application/octet-stream; the
		// vendor gets the real type and a matching name.
		if f := files["image"]; !bytes.Equal(f.Data, img) || f.ContentType != "image/png" || f.Filename != "image.png" {
			t.Errorf("image part %q %s, %d bytes", f.Filename, f.ContentType, len(f.Data))
		}
		if f := files["mask"]; !bytes.Equal(f.Data, mask) || f.ContentType != "image/png" || f.Filename != "mask.png" {
			t.Errorf("mask part %q %s, %d bytes", f.Filename, f.ContentType, len(f.Data))
		}
	})

	t.Run("gpt-image-1 several images as url", func(t *testing.T) {
		res, err := c.Images.Edit(context.Background(), oai.ImageEditParams{
			Image: oai.ImageEditParamsImageUnion{OfFileArray: []io.Reader{
				oai.File(bytes.NewReader(img), "a.png", "image/png"),
				oai.File(bytes.NewReader(testJPEG(t, 64, 32)), "b.jpg", "image/jpeg"),
				oai.File(bytes.NewReader(testWebP(64, 64)), "c.webp", "image/webp")}},
			Mask:   oai.File(bytes.NewReader(mask), "mask.png", "image/png"),
			Prompt: "combine them", Model: "gpt-image-1", ResponseFormat: "url",
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Data) != 1 || !strings.HasPrefix(res.Data[0].URL, g.URL+"/v1/images/files/") {
			t.Fatalf("answer %+v", res.Data)
		}
		if r, b := fetch(t, res.Data[0].URL); r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("fetch %d %s", r.StatusCode, b)
		}
		parts := sentForm(t, g.upstream)
		if _, ok := fieldValue(parts, "response_format"); ok {
			t.Error("response_format reached a GPT image model")
		}
		var types []string
		for _, p := range parts {
			if p.Field == "image[]" {
				types = append(types, p.ContentType)
			}
		}
		if strings.Join(types, ",") != "image/png,image/jpeg,image/webp" {
			t.Errorf("image[] parts %v", types)
		}
	})

	t.Run("demo tints where the mask is transparent", func(t *testing.T) {
		res, err := c.Images.Edit(context.Background(), oai.ImageEditParams{
			Image: oai.ImageEditParamsImageUnion{OfFile: bytes.NewReader(img)}, Mask: bytes.NewReader(mask),
			Prompt: "tint", Model: "demo-image", Size: "256x256", ResponseFormat: "url",
		})
		if err != nil {
			t.Fatal(err)
		}
		r, b := fetch(t, res.Data[0].URL)
		if r.StatusCode != 200 {
			t.Fatalf("fetch %d", r.StatusCode)
		}
		out, err := png.Decode(bytes.NewReader(b))
		if err != nil || out.Bounds().Dx() != 256 {
			t.Fatalf("decode: %v", err)
		}
		left := color.NRGBAModel.Convert(out.At(10, 10)).(color.NRGBA)
		right := color.NRGBAModel.Convert(out.At(250, 10)).(color.NRGBA)
		if right != (color.NRGBA{10, 200, 30, 255}) || left == right {
			t.Fatalf("left %v right %v: only the masked (left) half should change", left, right)
		}
	})

	t.Run("gemini has no edits", func(t *testing.T) {
		_, err := c.Images.Edit(context.Background(), oai.ImageEditParams{
			Image: oai.ImageEditParamsImageUnion{OfFile: bytes.NewReader(img)}, Prompt: "x", Model: "imagen-3.0-generate-002",
		})
		if e := apiError(t, err, 400, "invalid_request_error"); e.Param != "model" || !strings.Contains(e.Message, "does not support image edits") {
			t.Fatalf("%+v", e)
		}
	})

	t.Run("b64 answer decodes", func(t *testing.T) {
		res, err := c.Images.Edit(context.Background(), oai.ImageEditParams{
			Image: oai.ImageEditParamsImageUnion{OfFile: bytes.NewReader(img)}, Prompt: "tint", Model: "demo-image",
			Size: "512x512", ResponseFormat: "b64_json",
		})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := base64.StdEncoding.DecodeString(res.Data[0].B64JSON)
		if w, _ := pngSize(t, b); w != 512 {
			t.Fatalf("width %d", w)
		}
	})
}

// Edit answers match the official spec as sent.
func TestImageEditAnswersMatchSpec(t *testing.T) {
	g := startImageGateway(t)
	img := testPNG(t, 64, 64, false)
	for _, model := range []string{"dall-e-2", "gpt-image-1", "demo-image"} {
		ct, body := multipartBody(t, filePart("image", "a.png", "image/png", img), textPart("prompt", "x"),
			textPart("model", model), textPart("size", "256x256"), textPart("response_format", "url"))
		if model == "gpt-image-1" {
			ct, body = multipartBody(t, filePart("image[]", "a.png", "", img), textPart("prompt", "x"), textPart("model", model))
		}
		resp, b := g.post("/v1/images/edits", ct, g.keys["default"], bytes.NewReader(body))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", model, resp.StatusCode, b)
		}
		oapitest.CheckResponse(t, http.MethodPost, "/v1/images/edits", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}
