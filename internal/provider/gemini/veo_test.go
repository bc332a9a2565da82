package gemini

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

const (
	veoOp     = "models/veo-3.1-generate-preview/operations/8k2lfrn7sxqs"
	googleAPI = "https://generativelanguage.googleapis.com"
)

// veoFake answers every request with one status and body (googleAPI in
// it replaced by its own URL) and keeps the last request.
type veoFake struct {
	*httptest.Server
	mu                       sync.Mutex
	method, path, query, key string
	body                     []byte
	status                   int
	answer                   string
}

func newVeoFake(t *testing.T, status int, answer string) *veoFake {
	f := &veoFake{status: status}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.method, f.path, f.query, f.key, f.body = r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("X-Goog-Api-Key"), b
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(f.status)
		_, _ = io.WriteString(w, f.answer)
	}))
	f.answer = strings.ReplaceAll(answer, googleAPI, f.URL)
	t.Cleanup(f.Close)
	return f
}

func veoFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "veo", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var firstFrame = []byte("\x89PNG\r\n\x1a\nfirst frame")

// The create call is predictLongRunning with the size as aspect ratio and
// resolution; sizes Veo does not make are refused before it is called.
func TestVeoStart(t *testing.T) {
	tests := []struct {
		size    string
		seconds int
		params  string // the parameters sent; "" when refused
	}{
		{"1280x720", 8, `{"aspectRatio":"16:9","durationSeconds":8}`},
		{"720x1280", 4, `{"aspectRatio":"9:16","durationSeconds":4}`},
		{"1920x1080", 8, `{"aspectRatio":"16:9","durationSeconds":8,"resolution":"1080p"}`},
		{"1080x1920", 6, `{"aspectRatio":"9:16","durationSeconds":6,"resolution":"1080p"}`},
		{"1024x1024", 8, ""},
		{"", 8, ""},
		{"1280x720x1", 8, ""},
	}
	for _, tt := range tests {
		t.Run(tt.size, func(t *testing.T) {
			f := newVeoFake(t, 200, veoFixture(t, "operation.json"))
			job, err := testClient(t, f.URL).StartVideo(context.Background(), &provider.VideoRequest{PublicModel: "veo",
				UpstreamModel: "veo-3.1-generate-preview", Prompt: "A cat", Seconds: tt.seconds, Size: tt.size})
			if tt.params == "" {
				var e *apierr.Error
				if !errors.As(err, &e) || e.Status != 400 || e.Param != "size" || f.method != "" {
					t.Fatalf("got %v; upstream called: %q", err, f.method)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if job != (provider.VideoJob{ID: veoOp, State: provider.VideoQueued}) {
				t.Fatalf("job %+v", job)
			}
			if f.method != "POST" || f.path != "/v1beta/models/veo-3.1-generate-preview:predictLongRunning" || f.key != "k" || f.query != "" {
				t.Fatalf("sent %s %s?%s key %q", f.method, f.path, f.query, f.key)
			}
			want := `{"instances":[{"prompt":"A cat"}],"parameters":` + tt.params + `}`
			if string(f.body) != want {
				t.Fatalf("sent\n%s\nwant\n%s", f.body, want)
			}
		})
	}
}

// With a first frame: the recorded body, and the official SDK sends the
// same for the same request.
func TestVeoMatchesSDK(t *testing.T) {
	dur := int32(8)
	for _, tt := range []struct {
		size string
		cfg  genai.GenerateVideosConfig
	}{
		{"1080x1920", genai.GenerateVideosConfig{AspectRatio: "9:16", DurationSeconds: &dur, Resolution: "1080p"}},
		{"1280x720", genai.GenerateVideosConfig{AspectRatio: "16:9", DurationSeconds: &dur}},
	} {
		t.Run(tt.size, func(t *testing.T) {
			f := newVeoFake(t, 200, veoFixture(t, "operation.json"))
			ctx := context.Background()
			client, err := genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendGeminiAPI, APIKey: "k",
				HTTPOptions: genai.HTTPOptions{BaseURL: f.URL, APIVersion: "v1beta"}})
			if err != nil {
				t.Fatal(err)
			}
			op, err := client.Models.GenerateVideosFromSource(ctx, "veo-3.1-generate-preview", &genai.GenerateVideosSource{Prompt: "A cat at dawn",
				Image: &genai.Image{ImageBytes: firstFrame, MIMEType: "image/png"}}, &tt.cfg)
			if err != nil || op.Name != veoOp {
				t.Fatalf("the SDK: %+v %v", op, err)
			}
			sdkPath, sdkBody := f.path, canonical(t, f.body)
			if _, err := testClient(t, f.URL).StartVideo(ctx, &provider.VideoRequest{UpstreamModel: "veo-3.1-generate-preview",
				Prompt: "A cat at dawn", Seconds: 8, Size: tt.size, Image: &provider.InputImage{Data: firstFrame, MIMEType: "image/png"}}); err != nil {
				t.Fatal(err)
			}
			ours := canonical(t, f.body)
			if f.path != sdkPath || !bytes.Equal(ours, sdkBody) {
				t.Fatalf("adapter sent %s\n%s\nthe SDK sends %s\n%s", f.path, ours, sdkPath, sdkBody)
			}
			if tt.size == "1080x1920" {
				golden(t, "testdata/veo/request.golden.json", ours)
			}
		})
	}
}

