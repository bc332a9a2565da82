package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/fetch"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/video"
)

// Videos is what the video endpoints need; with Handler.Videos nil they
// answer 404 like any unknown path.
type Videos struct {
	Service *video.Service
	// Models finds a model's catalog entry (sizes, durations, prices).
	Models func(public, upstream string) (catalog.Model, bool)
	Links  VideoLinks
	Files  VideoFiles
	// Fetcher downloads input images named by http(s) URL through the
	// SSRF guard (nil: only data: URLs and uploads).
	Fetcher *fetch.Fetcher
}

// VideoLinks signs and checks the download links of finished videos
// (imagestore.Store has it).
type VideoLinks interface {
	// SignPath returns the query "exp=…&sig=…" that makes path valid until exp.
	SignPath(path string, exp time.Time) string
	// CheckPath verifies a link: imagestore.ErrForbidden or ErrExpired.
	CheckPath(path, exp, sig string) error
	// PublicBase is the base URL clients reach the gateway at, given the
	// one the request came in on.
	PublicBase(requestBase string) string
}

// VideoFiles opens stored videos (imagestore.Store has it).
type VideoFiles interface {
	OpenVideo(ctx context.Context, key string) (imagestore.Object, error)
}

// videoRoutes registers the spec's /v1/videos/generations and OpenAI's
// /v1/videos endpoints.
func (h *Handler) videoRoutes(mux *http.ServeMux) {
	mux.Handle("/v1/videos/generations", h.only(http.MethodPost, h.submitSpecVideo))
	mux.Handle("/v1/videos", h.methods(map[string]http.HandlerFunc{
		http.MethodPost: h.createVideo, http.MethodGet: h.listVideos}))
	mux.HandleFunc("/v1/videos/{rest...}", h.videoPaths)
}

// videoPaths dispatches the paths under /v1/videos/ that carry an id (one
// pattern: "generations/{id}" and "{id}/content" would overlap).
func (h *Handler) videoPaths(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(r.PathValue("rest"), "/")
	get := map[string]http.HandlerFunc{}
	switch {
	case len(parts) == 2 && parts[0] == "generations":
		get[http.MethodGet] = h.getSpecVideo
	case len(parts) == 3 && parts[0] == "generations" && parts[2] == "content":
		get[http.MethodGet], get[http.MethodHead] = h.signedVideoContent, h.signedVideoContent // players may ask HEAD first
	case len(parts) == 1:
		get[http.MethodGet], get[http.MethodDelete] = h.getVideo, h.deleteVideo
	case len(parts) == 2 && parts[1] == "content":
		get[http.MethodGet] = h.videoContent
	default:
		h.notFoundURL(w, r)
		return
	}
	h.methods(get).ServeHTTP(w, r)
}

// methods serves each method with its handler and answers 405 otherwise.
func (h *Handler) methods(m map[string]http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, ok := m[r.Method]; ok {
			f(w, r)
			return
		}
		allowed := make([]string, 0, len(m))
		for _, k := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodDelete} {
			if _, ok := m[k]; ok {
				allowed = append(allowed, k)
			}
		}
		info := reqinfo.From(r.Context())
		info.Endpoint = "unknown"
		defer h.Record(info, &lifecycle.Outcome{})
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		h.fail(w, info, &apierr.Error{Status: http.StatusMethodNotAllowed, Type: apierr.TypeInvalidRequest, Code: apierr.CodeMethodNotAllowed,
			Message: fmt.Sprintf("Method %s is not allowed on %s; use %s.", r.Method, r.URL.Path, strings.Join(allowed, " or "))})
	})
}

// notFoundURL is the JSON 404 for a path the gateway does not serve.
func (h *Handler) notFoundURL(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "unknown"
	defer h.Record(info, &lifecycle.Outcome{})
	h.fail(w, info, &apierr.Error{Status: http.StatusNotFound, Type: apierr.TypeInvalidRequest, Code: apierr.CodeNotFound,
		Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)})
}

