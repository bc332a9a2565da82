package openaicompat

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/redact"
)

var (
	_ provider.ImageGenerator = (*Client)(nil)
	_ provider.ImageEditor    = (*Client)(nil)
)

// gptImage reports whether upstream is one of OpenAI's GPT image models,
// which refuse response_format ("Unknown parameter") and always answer
// with base64; the gateway drops the parameter and converts the answer to
// what the client asked for.
func gptImage(upstream string) bool {
	return strings.HasPrefix(upstream, "gpt-image-") || strings.HasPrefix(upstream, "chatgpt-image-")
}

// GenerateImages forwards the client's body to images/generations with
// model set to the upstream id (and response_format dropped for GPT image
// models).
func (c *Client) GenerateImages(ctx context.Context, req *provider.ImageRequest) (*provider.ImageResponse, error) {
	body, err := imageBody(req.Body, req.UpstreamModel, req.PublicModel != req.UpstreamModel)
	if err != nil {
		return nil, fmt.Errorf("openaicompat %s: patch image request: %w", c.name, err)
	}
	k := c.start(ctx)
	defer k.Release()
	resp, err := c.Do(k, http.MethodPost, c.URL("images/generations", req.UpstreamModel), "application/json", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return c.readImages(k, resp)
}

// imageBody is the client's JSON with model set (when it differs) and
// response_format removed for GPT image models.
func imageBody(body []byte, upstream string, setModel bool) ([]byte, error) {
	if setModel {
		q, _ := json.Marshal(upstream)
		b, err := jsonx.Set(body, "model", q)
		if err != nil {
			return nil, err
		}
		body = b
	}
	if gptImage(upstream) {
		if _, ok := jsonx.Field(body, "response_format"); ok {
			return jsonx.AppendDelete(nil, body, "response_format")
		}
	}
	return body, nil
}

// readImages reads an ImagesResponse.
func (c *Client) readImages(k *provider.Call, resp *http.Response) (*provider.ImageResponse, error) {
	b, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		return nil, provider.FromTransport(k.Ctx, c.name, err)
	}
	return parseImages(c.name, c.secrets, resp.Header, b)
}

// parseImages reads an ImagesResponse body: data items become images, the
// other members (usage, size, quality, background, output_format, ...) are
// kept for the client. An error object in it is the vendor's failure,
// redacted of secrets.
func parseImages(name string, secrets *redact.Redactor, h http.Header, b []byte) (*provider.ImageResponse, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil || top == nil {
		return nil, provider.BadResponse(name, fmt.Errorf("images response is not a JSON object: %v", err))
	}
	if ev, ok := top["error"]; ok && !jsonx.IsNull(ev) {
		return nil, provider.FromStatus(name, http.StatusBadGateway, h, parseVendorError(b).Redact(secrets))
	}
	res := &provider.ImageResponse{}
	if raw, ok := top["created"]; ok {
		if err := json.Unmarshal(raw, &res.Created); err != nil {
			return nil, provider.BadResponse(name, fmt.Errorf("images response: created: %w", err))
		}
	}
	var data []struct {
		B64JSON       string `json:"b64_json"`
		URL           string `json:"url"`
		RevisedPrompt string `json:"revised_prompt"`
	}
	if raw, ok := top["data"]; ok && !jsonx.IsNull(raw) {
		if err := json.Unmarshal(raw, &data); err != nil {
			return nil, provider.BadResponse(name, fmt.Errorf("images response: data: %w", err))
		}
	}
	for i, d := range data {
		if d.B64JSON == "" && d.URL == "" {
			return nil, provider.BadResponse(name, fmt.Errorf("images response: data[%d] has neither b64_json nor url", i))
		}
		res.Images = append(res.Images, provider.GeneratedImage{B64JSON: d.B64JSON, URL: d.URL, RevisedPrompt: d.RevisedPrompt})
	}
	_ = json.Unmarshal(top["size"], &res.Size)
	_ = json.Unmarshal(top["quality"], &res.Quality)
	delete(top, "created")
	delete(top, "data")
	if len(top) > 0 {
		res.Extra = top
	}
	return res, nil
}