// Every operation state maps to a job; the poll is GET {base}/{name}.
func TestVeoStatusMapping(t *testing.T) {
	tests := []struct {
		name, answer string
		want         provider.VideoJob // Ref "HOST..." is relative to the fake
		code         string            // the error's code when the answer is refused
	}{
		{"accepted", veoFixture(t, "operation.json"), provider.VideoJob{State: provider.VideoRunning}, ""},
		{"running", veoFixture(t, "running.json"), provider.VideoJob{State: provider.VideoRunning}, ""},
		{"done", veoFixture(t, "done.json"), provider.VideoJob{State: provider.VideoSucceeded, Progress: 100,
			Ref: "HOST/v1beta/files/3wbpbcqlv9yq:download?alt=media"}, ""},
		{"failed", veoFixture(t, "error.json"), provider.VideoJob{State: provider.VideoFailed,
			Error: "Video generation failed due to an internal error. Please try again."}, ""},
		{"safety filter", veoFixture(t, "filtered.json"), provider.VideoJob{State: provider.VideoFailed,
			Error: "The upstream provider's safety system blocked the video. Your prompt may violate our policies. Please try rephrasing it."}, ""},
		{"done without anything", `{"name":"` + veoOp + `","done":true,"response":{"generateVideoResponse":{}}}`,
			provider.VideoJob{State: provider.VideoFailed, Error: "The upstream provider finished without a video."}, ""},
		{"file on a foreign host", strings.ReplaceAll(veoFixture(t, "done.json"), googleAPI, "https://files.example.net"),
			provider.VideoJob{State: provider.VideoFailed, Error: "The upstream provider named a download location on another host; the gateway refused it."}, ""},
		{"file over another scheme", strings.ReplaceAll(veoFixture(t, "done.json"), googleAPI, "HTTPS"),
			provider.VideoJob{State: provider.VideoFailed, Error: "The upstream provider named a download location on another host; the gateway refused it."}, ""},
		{"malformed JSON", `{"name":"` + veoOp + `","done":`, provider.VideoJob{}, apierr.CodeBadUpstreamResponse},
		{"name that leaves the base", `{"name":"../../evil/operations/x","done":false}`, provider.VideoJob{}, apierr.CodeBadUpstreamResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newVeoFake(t, 200, tt.answer)
			// "HTTPS" stands for the fake's host reached over https.
			f.answer = strings.ReplaceAll(f.answer, "HTTPS", strings.Replace(f.URL, "http://", "https://", 1))
			job, err := testClient(t, f.URL).VideoStatus(context.Background(), "veo-3.1-generate-preview", veoOp)
			if f.method != "GET" || f.path != "/v1beta/"+veoOp || f.key != "k" || len(f.body) != 0 {
				t.Fatalf("sent %s %s key %q body %q", f.method, f.path, f.key, f.body)
			}
			if tt.code != "" {
				var e *apierr.Error
				if !errors.As(err, &e) || e.Code != tt.code {
					t.Fatalf("got %+v, %v; want %s", job, err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.ID = veoOp
			tt.want.Ref = strings.Replace(tt.want.Ref, "HOST", f.URL, 1)
			if job != tt.want {
				t.Fatalf("got  %+v\nwant %+v", job, tt.want)
			}
		})
	}
}

// The recorded operations are ones the official SDK reads.
func TestVeoFixturesOracle(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join("testdata", "veo", "*.json"))
	for _, name := range names {
		base := filepath.Base(name)
		if strings.Contains(base, "golden") {
			continue
		}
		t.Run(base, func(t *testing.T) {
			f := newVeoFake(t, 200, veoFixture(t, base))
			ctx := context.Background()
			client, err := genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendGeminiAPI, APIKey: "k",
				HTTPOptions: genai.HTTPOptions{BaseURL: f.URL, APIVersion: "v1beta"}})
			if err != nil {
				t.Fatal(err)
			}
			op, err := client.Operations.GetVideosOperation(ctx, &genai.GenerateVideosOperation{Name: veoOp}, nil)
			if err != nil || op.Name != veoOp || f.path != "/v1beta/"+veoOp {
				t.Fatalf("the SDK polled %s: %+v %v", f.path, op, err)
			}
			switch base {
			case "done.json":
				if op.Response == nil || len(op.Response.GeneratedVideos) != 1 || !strings.HasPrefix(op.Response.GeneratedVideos[0].Video.URI, f.URL+"/v1beta/files/") {
					t.Fatalf("the SDK read %+v", op.Response)
				}
			case "filtered.json":
				if op.Response == nil || len(op.Response.RAIMediaFilteredReasons) != 1 || op.Response.RAIMediaFilteredCount != 1 {
					t.Fatalf("the SDK read %+v", op.Response)
				}
			case "error.json":
				if !op.Done || op.Error["message"] == nil {
					t.Fatalf("the SDK read %+v", op)
				}
			default:
				if op.Done {
					t.Fatal("a running fixture reads as done")
				}
			}
		})
	}
}