// submitSpecVideo serves POST /v1/videos/generations.
func (h *Handler) submitSpecVideo(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "videos.generations"
	var out lifecycle.Outcome
	defer h.Record(info, &out)
	p, body, ok := h.authJSON(w, r, info)
	if !ok {
		return
	}
	params, e := parseSpecVideo(body)
	if e != nil {
		h.fail(w, info, e)
		return
	}
	t, err := h.submitVideo(r, p, info, &params)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	lifecycle.WriteJSON(w, info, false, &out, specTask(t, ""))
}

// createVideo serves POST /v1/videos (OpenAI's Videos API).
func (h *Handler) createVideo(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "videos"
	var out lifecycle.Outcome
	defer h.Record(info, &out)
	p, err := h.Authenticate(w, r, info, r.Header.Get("Authorization"))
	if err != nil {
		h.fail(w, info, err)
		return
	}
	var params videoParams
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		params, err = h.readOpenAIVideoForm(w, r)
	} else {
		var body []byte
		if body, err = h.ReadJSON(w, r); err == nil {
			var e *apierr.Error
			if params, e = parseOpenAIVideoJSON(body); e != nil {
				err = e
			}
		}
	}
	if err == nil {
		var t store.VideoTask
		if t, err = h.submitVideo(r, p, info, &params); err == nil {
			lifecycle.WriteJSON(w, info, false, &out, openaiVideo(t))
			return
		}
	}
	h.fail(w, info, err)
}

// submitVideo routes, checks and submits a parsed video request.
func (h *Handler) submitVideo(r *http.Request, p gate.Principal, info *reqinfo.Info, params *videoParams) (store.VideoTask, error) {
	if h.Videos == nil {
		return store.VideoTask{}, apierr.ModelNotFound(params.Model)
	}
	info.Model = params.Model
	if e := checkModel(params.Model); e != nil {
		return store.VideoTask{}, e
	}
	tr, d, ch, err := h.pickFor(r, info, p, params.Model, "video generation", func(c provider.Chatter) bool {
		_, ok := c.(provider.VideoMaker)
		return ok
	})
	if err != nil {
		return store.VideoTask{}, err
	}
	defer tr.Release()
	m, ok := h.Videos.Models(d.Model, d.Upstream)
	if !ok || m.Modality != catalog.Video {
		return store.VideoTask{}, apierr.Invalid("model", "The model '%s' is not a video model; use one of the video models listed by GET /v1/models.", params.Model)
	}
	seconds, size, e := params.forModel(m)
	if e != nil {
		return store.VideoTask{}, e
	}
	// The image is loaded (downloaded when named by URL) only once the
	// reservation is held: a request the lifecycle.Payer cannot pay for downloads
	// nothing.
	t, err := h.Videos.Service.Submit(r.Context(), video.Submission{
		RequestID: info.ID, Payer: lifecycle.Payer(p), Group: p.Group, Provider: d.Provider, Maker: ch.(provider.VideoMaker),
		Request: provider.VideoRequest{PublicModel: params.Model, UpstreamModel: d.Upstream, Prompt: params.Prompt,
			Seconds: seconds, Size: size},
		Seconds: params.requested(m), PerSecond: m.VideoPriceFor(size), Param: params.SecondsParam,
		LoadImage: func(ctx context.Context) (*provider.InputImage, error) { return h.loadImage(ctx, params) },
	})
	// One try: a video task is the vendor's once it is submitted.
	if f, _ := provider.Classify(err); f == provider.Answered {
		tr.Answered()
	} else if f != provider.ClientFault {
		tr.Failed(err, nil)
	}
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return t, ae
		}
		return t, h.ChargeError(err)
	}
	return t, nil
}

// requested is the duration the client asked for (the model's default
// when it named none).
func (p videoParams) requested(m catalog.Model) int {
	if p.Seconds == 0 && len(m.VideoDurations) > 0 {
		return m.VideoDurations[0]
	}
	return p.Seconds
}

