package openai

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/lifecycle"
)

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSniffAndDims(t *testing.T) {
	webpLossless := append([]byte("RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f"), 0x3f, 0xc0, 0x0f, 0x00)
	webpLossless = append(webpLossless, make([]byte, 16)...) // 64x64: (63) | (63<<14)
	webpLossy := []byte("RIFF\x00\x00\x00\x00WEBPVP8 \x00\x00\x00\x00\x00\x00\x00\x9d\x01\x2a\x20\x03\x58\x02")
	webpExt := []byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00\xff\x03\x00\xff\x01\x00")
	tests := []struct {
		name   string
		head   []byte
		typ    string
		w, h   int
		dimErr bool
	}{
		{"png", pngBytes(t, 30, 20), "image/png", 30, 20, false},
		{"webp lossless", webpLossless, "image/webp", 64, 64, false},
		{"webp lossy", webpLossy, "image/webp", 800, 600, false},
		{"webp extended", webpExt, "image/webp", 1024, 512, false},
		{"webp cut short", webpLossy[:20], "image/webp", 0, 0, true},
		{"gif", []byte("GIF89a...."), "image/gif", 0, 0, true},
		{"text", []byte("hello"), "", 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hf := &heldImage{head: tt.head, mem: tt.head, size: int64(len(tt.head))}
			if hf.sniffed = sniffImage(tt.head); hf.sniffed != tt.typ {
				t.Fatalf("sniffed %q", hf.sniffed)
			}
			if tt.typ == "" || tt.typ == "image/gif" {
				return
			}
			w, h, err := hf.dims()
			if (err != nil) != tt.dimErr || w != tt.w || h != tt.h {
				t.Fatalf("dims %dx%d %v", w, h, err)
			}
		})
	}
}

func TestCheckType(t *testing.T) {
	png := pngBytes(t, 2, 2)
	tests := []struct {
		name, filename, declared string
		head                     []byte
		ok                       bool
	}{
		{"octet-stream", "anonymous_file", "application/octet-stream", png, true},
		{"no type", "x", "", png, true},
		{"right type", "a.PNG", "image/png", png, true},
		{"jpg spelled image/jpg", "a.jpeg", "image/jpg", []byte("\xff\xd8\xff\xe0"), true},
		{"lying type", "a", "image/jpeg", png, false},
		{"lying extension", "a.webp", "", png, false},
		{"text as image", "a.png", "image/png", []byte("GIF89a not allowed"), false},
		{"bad content type", "a", "image/", png, false},
	}
	for _, tt := range tests {
		hf := &heldImage{field: "image[]", filename: tt.filename, declared: tt.declared, head: tt.head}
		err := hf.checkType()
		if (err == nil) != tt.ok {
			t.Errorf("%s: %v", tt.name, err)
		}
		if err != nil && apierr.From(err).Param != "image" {
			t.Errorf("%s: param %q", tt.name, apierr.From(err).Param)
		}
	}
}

func TestUpstreamName(t *testing.T) {
	for _, tc := range []struct{ field, name, typ, want string }{
		{"image", "anonymous_file", "image/png", "image.png"},
		{"image[]", "", "image/webp", "image.webp"},
		{"mask", "cat.photo.jpeg", "image/jpeg", "cat.photo.jpg"},
		{"image", "we\"ird\r\n.png", "image/png", "we_ird__.png"},
	} {
		hf := &heldImage{field: tc.field, filename: tc.name, sniffed: tc.typ}
		if got := hf.upstreamName(); got != tc.want {
			t.Errorf("%+v: %q", tc, got)
		}
	}
}

// Files beyond the request's memory budget wait in temporary files that
// read back exactly and are removed when the form is closed.
func TestEditFormSpills(t *testing.T) {
	small := pngBytes(t, 8, 8)
	large := append(append([]byte{}, small...), bytes.Repeat([]byte{7}, editMemBudget)...)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("prompt", "x")
	for _, data := range [][]byte{small, large, small} {
		w, _ := mw.CreateFormFile("image[]", "a.png")
		_, _ = w.Write(data)
	}
	_ = mw.Close()
	r := httptest.NewRequest(http.MethodPost, "/v1/images/edits", &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	h := &Handler{Core: &lifecycle.Core{MaxBody: 1 << 20}}
	form, err := h.readEditForm(httptest.NewRecorder(), r)
	defer form.close()
	if err != nil {
		t.Fatal(err)
	}
	if len(form.files) != 3 || form.files[0].disk != nil || form.files[1].disk == nil || form.files[2].disk != nil {
		t.Fatalf("held: small in memory, large on disk; got %+v", form.files)
	}
	for i, want := range [][]byte{small, large, small} {
		for range 2 { // readers are independent
			rc, _ := form.files[i].open()
			got, _ := io.ReadAll(rc)
			if !bytes.Equal(got, want) || form.files[i].size != int64(len(want)) {
				t.Fatalf("file %d reads back %d bytes, want %d", i, len(got), len(want))
			}
		}
	}
	path := form.files[1].disk.Name()
	form.close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
}

// The upload reader never panics and refuses bad input with a 400 or 413
// (a held file reads back as its declared size).
func FuzzEditForm(f *testing.F) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.SetBoundary("fuzzb")
	_ = mw.WriteField("model", "dall-e-2")
	w, _ := mw.CreateFormFile("image", "a.png")
	_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x02\x00\x00\x00\x02\x08\x06\x00\x00\x00"))
	_ = mw.Close()
	f.Add(body.Bytes())
	f.Add([]byte("--fuzzb\r\nContent-Disposition: form-data; name=\"image\"\r\n\r\nx\r\n--fuzzb--\r\n"))
	f.Add([]byte("--fuzzb\r\nContent-Disposition: form-data; name=\"mask\"; filename=\"m.webp\"\r\n\r\nRIFF\x00\x00\x00\x00WEBPVP8X\r\n--fuzzb--\r\n"))
	f.Add([]byte("--fuzzb\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := httptest.NewRequest(http.MethodPost, "/v1/images/edits", bytes.NewReader(b))
		r.Header.Set("Content-Type", "multipart/form-data; boundary=fuzzb")
		form, err := (&Handler{Core: &lifecycle.Core{MaxBody: 1 << 20}}).readEditForm(httptest.NewRecorder(), r)
		defer form.close()
		if err != nil {
			if s := apierr.From(err).Status; s != 400 && s != 413 {
				t.Fatalf("status %d: %v", s, err)
			}
			return
		}
		for _, hf := range form.files {
			rc, _ := hf.open()
			n, _ := io.Copy(io.Discard, rc)
			if n != hf.size {
				t.Fatalf("held %d bytes, size %d", n, hf.size)
			}
			_, _, _ = hf.dims()
		}
		_, _ = form.params()
	})
}
