package app_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelgate/modelgate/internal/oapitest"
)

// part is one part of a hand-made form; a filename makes it a file.
type part struct {
	field, filename, contentType string
	data                         []byte
}

func textPart(field, value string) part { return part{field: field, data: []byte(value)} }

func filePart(field, filename, contentType string, data []byte) part {
	return part{field: field, filename: filename, contentType: contentType, data: data}
}

// multipartBody encodes parts, returning the Content-Type and the body.
func multipartBody(t *testing.T, parts ...part) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.filename != "" {
			h.Set("Content-Disposition", multipart.FileContentDisposition(p.field, p.filename))
		} else {
			h.Set("Content-Disposition", `form-data; name="`+p.field+`"`)
		}
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(p.data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), b.Bytes()
}

// Bad uploads get a 400 (or 413) naming the field, and no vendor is called.
func TestImageEditBadInput(t *testing.T) {
	g := startImageGateway(t)
	png64, mask64 := testPNG(t, 64, 64, false), testPNG(t, 64, 64, true)
	jpg := testJPEG(t, 64, 64)
	base := func(model string, extra ...part) []part {
		return append([]part{filePart("image", "in.png", "image/png", png64), textPart("prompt", "x"), textPart("model", model)}, extra...)
	}
	big := append(append([]byte{}, png64...), make([]byte, 4<<20)...) // a PNG of 4 MB and a bit
	tests := []struct {
		name        string
		contentType string // "" → the form's
		parts       []part
		raw         string // a body sent as is
		status      int
		param, msg  string
	}{
		{"no boundary", "multipart/form-data", base("dall-e-2"), "", 400, "image", "no boundary"},
		{"not multipart", "application/json", nil, `{"model":"dall-e-2","prompt":"x"}`, 400, "image", "multipart/form-data"},
		{"field not UTF-8", "", base("dall-e-2", textPart("user", "\xff\xfe")), "", 400, "user", "not UTF-8"},
		{"image as a text field", "", []part{textPart("image", "aGVsbG8="), textPart("prompt", "x"), textPart("model", "dall-e-2")}, "", 400, "image", "must be a file"},
		{"mask as a text field", "", base("dall-e-2", textPart("mask", "x")), "", 400, "mask", "must be a file"},
		{"prompt as a file", "", []part{filePart("image", "a.png", "", png64), filePart("prompt", "p.txt", "text/plain", []byte("x"))}, "", 400, "prompt", "must be a text field"},
		{"not an image", "", []part{filePart("image", "a.png", "image/png", []byte("hello, this is text")), textPart("prompt", "x")}, "", 400, "image", "not a png, jpeg or webp"},
		{"lying content type", "", []part{filePart("image", "a", "image/png", jpg), textPart("prompt", "x"), textPart("model", "gpt-image-1")}, "", 400, "image", "declared as image/png but its content is image/jpeg"},
		{"lying extension", "", []part{filePart("image", "a.png", "", jpg), textPart("prompt", "x"), textPart("model", "gpt-image-1")}, "", 400, "image", "named as image/png"},
		{"no image", "", []part{textPart("prompt", "x"), textPart("model", "dall-e-2")}, "", 400, "image", "Missing required parameter: 'image'"},
		{"no prompt", "", []part{filePart("image", "a.png", "", png64), textPart("model", "dall-e-2")}, "", 400, "prompt", "Missing required"},
		{"no model", "", []part{filePart("image", "a.png", "", png64), textPart("prompt", "x")}, "", 400, "model", "must provide a model"},
		{"n zero", "", base("dall-e-2", textPart("n", "0")), "", 400, "n", "Expected a value >= 1"},
		{"n not a number", "", base("dall-e-2", textPart("n", "two")), "", 400, "n", "expected an integer, but got a string"},
		{"n twice", "", base("dall-e-2", textPart("n", "1"), textPart("n", "2")), "", 400, "n", "sent 2 times"},
		{"bad size", "", base("dall-e-2", textPart("size", "1024x1023")), "", 400, "size", "'256x256', '512x512', '1024x1024'"},
		{"bad response_format", "", base("dall-e-2", textPart("response_format", "gif")), "", 400, "response_format", "'url' and 'b64_json'"},
		{"dall-e-2 jpeg", "", []part{filePart("image", "a.jpg", "image/jpeg", jpg), textPart("prompt", "x"), textPart("model", "dall-e-2")}, "", 400, "image", "takes png images"},
		{"dall-e-2 not square", "", []part{filePart("image", "a.png", "", testPNG(t, 64, 32, false)), textPart("prompt", "x"), textPart("model", "dall-e-2")}, "", 400, "image", "square images; 'a.png' is 64x32"},
		{"dall-e-2 two images", "", base("dall-e-2", filePart("image", "b.png", "", png64)), "", 400, "image", "at most 1 image"},
		{"dall-e-2 4 MB", "", []part{filePart("image", "a.png", "", big), textPart("prompt", "x"), textPart("model", "dall-e-2")}, "", 413, "image", "(4 MB)"},
		{"dall-e-2 long prompt", "", []part{filePart("image", "a.png", "", png64), textPart("prompt", strings.Repeat("x", 1001)), textPart("model", "dall-e-2")}, "", 400, "prompt", "at most 1000"},
		{"mask of another size", "", base("dall-e-2", filePart("mask", "m.png", "", testPNG(t, 32, 32, true))), "", 400, "mask", "same dimensions"},
		{"mask not png", "", base("gpt-image-1", filePart("mask", "m.jpg", "", jpg)), "", 400, "mask", "must be a PNG"},
		{"two masks", "", base("gpt-image-1", filePart("mask", "m.png", "", mask64), filePart("mask", "n.png", "", mask64)), "", 400, "mask", "one mask"},
		{"seventeen images", "", append(base("gpt-image-1"), func() []part {
			var ps []part
			for range 16 {
				ps = append(ps, filePart("image[]", "x.png", "", png64))
			}
			return ps
		}()...), "", 400, "image", "maximum length 16"},
		{"dall-e-3 has no edits", "", base("dall-e-3"), "", 400, "model", "does not support image edits"},
		{"chat model", "", base("gpt-4o-mini"), "", 400, "model", "does not support image edits"},
		{"unknown model", "", base("dall-e-9"), "", 404, "model", "does not exist"},
		{"stream", "", base("gpt-image-1", textPart("stream", "true")), "", 400, "stream", "not supported"},
		{"cut short", "multipart/form-data; boundary=xyz", nil, "--xyz\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n\x89PNG\r\n\x1a\n", 400, "image", "is malformed"},
	}
	// Rules of the official contract answer with OpenAI's codes.
	contractCodes := map[string]string{"no image": "missing_required_parameter", "no prompt": "missing_required_parameter",
		"n zero": "integer_below_min_value", "n not a number": "invalid_type", "bad response_format": "invalid_value",
		"seventeen images": "array_above_max_length"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, body := "", []byte(tt.raw)
			if tt.parts != nil {
				ct, body = multipartBody(t, tt.parts...)
			}
			if tt.contentType != "" {
				ct = tt.contentType
			}
			before := len(g.upstream.Received())
			resp, b := g.post("/v1/images/edits", ct, g.keys["default"], bytes.NewReader(body))
			code := map[int]string{400: "invalid_request_error", 404: "model_not_found", 413: "request_too_large"}[tt.status]
			if c, ok := contractCodes[tt.name]; ok {
				code = c
			}
			checkError(t, resp, b, tt.status, tt.param, code, tt.msg)
			oapitest.CheckComponent(t, "ErrorResponse", b)
			if len(g.upstream.Received()) != before {
				t.Fatal("the vendor was called for a bad upload")
			}
		})
	}
	// Each refused request was counted (a row per key, reason and
	// minute), with nothing charged and no usage record.
	var n int64
	for k, c := range refusalCounts(g.gateway) {
		if strings.HasPrefix(k, "images.edits ") {
			n += c
		}
	}
	if n != int64(len(tests)) {
		t.Fatalf("%d refusals counted, want %d", n, len(tests))
	}
	for _, r := range g.usage() {
		if r.Endpoint == "images.edits" {
			t.Errorf("a refused upload left a usage record %+v", r)
		}
	}
}

