package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

// The Gemini API documents no cancel for a Veo operation (only tuning
// operations and batches have one), so the client does not implement
// provider.VideoCanceller.
var _ provider.VideoMaker = (*Client)(nil)

// veoRequest is the body of POST models/{model}:predictLongRunning, as
// google.golang.org/genai builds it for the Gemini API
// (generateVideosParametersToMldev): instances[0] and parameters.
type veoRequest struct {
	Instances  []veoInstance `json:"instances"`
	Parameters veoParameters `json:"parameters"`
}

type veoInstance struct {
	Prompt string    `json:"prompt"`
	Image  *veoImage `json:"image,omitempty"`
}

type veoImage struct {
	BytesBase64Encoded string `json:"bytesBase64Encoded"`
	MIMEType           string `json:"mimeType"`
}

type veoParameters struct {
	AspectRatio     string `json:"aspectRatio"`
	DurationSeconds int    `json:"durationSeconds,omitempty"`
	Resolution      string `json:"resolution,omitempty"`
}

// veoOperation is a google.longrunning.Operation as the Gemini API sends
// it for Veo: the result sits under response.generateVideoResponse.
type veoOperation struct {
	Name     string     `json:"name"`
	Done     bool       `json:"done"`
	Error    *wireError `json:"error"`
	Response *struct {
		GenerateVideoResponse *struct {
			GeneratedSamples []struct {
				Video *struct {
					URI string `json:"uri"`
				} `json:"video"`
			} `json:"generatedSamples"`
			RaiMediaFilteredCount   int      `json:"raiMediaFilteredCount"`
			RaiMediaFilteredReasons []string `json:"raiMediaFilteredReasons"`
		} `json:"generateVideoResponse"`
	} `json:"response"`
}

// veoSizes are the sizes Veo makes: "WxH" → aspect ratio and resolution.
var veoSizes = map[string][2]string{
	"1280x720": {"16:9", "720p"}, "720x1280": {"9:16", "720p"},
	"1920x1080": {"16:9", "1080p"}, "1080x1920": {"9:16", "1080p"},
}

