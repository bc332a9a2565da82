package openaicompat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"

	"github.com/modelgate/modelgate/internal/provider"
)

// OpenAI's video API (Sora) has no cancel: DELETE /videos/{id} only removes
// a finished video, so the client does not implement provider.VideoCanceller.
var _ provider.VideoMaker = (*Client)(nil)

// maxVideoError bounds the vendor's failure reason kept on a job.
const maxVideoError = 2000

// videoObject is the part of OpenAI's Video object the gateway reads.
type videoObject struct {
	ID       string          `json:"id"`
	Status   string          `json:"status"`
	Progress json.RawMessage `json:"progress"`
	Seconds  json.RawMessage `json:"seconds"` // a string ("8"); some compatible vendors send a number
	Error    *struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	} `json:"error"`
}

// StartVideo posts the request to {base}/videos as multipart/form-data,
// the way the official SDK sends VideoNewParams: input_reference (the
// image, when there is one), model, prompt, seconds (a string) and size,
// in that order.
func (c *Client) StartVideo(ctx context.Context, req *provider.VideoRequest) (provider.VideoJob, error) {
	var buf bytes.Buffer
	ct, err := writeVideoForm(&buf, req)
	if err != nil {
		return provider.VideoJob{}, fmt.Errorf("openaicompat %s: video form: %w", c.name, err)
	}
	k := c.start(ctx)
	defer k.Release()
	resp, err := c.Do(k, http.MethodPost, c.URL("videos", ""), ct, "application/json", &buf)
	if err != nil {
		return provider.VideoJob{}, err
	}
	defer resp.Body.Close()
	return c.readVideo(k, resp)
}

// writeVideoForm writes the create form to w and returns its Content-Type.
func writeVideoForm(w io.Writer, req *provider.VideoRequest) (string, error) {
	mw := multipart.NewWriter(w)
	if img := req.Image; img != nil {
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", multipart.FileContentDisposition("input_reference", "input_reference"+imageExt(img.MIMEType)))
		h.Set("Content-Type", img.MIMEType)
		pw, err := mw.CreatePart(h)
		if err != nil {
			return "", err
		}
		if _, err := pw.Write(img.Data); err != nil {
			return "", err
		}
	}
	fields := [][2]string{{"model", req.UpstreamModel}, {"prompt", req.Prompt}}
	if req.Seconds > 0 {
		fields = append(fields, [2]string{"seconds", strconv.Itoa(req.Seconds)})
	}
	if req.Size != "" {
		fields = append(fields, [2]string{"size", req.Size})
	}
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return "", err
		}
	}
	return mw.FormDataContentType(), mw.Close()
}

// imageExt names the reference image's file after its type.
func imageExt(mimeType string) string {
	switch mimeType {
	case "image/jpeg":
		return ".jpg"
	case "image/webp":
		return ".webp"
	case "image/png":
		return ".png"
	}
	return ""
}

// VideoStatus reads GET {base}/videos/{id}.
func (c *Client) VideoStatus(ctx context.Context, upstreamModel, id string) (provider.VideoJob, error) {
	k := c.start(ctx)
	defer k.Release()
	resp, err := c.videoGet(k, id, "", "application/json")
	if err != nil {
		return provider.VideoJob{}, err
	}
	defer resp.Body.Close()
	return c.readVideo(k, resp)
}

// VideoContent streams GET {base}/videos/{id}/content (the MP4, the
// default variant). The body is the upstream's, read as the caller reads.
func (c *Client) VideoContent(ctx context.Context, job provider.VideoJob) (*provider.VideoContent, error) {
	k := c.start(ctx)
	resp, err := c.videoGet(k, job.ID, "/content", "video/mp4")
	if err != nil {
		k.Release()
		return nil, err
	}
	return &provider.VideoContent{Body: provider.CallBody(k, resp.Body),
		Size: resp.ContentLength, ContentType: resp.Header.Get("Content-Type")}, nil
}

// videoGet sends GET {base}/videos/{id}{suffix}. A 404 is the job gone
// (an error wrapping provider.ErrVideoGone); other failures map as for
// chat. A redirect to another host does not carry the client's headers.
func (c *Client) videoGet(k *provider.Call, id, suffix, accept string) (*http.Response, error) {
	if id == "" {
		return nil, fmt.Errorf("openaicompat %s: empty video id", c.name)
	}
	u := c.URL("videos/"+url.PathEscape(id)+suffix, "")
	return provider.VideoGetter{Provider: c.name, Client: c.hc, Header: c.header, MaxError: c.maxError,
		Parse: c.vendorError}.Get(k, u, accept, id)
}

// readVideo reads a Video object answer.
func (c *Client) readVideo(k *provider.Call, resp *http.Response) (provider.VideoJob, error) {
	b, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		return provider.VideoJob{}, provider.FromTransport(k.Ctx, c.name, err)
	}
	job, err := parseVideo(c.name, b)
	job.Error = c.secrets.String(job.Error) // shown to the client on the task
	return job, err
}

// parseVideo maps a Video object to a job: queued → queued, in_progress
// → running, completed → succeeded, failed (and the cancelled or expired
// some compatible vendors report) → failed with the vendor's reason.
func parseVideo(name string, b []byte) (provider.VideoJob, error) {
	var v videoObject
	if err := json.Unmarshal(b, &v); err != nil {
		return provider.VideoJob{}, provider.BadResponse(name, fmt.Errorf("video object: %w", err))
	}
	if v.ID == "" {
		return provider.VideoJob{}, provider.BadResponse(name, fmt.Errorf("video object without an id"))
	}
	job := provider.VideoJob{ID: v.ID, Seconds: videoSeconds(v.Seconds)}
	if p, err := strconv.ParseFloat(string(v.Progress), 64); err == nil && p > 0 {
		job.Progress = int(min(p, 100))
	}
	switch v.Status {
	case "queued":
		job.State = provider.VideoQueued
	case "in_progress":
		job.State = provider.VideoRunning
	case "completed":
		job.State, job.Progress = provider.VideoSucceeded, 100
	case "failed", "cancelled", "canceled", "expired":
		job.State = provider.VideoFailed
		job.Error = "The upstream provider could not generate the video."
		if e := v.Error; e != nil && e.Message != "" {
			job.Error = provider.Clip(e.Message, maxVideoError)
		} else if e != nil && rawString(e.Code) != "" {
			job.Error += " (" + provider.Clip(rawString(e.Code), 100) + ")"
		}
	default:
		return provider.VideoJob{}, provider.BadResponse(name, fmt.Errorf("video %s: unknown status %q", v.ID, v.Status))
	}
	return job, nil
}

// videoSeconds reads seconds given as a string or a number; 0 when unknown.
func videoSeconds(raw json.RawMessage) int {
	n, err := strconv.ParseFloat(rawString(raw), 64)
	if err != nil || n <= 0 || n > 86400 {
		return 0
	}
	return int(n + 0.5)
}