// EditImages posts the client's form to images/edits: its text fields
// (model set to the upstream id; response_format dropped for GPT image
// models) and its files, streamed from where the gateway holds them with
// an exact Content-Length.
func (c *Client) EditImages(ctx context.Context, req *provider.ImageEditRequest) (*provider.ImageResponse, error) {
	fields := make([]provider.FormField, 0, len(req.Fields)+1)
	hasModel := false
	for _, f := range req.Fields {
		switch {
		case f.Name == "model":
			f.Value, hasModel = req.UpstreamModel, true
		case f.Name == "response_format" && gptImage(req.UpstreamModel):
			continue
		}
		fields = append(fields, f)
	}
	if !hasModel {
		fields = append(fields, provider.FormField{Name: "model", Value: req.UpstreamModel})
	}
	var rnd [16]byte
	_, _ = rand.Read(rnd[:])
	boundary := "modelgate-" + hex.EncodeToString(rnd[:])
	length, err := imageFormLength(boundary, fields, req.Files)
	if err != nil {
		return nil, fmt.Errorf("openaicompat %s: image form: %w", c.name, err)
	}
	k := c.start(ctx)
	defer k.Release()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pw.CloseWithError(writeImageForm(pw, boundary, fields, req.Files, true))
	}()
	defer func() {
		_ = pr.Close() // unblocks the writer if the upstream stopped reading
		<-done
	}()
	// Upload progress counts as activity for the idle timeout.
	hr, err := http.NewRequestWithContext(k.Ctx, http.MethodPost, c.URL("images/edits", req.UpstreamModel), io.NopCloser(k.Reader(pr)))
	if err != nil {
		return nil, fmt.Errorf("openaicompat %s: new request: %w", c.name, err)
	}
	hr.ContentLength = length
	hr.Header = c.header.Clone()
	hr.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
	hr.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, provider.FromTransport(k.Ctx, c.name, err)
	}
	defer resp.Body.Close()
	k.Touch()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		return nil, provider.FromStatus(c.name, resp.StatusCode, resp.Header, c.vendorError(b))
	}
	return c.readImages(k, resp)
}

// imageFormLength is the exact size of the form writeImageForm writes.
func imageFormLength(boundary string, fields []provider.FormField, files []provider.FormFile) (int64, error) {
	var n imageCounter
	if err := writeImageForm(&n, boundary, fields, files, false); err != nil {
		return 0, err
	}
	for _, f := range files {
		n += imageCounter(f.Size)
	}
	return int64(n), nil
}

type imageCounter int64

func (c *imageCounter) Write(p []byte) (int, error) {
	*c += imageCounter(len(p))
	return len(p), nil
}

// writeImageForm writes the multipart form: text fields, then files, each file
// copied from its holder when withFiles (else only its headers, for
// imageFormLength).
func writeImageForm(w io.Writer, boundary string, fields []provider.FormField, files []provider.FormFile, withFiles bool) error {
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(boundary); err != nil {
		return err
	}
	for _, f := range fields {
		if err := mw.WriteField(f.Name, f.Value); err != nil {
			return err
		}
	}
	for _, f := range files {
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", multipart.FileContentDisposition(f.Field, f.Filename))
		h.Set("Content-Type", f.ContentType)
		pw, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		if !withFiles {
			continue
		}
		if err := copyImageFile(pw, f); err != nil {
			return err
		}
	}
	return mw.Close()
}

func copyImageFile(w io.Writer, f provider.FormFile) error {
	r, err := f.Open()
	if err != nil {
		return fmt.Errorf("open %s: %w", f.Field, err)
	}
	defer r.Close()
	n, err := io.Copy(w, r)
	if err == nil && n != f.Size {
		err = fmt.Errorf("%s: held %d bytes, expected %d", f.Field, n, f.Size)
	}
	return err
}