// task reads the caller's task named by the path; on failure it has
// answered.
func (h *Handler) task(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, endpoint string) (store.VideoTask, bool) {
	info.Endpoint = endpoint
	p, err := h.Authenticate(w, r, info, r.Header.Get("Authorization"))
	if err == nil && h.Videos == nil {
		err = video.ErrTaskNotFound
	}
	var t store.VideoTask
	if err == nil {
		t, err = h.Videos.Service.Get(r.Context(), p.AccountID, videoID(r))
	}
	if err != nil {
		h.fail(w, info, videoError(err))
		return t, false
	}
	info.Model, info.Provider, info.Upstream = t.Model, t.Provider, t.UpstreamModel
	return t, true
}

// videoID is the task id in the path: the first segment after
// "generations/" or after "/v1/videos/".
func videoID(r *http.Request) string {
	parts := strings.Split(r.PathValue("rest"), "/")
	if parts[0] == "generations" && len(parts) > 1 {
		return parts[1]
	}
	return parts[0]
}

// getSpecVideo serves GET /v1/videos/generations/{task_id}.
func (h *Handler) getSpecVideo(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	var out lifecycle.Outcome
	defer h.Record(info, &out)
	t, ok := h.task(w, r, info, "videos.generations.get")
	if !ok {
		return
	}
	lifecycle.WriteJSON(w, info, false, &out, specTask(t, h.videoURL(r, t)))
}

// getVideo serves GET /v1/videos/{id}.
func (h *Handler) getVideo(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	var out lifecycle.Outcome
	defer h.Record(info, &out)
	t, ok := h.task(w, r, info, "videos.get")
	if !ok {
		return
	}
	lifecycle.WriteJSON(w, info, false, &out, openaiVideo(t))
}

// codeVideoInProgress refuses (409) the deletion of a running video task
// whose vendor cannot cancel it (see video.ErrTaskRunning).
const codeVideoInProgress = "video_in_progress"

// deleteVideo serves DELETE /v1/videos/{id}: a finished task is forgotten
// with its video; an open one is cancelled (nothing charged) where its
// vendor confirms the cancel, and refused with 409 otherwise.
func (h *Handler) deleteVideo(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	var out lifecycle.Outcome
	defer h.Record(info, &out)
	t, ok := h.task(w, r, info, "videos.delete")
	if !ok {
		return
	}
	if err := h.Videos.Service.Delete(r.Context(), t.AccountID, t.ID); err != nil {
		h.fail(w, info, videoError(err))
		return
	}
	lifecycle.WriteJSON(w, info, false, &out, []byte(`{"id":"`+t.ID+`","object":"video.deleted","deleted":true}`))
}

// listVideos serves GET /v1/videos (after, limit 1..100 default 20, order
// asc|desc default desc).
func (h *Handler) listVideos(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "videos.list"
	var out lifecycle.Outcome
	defer h.Record(info, &out)
	p, err := h.Authenticate(w, r, info, r.Header.Get("Authorization"))
	if err != nil {
		h.fail(w, info, err)
		return
	}
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			h.fail(w, info, apierr.Invalid("limit", "Invalid 'limit': expected an integer between 1 and 100, but got '%s'.", v))
			return
		}
		limit = n
	}
	order := q.Get("order")
	if order != "" && order != "asc" && order != "desc" {
		h.fail(w, info, oneOf("order", order, "asc", "desc"))
		return
	}
	var ts []store.VideoTask
	more := false
	if h.Videos != nil {
		ts, more, err = h.Videos.Service.List(r.Context(), p.AccountID, q.Get("after"), limit, order == "asc")
		if err != nil {
			if errors.Is(err, video.ErrTaskNotFound) {
				err = apierr.Invalid("after", "Invalid 'after': no video with that id.")
			}
			h.fail(w, info, err)
			return
		}
	}
	lifecycle.WriteJSON(w, info, false, &out, videoList(ts, more))
}