// The download streams the file with the key header, before it has all
// arrived, with the vendor's type and length.
func TestVeoContentStreams(t *testing.T) {
	first, rest := []byte("\x00\x00\x00\x18ftypmp42"), bytes.Repeat([]byte("v"), 500)
	release := make(chan struct{})
	var path, query, key string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, query, key = r.URL.Path, r.URL.RawQuery, r.Header.Get("X-Goog-Api-Key")
		w.Header().Set("Content-Type", "video/mp4")
		w.Header().Set("Content-Length", "512")
		_, _ = w.Write(first)
		w.(http.Flusher).Flush()
		<-release
		_, _ = w.Write(rest)
	}))
	defer s.Close()
	defer close(release)
	vc, err := testClient(t, s.URL).VideoContent(context.Background(), provider.VideoJob{ID: veoOp, State: provider.VideoSucceeded,
		Ref: s.URL + "/v1beta/files/3wbpbcqlv9yq:download?alt=media"})
	if err != nil {
		t.Fatal(err)
	}
	defer vc.Body.Close()
	if path != "/v1beta/files/3wbpbcqlv9yq:download" || query != "alt=media" || key != "k" {
		t.Fatalf("sent %s?%s key %q", path, query, key)
	}
	if vc.Size != 512 || vc.ContentType != "video/mp4" {
		t.Fatalf("size %d type %q", vc.Size, vc.ContentType)
	}
	got := make([]byte, len(first))
	if _, err := io.ReadFull(vc.Body, got); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("first bytes %q, %v", got, err)
	}
	release <- struct{}{}
	if tail, err := io.ReadAll(vc.Body); err != nil || !bytes.Equal(tail, rest) {
		t.Fatalf("rest: %d bytes, %v", len(tail), err)
	}
}