// operationName matches what Veo names its operations
// (models/veo-3.1-generate-preview/operations/abc): path segments, no
// dot-segments, nothing that could leave {base}/ when appended to it.
var operationName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$`)

// maxVideoError bounds the vendor's failure reason kept on a job.
const maxVideoError = 2000

// StartVideo posts the request to models/{model}:predictLongRunning. The
// size becomes aspectRatio and, for 1080p, resolution (720p is Veo's
// default and Veo 2 takes no resolution at all); an image becomes the
// first frame.
func (c *Client) StartVideo(ctx context.Context, req *provider.VideoRequest) (provider.VideoJob, error) {
	sz, ok := veoSizes[req.Size]
	if !ok {
		return provider.VideoJob{}, apierr.Invalid("size", "Invalid value for 'size': '%s'. The model '%s' makes 1280x720, 720x1280, 1920x1080 and 1080x1920 videos.",
			req.Size, req.PublicModel)
	}
	body := veoRequest{Instances: []veoInstance{{Prompt: req.Prompt}},
		Parameters: veoParameters{AspectRatio: sz[0], DurationSeconds: req.Seconds}}
	if sz[1] != "720p" {
		body.Parameters.Resolution = sz[1]
	}
	if img := req.Image; img != nil {
		body.Instances[0].Image = &veoImage{BytesBase64Encoded: base64.StdEncoding.EncodeToString(img.Data), MIMEType: img.MIMEType}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return provider.VideoJob{}, fmt.Errorf("gemini %s: encode veo request: %w", c.name, err)
	}
	answer, err := c.unary(ctx, req.UpstreamModel, ":predictLongRunning", b)
	if err != nil {
		return provider.VideoJob{}, err
	}
	job, err := c.veoJob(answer)
	if err == nil && job.State == provider.VideoRunning {
		job.State = provider.VideoQueued // just accepted: Veo does not tell queued from running
	}
	return job, err
}

// VideoStatus reads GET {base}/{operation name}.
func (c *Client) VideoStatus(ctx context.Context, upstreamModel, id string) (provider.VideoJob, error) {
	if !validOperation(id) {
		return provider.VideoJob{}, fmt.Errorf("gemini %s: %q is not an operation name", c.name, id)
	}
	k := c.start(ctx)
	defer k.Release()
	resp, err := c.veoGet(k, c.base+"/"+id, "application/json", id)
	if err != nil {
		return provider.VideoJob{}, err
	}
	defer resp.Body.Close()
	b, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		return provider.VideoJob{}, provider.FromTransport(k.Ctx, c.name, err)
	}
	return c.veoJob(b)
}

func validOperation(name string) bool {
	if !operationName.MatchString(name) || !strings.Contains(name, "operations/") {
		return false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// veoJob maps an operation: not done → running; done with an error →
// failed with its message; done with a video → succeeded with the file
// URI as Ref (refused, as failed, when it is not on the configured host);
// done without one (the safety filter) → failed with the vendor's reasons.
func (c *Client) veoJob(b []byte) (provider.VideoJob, error) {
	job, err := c.veoOperation(b)
	job.Error = c.secrets.String(job.Error) // shown to the client on the task
	return job, err
}

// veoOperation is veoJob before the failure's reason is redacted.
func (c *Client) veoOperation(b []byte) (provider.VideoJob, error) {
	var op veoOperation
	if err := json.Unmarshal(b, &op); err != nil {
		return provider.VideoJob{}, provider.BadResponse(c.name, fmt.Errorf("veo operation: %w", err))
	}
	if !validOperation(op.Name) {
		return provider.VideoJob{}, provider.BadResponse(c.name, fmt.Errorf("veo operation name %q", op.Name))
	}
	job := provider.VideoJob{ID: op.Name, State: provider.VideoRunning}
	switch {
	case !op.Done:
		return job, nil
	case op.Error != nil:
		job.State, job.Error = provider.VideoFailed, "The upstream provider could not generate the video."
		if op.Error.Message != "" {
			job.Error = provider.Clip(op.Error.Message, maxVideoError)
		}
		return job, nil
	}
	job.State = provider.VideoFailed
	var r = op.Response
	if r == nil || r.GenerateVideoResponse == nil {
		job.Error = "The upstream provider finished without a video."
		return job, nil
	}
	for _, s := range r.GenerateVideoResponse.GeneratedSamples {
		if s.Video == nil || s.Video.URI == "" {
			continue
		}
		if !c.onOurHost(s.Video.URI) {
			job.Error = "The upstream provider named a download location on another host; the gateway refused it."
			return job, nil
		}
		job.State, job.Ref, job.Progress = provider.VideoSucceeded, s.Video.URI, 100
		return job, nil
	}
	job.Error = "The upstream provider's safety system blocked the video."
	if reasons := r.GenerateVideoResponse.RaiMediaFilteredReasons; len(reasons) > 0 {
		job.Error = provider.Clip(job.Error+" "+strings.Join(reasons, " "), maxVideoError)
	} else if r.GenerateVideoResponse.RaiMediaFilteredCount == 0 {
		job.Error = "The upstream provider finished without a video."
	}
	return job, nil
}

// onOurHost reports whether u is on the configured base URL's scheme and
// host, the only place the API key may go.
func (c *Client) onOurHost(u string) bool {
	pu, err := url.Parse(u)
	base, berr := url.Parse(c.base)
	return err == nil && berr == nil && pu.User == nil && pu.Scheme == base.Scheme && strings.EqualFold(pu.Host, base.Host)
}

// VideoContent streams the file the job's Ref names, with the API key
// header (never a key in the URL), after checking again that the URI is
// on the configured host.
func (c *Client) VideoContent(ctx context.Context, job provider.VideoJob) (*provider.VideoContent, error) {
	if job.Ref == "" || !c.onOurHost(job.Ref) {
		return nil, provider.BadResponse(c.name, fmt.Errorf("veo job %s: refusing to download from a location outside the base URL", job.ID))
	}
	k := c.start(ctx)
	resp, err := c.veoGet(k, job.Ref, "video/mp4", job.ID)
	if err != nil {
		k.Release()
		return nil, err
	}
	return &provider.VideoContent{Body: provider.CallBody(k, resp.Body),
		Size: resp.ContentLength, ContentType: resp.Header.Get("Content-Type")}, nil
}

// veoGet sends GET u with the client's headers. A 404 is the job gone (an
// error wrapping provider.ErrVideoGone); other failures map as for chat.
// A redirect to another host does not carry the key.
func (c *Client) veoGet(k *provider.Call, u, accept, id string) (*http.Response, error) {
	return provider.VideoGetter{Provider: c.name, Client: c.hc, Header: c.header, MaxError: c.maxError,
		Parse: c.vendorError}.Get(k, u, accept, id)
}
