package openaicompat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
)

var _ provider.Transcriber = (*Client)(nil)

// Transcribe posts the upload to {base}/audio/transcriptions (Azure: the
// deployment's audio/transcriptions) as multipart/form-data written while
// it is sent: model (the upstream id), the client's other fields as
// received, then the file, read from the spool. The answer is relayed with
// its content type; JSON answers must be valid JSON, and their duration (or
// usage.seconds) is read for billing.
func (c *Client) Transcribe(ctx context.Context, req *provider.TranscriptionRequest) (*provider.TranscriptionResponse, error) {
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	boundary := "modelgate-audio-" + hex.EncodeToString(rnd[:])
	var n byteCounter
	if err := writeTranscriptionForm(&n, boundary, req, nil); err != nil {
		return nil, fmt.Errorf("openaicompat %s: transcription form: %w", c.name, err)
	}
	k := provider.StartCall(ctx, c.timeout, c.idle)
	defer k.Release()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pw.CloseWithError(writeTranscriptionForm(pw, boundary, req, k))
	}()
	defer func() {
		_ = pr.Close() // ends the writer if the upstream answered before reading everything
		<-done         // the spool is read only while this call lasts
	}()
	hr, err := http.NewRequestWithContext(k.Ctx, http.MethodPost, c.URL("audio/transcriptions", req.UpstreamModel), pr)
	if err != nil {
		return nil, fmt.Errorf("openaicompat %s: new request: %w", c.name, err)
	}
	hr.ContentLength = int64(n) + req.File.Size // exact: some upstreams refuse chunked uploads
	hr.Header = c.header.Clone()
	hr.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
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
	body, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		if k.Ctx.Err() != nil {
			return nil, provider.FromTransport(k.Ctx, c.name, err)
		}
		return nil, provider.BadResponse(c.name, fmt.Errorf("read transcription: %w", err))
	}
	out := &provider.TranscriptionResponse{Body: body, ContentType: resp.Header.Get("Content-Type")}
	if provider.JSONFormat(req.ResponseFormat) {
		d, err := transcriptionDuration(body)
		if err != nil {
			return nil, provider.BadResponse(c.name, err)
		}
		out.Duration = d
		if out.ContentType == "" {
			out.ContentType = "application/json"
		}
	} else if out.ContentType == "" {
		out.ContentType = "text/plain; charset=utf-8"
	}
	return out, nil
}

// writeTranscriptionForm writes the upstream form: model, the client's
// fields, then the file, copied from the spool under k (every chunk
// restarts the idle timer, so a long upload is not taken for a silent
// upstream). With k nil it writes everything but the file's bytes, to
// measure the form.
func writeTranscriptionForm(w io.Writer, boundary string, req *provider.TranscriptionRequest, k *provider.Call) error {
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(boundary); err != nil {
		return err
	}
	if err := mw.WriteField("model", req.UpstreamModel); err != nil {
		return err
	}
	for _, f := range req.Fields {
		if err := mw.WriteField(f.Name, f.Value); err != nil {
			return err
		}
	}
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", multipart.FileContentDisposition("file", req.File.Name))
	h.Set("Content-Type", req.File.ContentType)
	part, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	if k != nil {
		n, err := io.Copy(part, k.Reader(req.File.Reader()))
		if err == nil && n != req.File.Size {
			err = fmt.Errorf("spool held %d bytes, expected %d", n, req.File.Size)
		}
		if err != nil {
			return fmt.Errorf("send audio file: %w", err)
		}
	}
	return mw.Close()
}

// byteCounter counts what is written to it.
type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}

// transcriptionDuration checks a JSON transcription and reads the audio
// length it reports: duration (verbose_json, diarized_json), else
// usage.seconds (usage of type duration); 0 when it has neither.
func transcriptionDuration(body []byte) (time.Duration, error) {
	var v struct {
		Duration *float64 `json:"duration"`
		Usage    *struct {
			Type    string   `json:"type"`
			Seconds *float64 `json:"seconds"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return 0, fmt.Errorf("transcription is not a JSON object: %w", err)
	}
	secs := v.Duration
	if secs == nil && v.Usage != nil && v.Usage.Type == "duration" {
		secs = v.Usage.Seconds
	}
	if secs == nil || *secs <= 0 || math.IsNaN(*secs) || *secs > 1e7 {
		return 0, nil
	}
	return time.Duration(math.Round(*secs * 1e9)), nil
}