// The key never goes to a host other than the base URL's: a Ref elsewhere
// is refused unsent, and a redirect elsewhere loses the key.
func TestVeoContentKeepsKeyHome(t *testing.T) {
	var got http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		_, _ = io.WriteString(w, "mp4")
	}))
	defer other.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/blob", http.StatusFound)
	}))
	defer up.Close()
	c := testClient(t, up.URL)
	for _, ref := range []string{other.URL + "/v1beta/files/x:download?alt=media", "", "http://k@" + strings.TrimPrefix(up.URL, "http://") + "/f"} {
		if _, err := c.VideoContent(context.Background(), provider.VideoJob{ID: veoOp, Ref: ref}); err == nil || got != nil {
			t.Fatalf("ref %q: err %v, the other host got %v", ref, err, got)
		}
	}
	vc, err := c.VideoContent(context.Background(), provider.VideoJob{ID: veoOp, Ref: up.URL + "/v1beta/files/x:download?alt=media"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(vc.Body)
	_ = vc.Body.Close()
	if string(b) != "mp4" || got == nil || got.Get("X-Goog-Api-Key") != "" {
		t.Fatalf("body %q, the other host got %v", b, got)
	}
}

// A 404 for the operation or its file means the job is gone.
func TestVeoGone(t *testing.T) {
	f := newVeoFake(t, 404, `{"error":{"code":404,"message":"Operation not found.","status":"NOT_FOUND"}}`)
	c := testClient(t, f.URL)
	_, err := c.VideoStatus(context.Background(), "veo-3.1-generate-preview", veoOp)
	var e *apierr.Error
	if !errors.Is(err, provider.ErrVideoGone) || !errors.As(err, &e) || e.Status != 502 {
		t.Fatalf("status: %v", err)
	}
	if _, err := c.VideoContent(context.Background(), provider.VideoJob{ID: veoOp, Ref: f.URL + "/v1beta/files/x:download?alt=media"}); !errors.Is(err, provider.ErrVideoGone) {
		t.Fatalf("content: %v", err)
	}
	f.status = 500
	if _, err := c.VideoStatus(context.Background(), "veo-3.1-generate-preview", veoOp); err == nil || errors.Is(err, provider.ErrVideoGone) {
		t.Fatalf("a 500 is not gone: %v", err)
	}
	f.method = ""
	if _, err := c.VideoStatus(context.Background(), "veo", "../../../files/x"); err == nil || f.method != "" {
		t.Fatalf("a name outside the API was polled: %v", err)
	}
}

// The vendor's refusals of a create map to the client's errors.
func TestVeoStartErrors(t *testing.T) {
	tests := []struct {
		status int
		answer string
		want   int
		code   string
	}{
		{400, `{"error":{"code":400,"message":"durationSeconds must be 4, 6 or 8.","status":"INVALID_ARGUMENT"}}`, 400, "invalid_argument"},
		{401, `{"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}`, 502, apierr.CodeUpstreamAuth},
		{429, `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`, 429, apierr.CodeRateLimitExceeded},
		{500, `{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}`, 502, apierr.CodeUpstreamError},
		{200, `{"name":`, 502, apierr.CodeBadUpstreamResponse},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			f := newVeoFake(t, tt.status, tt.answer)
			_, err := testClient(t, f.URL).StartVideo(context.Background(), &provider.VideoRequest{UpstreamModel: "veo-3.1-generate-preview",
				Prompt: "x", Seconds: 8, Size: "1280x720"})
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != tt.want || e.Code != tt.code {
				t.Fatalf("got %v, want %d %s", err, tt.want, tt.code)
			}
		})
	}
}

// The Gemini API documents no cancel for Veo operations.
func TestVeoNoCancel(t *testing.T) {
	if _, ok := any(&Client{}).(provider.VideoCanceller); ok {
		t.Fatal("Client claims a cancel the Gemini API does not document")
	}
}

// A failed operation whose message echoes the API key (or a configured
// header's value) reaches the task without them: the poller shows it to
// the client.
func TestVeoFailureRedacted(t *testing.T) {
	const key, header = "veo-upstream-secret-1234", "veo-header-secret-5678"
	f := newVeoFake(t, 200, `{"name":"`+veoOp+`","done":true,"error":{"code":3,"message":"key `+key+` and header `+header+` refused"}}`)
	c, err := New(Options{Name: "veo", BaseURL: f.URL, APIKey: key, Headers: map[string]string{"X-Extra": header}})
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.VideoStatus(context.Background(), "veo-3.1-generate-preview", veoOp)
	if err != nil {
		t.Fatal(err)
	}
	if want := "key [redacted] and header [redacted] refused"; job.State != provider.VideoFailed || job.Error != want {
		t.Errorf("got %+v, want failed with %q", job, want)
	}
}