// videoContent serves GET /v1/videos/{id}/content for the task's account.
func (h *Handler) videoContent(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	var out lifecycle.Outcome
	defer h.Record(info, &out)
	t, ok := h.task(w, r, info, "videos.content")
	if !ok {
		return
	}
	if v := r.URL.Query().Get("variant"); v != "" && v != "video" {
		h.fail(w, info, apierr.Invalid("variant", "Invalid 'variant': '%s'. This gateway serves only the 'video' variant.", v))
		return
	}
	if t.State != store.TaskCompleted {
		h.fail(w, info, apierr.Broken("video_not_ready", "", "The video is not ready: its status is '%s'.", openaiStatus(t.State)))
		return
	}
	h.serveVideo(w, r, info, t)
}

// signedVideoContent serves the video_url links: no Authorization header,
// a signature valid until the task expires.
func (h *Handler) signedVideoContent(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "videos.file"
	defer h.Record(info, &lifecycle.Outcome{})
	if h.Videos == nil {
		h.fail(w, info, videoError(video.ErrTaskNotFound))
		return
	}
	q := r.URL.Query()
	if err := h.Videos.Links.CheckPath(r.URL.Path, q.Get("exp"), q.Get("sig")); err != nil {
		h.fail(w, info, &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypeInvalidRequest, Code: apierr.CodeForbidden,
			Message: "This video link is invalid or has expired; read the task again for a fresh video_url.", Err: err})
		return
	}
	t, err := h.Videos.Service.Completed(r.Context(), videoID(r))
	if err != nil {
		h.fail(w, info, videoError(err))
		return
	}
	h.serveVideo(w, r, info, t)
}

// serveVideo streams the task's stored video, with Range support where
// the store can seek.
func (h *Handler) serveVideo(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, t store.VideoTask) {
	obj, err := h.Videos.Files.OpenVideo(r.Context(), t.ContentKey)
	if err != nil {
		if errors.Is(err, imagestore.ErrNotFound) {
			err = video.ErrTaskNotFound
		}
		h.fail(w, info, videoError(err))
		return
	}
	defer obj.Body.Close()
	hd := w.Header()
	hd.Set("Content-Type", t.ContentType)
	hd.Set("Cache-Control", "private, max-age=3600")
	hd.Set("Content-Disposition", `inline; filename="`+t.ID+extension(t.ContentType)+`"`)
	hd.Set("X-Content-Type-Options", "nosniff")
	info.Status = http.StatusOK
	if rs, ok := obj.Body.(io.ReadSeeker); ok {
		http.ServeContent(w, r, "", t.FinishedAt, rs)
		return
	}
	if obj.Size >= 0 {
		hd.Set("Content-Length", strconv.FormatInt(obj.Size, 10))
	}
	if _, err := io.Copy(w, obj.Body); err != nil {
		info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, apierr.CodeClientClosed, err.Error()
	}
}

func extension(contentType string) string {
	if contentType == "video/webm" {
		return ".webm"
	}
	return ".mp4"
}

// videoURL is the signed download link of a completed task, valid until
// the task expires; "" otherwise.
func (h *Handler) videoURL(r *http.Request, t store.VideoTask) string {
	if t.State != store.TaskCompleted {
		return ""
	}
	path := "/v1/videos/generations/" + t.ID + "/content"
	return strings.TrimRight(h.Videos.Links.PublicBase(h.Origin.Base(r)), "/") + path + "?" + h.Videos.Links.SignPath(path, t.ExpiresAt)
}

// videoError maps the video service's errors.
func videoError(err error) error {
	if errors.Is(err, video.ErrTaskNotFound) {
		return &apierr.Error{Status: http.StatusNotFound, Type: apierr.TypeInvalidRequest, Code: apierr.CodeTaskNotFound,
			Message: "No video task with that id: it does not exist, belongs to another account, or has expired (tasks are kept for 24 hours)."}
	}
	if errors.Is(err, video.ErrTaskRunning) {
		return &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: codeVideoInProgress,
			Message: "The video is still being generated and its vendor cannot cancel it: the vendor bills it either way, " +
				"so it will be charged when it completes. Delete it once its status is completed or failed."}
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	return apierr.Internal(err)
}