// endless is an upload body of n bytes made on the fly: a form whose
// image part never ends; read counts what the gateway took.
type endless struct {
	head []byte
	left int64
	read atomic.Int64
}

func (e *endless) Read(p []byte) (int, error) {
	if len(e.head) > 0 {
		n := copy(p, e.head)
		e.head = e.head[n:]
		e.read.Add(int64(n))
		return n, nil
	}
	if e.left <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), e.left))
	clear(p[:n])
	e.left -= int64(n)
	e.read.Add(int64(n))
	return n, nil
}

// A 200 MB upload is refused while it streams in, at the 50 MB file limit,
// whether or not it declares its length.
func TestImageEditHugeUpload(t *testing.T) {
	g := startImageGateway(t)
	head := "--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\ngpt-image-1\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n"
	for _, declared := range []bool{false, true} {
		body := &endless{head: []byte(head), left: 200 << 20}
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/images/edits", body)
		req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
		req.Header.Set("Authorization", "Bearer "+g.keys["default"])
		if declared {
			req.ContentLength = int64(len(head)) + 200<<20
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("declared=%v: %v", declared, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		checkError(t, resp, b, 413, "image", "request_too_large", "limit")
		if got := body.read.Load(); got > 60<<20 {
			t.Fatalf("declared=%v: the gateway read %d MB before refusing", declared, got>>20)
		}
	}
	if len(g.upstream.Received()) != 0 {
		t.Fatal("the vendor was called")
	}
}
