package provider

import (
	"context"
	"errors"
	"io"
)

// ErrVideoGone is returned (wrapped) by VideoStatus and VideoContent when
// the upstream answers 404 for its own job: the job is lost and polling it
// again cannot help. Other errors are transient to the poller.
var ErrVideoGone = errors.New("the upstream no longer knows this video job")

// VideoRequest is a validated video generation request on its way
// upstream, in the gateway's terms (adapters translate it).
type VideoRequest struct {
	PublicModel   string
	UpstreamModel string
	Prompt        string
	Seconds       int    // what the upstream is asked for (one of the model's durations)
	Size          string // "WxH", one of the model's sizes ("720x1280", "1280x720", ...)
	// Image is an optional first frame / reference image, already fetched
	// (through the SSRF guard for URLs) and sniffed; nil when none.
	Image *InputImage
}

// InputImage is an image sent along with a request.
type InputImage struct {
	Data     []byte
	MIMEType string // "image/png", "image/jpeg" or "image/webp"
}

// VideoState is an upstream job's state in the gateway's terms.
type VideoState string

// The states an adapter reports.
const (
	VideoQueued    VideoState = "queued"
	VideoRunning   VideoState = "running"
	VideoSucceeded VideoState = "succeeded"
	VideoFailed    VideoState = "failed"
)

// VideoJob is what an adapter knows of an upstream job.
type VideoJob struct {
	ID       string // the vendor's job id (Sora's video id, Veo's operation name)
	State    VideoState
	Progress int // 0..100; 0 when the vendor does not say
	// Error is the vendor's reason when State is failed, for the client
	// (no secrets: adapters pass the vendor's message, never its URL).
	Error string
	// Ref is what VideoContent needs besides ID to download the result
	// (Veo's file URI); "" when ID is enough. Set once succeeded.
	Ref string
	// Seconds is the length the vendor says it made; 0 when it does not say.
	Seconds int
}

// VideoContent is a generated video being downloaded. The caller closes
// Body and enforces its own size limit (Size may be -1 or a lie).
type VideoContent struct {
	Body        io.ReadCloser
	Size        int64  // -1 when unknown
	ContentType string // as the vendor says; the caller sniffs the bytes
}

// VideoMaker is implemented by adapters that generate videos
// asynchronously: start a job, look at it, download its result.
type VideoMaker interface {
	// StartVideo submits req and returns the job (normally queued).
	StartVideo(ctx context.Context, req *VideoRequest) (VideoJob, error)
	// VideoStatus reports the job's current state; an error wrapping
	// ErrVideoGone when the upstream no longer knows the job.
	VideoStatus(ctx context.Context, upstreamModel, id string) (VideoJob, error)
	// VideoContent downloads a succeeded job's video.
	VideoContent(ctx context.Context, job VideoJob) (*VideoContent, error)
}

// VideoCanceller is implemented by adapters whose vendor can stop a job
// (the gateway cancels jobs past their deadline and those a client
// deletes); others are only abandoned.
type VideoCanceller interface {
	CancelVideo(ctx context.Context, upstreamModel, id string) error
}
