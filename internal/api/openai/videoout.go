package openai

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelgate/modelgate/internal/store"
)

// The two answer shapes of a video task: the spec's ("video.task", states
// pending/processing/completed/failed) and OpenAI's VideoResource
// ("video", states queued/in_progress/completed/failed).

// specVideoTask is the spec's video task (section 2.7) with the fields it
// leaves open filled in.
type specVideoTask struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Status    string `json:"status"`
	CreatedAt int64  `json:"created_at"`
	Model     string `json:"model"`
	Duration  int    `json:"duration"` // what the client asked for
	// Seconds is the length generated and billed (Sora makes 4 s when 5
	// are asked for).
	Seconds     int    `json:"seconds"`
	Size        string `json:"size"`
	Progress    int    `json:"progress"`
	VideoURL    string `json:"video_url,omitempty"`
	Error       string `json:"error,omitempty"`
	ExpiresAt   int64  `json:"expires_at"`
	CompletedAt int64  `json:"completed_at,omitempty"`
}

func specTask(t store.VideoTask, videoURL string) []byte {
	v := specVideoTask{ID: t.ID, Object: "video.task", Status: string(t.State), CreatedAt: t.CreatedAt.Unix(),
		Model: t.Model, Duration: t.Seconds, Seconds: t.UpstreamSeconds, Size: t.Size, Progress: t.Progress,
		VideoURL: videoURL, Error: t.Error, ExpiresAt: t.ExpiresAt.Unix()}
	if t.State == store.TaskCompleted {
		v.CompletedAt = t.FinishedAt.Unix()
	}
	return marshal(v)
}

// marshal encodes v without escaping &, < and > (video URLs carry &).
// It cannot fail: the answers hold only strings, numbers and pointers.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// openaiVideoResource is OpenAI's VideoResource.
type openaiVideoResource struct {
	ID                 string       `json:"id"`
	Object             string       `json:"object"`
	Model              string       `json:"model"`
	Status             string       `json:"status"`
	Progress           int          `json:"progress"`
	CreatedAt          int64        `json:"created_at"`
	CompletedAt        *int64       `json:"completed_at"`
	ExpiresAt          *int64       `json:"expires_at"`
	Prompt             string       `json:"prompt"`
	RemixedFromVideoID *string      `json:"remixed_from_video_id"`
	Seconds            string       `json:"seconds"`
	Size               string       `json:"size"`
	Error              *videoFailed `json:"error"`
}

type videoFailed struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// openaiStatus is OpenAI's name of a state.
func openaiStatus(s store.TaskState) string {
	switch s {
	case store.TaskPending:
		return "queued"
	case store.TaskProcessing:
		return "in_progress"
	}
	return string(s)
}

func openaiResource(t store.VideoTask) openaiVideoResource {
	exp := t.ExpiresAt.Unix()
	v := openaiVideoResource{ID: t.ID, Object: "video", Model: t.Model, Status: openaiStatus(t.State), Progress: t.Progress,
		CreatedAt: t.CreatedAt.Unix(), ExpiresAt: &exp, Prompt: t.Prompt,
		Seconds: strconv.Itoa(t.UpstreamSeconds), Size: t.Size}
	if t.State.Final() {
		done := t.FinishedAt.Unix()
		v.CompletedAt = &done
	}
	if t.State == store.TaskFailed {
		v.Error = &videoFailed{Code: "video_generation_failed", Message: t.Error}
	}
	return v
}

func openaiVideo(t store.VideoTask) []byte {
	return marshal(openaiResource(t))
}

// videoList is OpenAI's VideoListResource.
func videoList(ts []store.VideoTask, more bool) []byte {
	l := struct {
		Object  string                `json:"object"`
		Data    []openaiVideoResource `json:"data"`
		FirstID *string               `json:"first_id"`
		LastID  *string               `json:"last_id"`
		HasMore bool                  `json:"has_more"`
	}{Object: "list", Data: make([]openaiVideoResource, len(ts)), HasMore: more}
	for i, t := range ts {
		l.Data[i] = openaiResource(t)
	}
	if len(ts) > 0 {
		l.FirstID, l.LastID = &ts[0].ID, &ts[len(ts)-1].ID
	}
	return marshal(l)
}
