package openaicompat

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

// soraFake is an OpenAI video API that answers every request with one
// status and body and keeps what it received.
type soraFake struct {
	*httptest.Server
	mu                   sync.Mutex
	method, path, accept string
	header               http.Header
	body                 []byte
	status               int
	ctype, answer        string
}

func newSoraFake(t *testing.T, status int, answer string) *soraFake {
	f := &soraFake{status: status, ctype: "application/json", answer: answer}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.method, f.path, f.header, f.body = r.Method, r.URL.Path, r.Header.Clone(), b
		f.mu.Unlock()
		w.Header().Set("Content-Type", f.ctype)
		w.WriteHeader(f.status)
		_, _ = io.WriteString(w, f.answer)
	}))
	t.Cleanup(f.Close)
	return f
}

func soraClient(t *testing.T, base string) *Client {
	t.Helper()
	c, err := New(Options{Name: "sora", BaseURL: base + "/v1/", APIKey: "sk-up", Headers: map[string]string{"X-Title": "mg"},
		Timeout: 5 * time.Second, IdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func videoFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "video", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type formPart struct{ Name, Filename, ContentType, Data string }

// readForm decodes a multipart/form-data body into its parts, in order.
func readForm(t *testing.T, contentType string, body []byte) []formPart {
	t.Helper()
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("Content-Type %q: %v", contentType, err)
	}
	var parts []formPart
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return parts
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		parts = append(parts, formPart{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), string(b)})
	}
}

// The create form is what the official SDK sends for the same
// VideoNewParams, part for part, and what the spec documents.
func TestStartVideoForm(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfirst frame")
	tests := []struct {
		name   string
		req    provider.VideoRequest
		sdk    openai.VideoNewParams
		want   []formPart
		sdkImg bool
	}{
		{"text only",
			provider.VideoRequest{PublicModel: "video", UpstreamModel: "sora-2", Prompt: "A cat", Seconds: 8, Size: "1280x720"},
			openai.VideoNewParams{Model: "sora-2", Prompt: "A cat", Seconds: "8", Size: "1280x720"},
			[]formPart{{"model", "", "", "sora-2"}, {"prompt", "", "", "A cat"}, {"seconds", "", "", "8"}, {"size", "", "", "1280x720"}}, false},
		{"with a first frame",
			provider.VideoRequest{UpstreamModel: "sora-2-pro", Prompt: "Waves", Seconds: 12, Size: "720x1280",
				Image: &provider.InputImage{Data: png, MIMEType: "image/png"}},
			openai.VideoNewParams{Model: "sora-2-pro", Prompt: "Waves", Seconds: "12", Size: "720x1280"},
			[]formPart{{"input_reference", "input_reference.png", "image/png", string(png)}, {"model", "", "", "sora-2-pro"},
				{"prompt", "", "", "Waves"}, {"seconds", "", "", "12"}, {"size", "", "", "720x1280"}}, true},
		{"jpeg, vendor defaults",
			provider.VideoRequest{UpstreamModel: "sora-2", Prompt: "x", Image: &provider.InputImage{Data: []byte("\xff\xd8jpeg"), MIMEType: "image/jpeg"}},
			openai.VideoNewParams{Model: "sora-2", Prompt: "x"},
			[]formPart{{"input_reference", "input_reference.jpg", "image/jpeg", "\xff\xd8jpeg"}, {"model", "", "", "sora-2"}, {"prompt", "", "", "x"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSoraFake(t, 200, videoFixture(t, "queued.json"))
			job, err := soraClient(t, f.URL).StartVideo(context.Background(), &tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if job.State != provider.VideoQueued || !strings.HasPrefix(job.ID, "video_") {
				t.Fatalf("job %+v", job)
			}
			if f.method != "POST" || f.path != "/v1/videos" || f.header.Get("Authorization") != "Bearer sk-up" || f.header.Get("X-Title") != "mg" {
				t.Fatalf("sent %s %s %v", f.method, f.path, f.header)
			}
			ours := readForm(t, f.header.Get("Content-Type"), f.body)
			if len(ours) != len(tt.want) {
				t.Fatalf("parts %q, want %q", ours, tt.want)
			}
			for i := range ours {
				if ours[i] != tt.want[i] {
					t.Errorf("part %d = %q, want %q", i, ours[i], tt.want[i])
				}
			}

			sdk := openai.NewClient(option.WithBaseURL(f.URL+"/v1/"), option.WithAPIKey("sk-up"), option.WithMaxRetries(0))
			p := tt.sdk
			if tt.sdkImg {
				p.InputReference.OfFile = openai.File(bytes.NewReader([]byte(tt.want[0].Data)), tt.want[0].Filename, tt.want[0].ContentType)
			}
			if _, err := sdk.Videos.New(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			theirs := readForm(t, f.header.Get("Content-Type"), f.body)
			if len(theirs) != len(ours) {
				t.Fatalf("the SDK sends %q, the adapter %q", theirs, ours)
			}
			for i := range theirs {
				if theirs[i] != ours[i] {
					t.Errorf("part %d: the SDK sends %q, the adapter %q", i, theirs[i], ours[i])
				}
			}
		})
	}
}

// Every vendor status maps to a state, with progress, length and reason.
func TestVideoStatusMapping(t *testing.T) {
	tests := []struct {
		name, answer string
		want         provider.VideoJob
		code         string // the error's code when the answer is refused
	}{
		{"queued", videoFixture(t, "queued.json"), provider.VideoJob{State: provider.VideoQueued, Seconds: 8}, ""},
		{"in progress", videoFixture(t, "in_progress.json"), provider.VideoJob{State: provider.VideoRunning, Progress: 42, Seconds: 8}, ""},
		{"completed", videoFixture(t, "completed.json"), provider.VideoJob{State: provider.VideoSucceeded, Progress: 100, Seconds: 8}, ""},
		{"failed", videoFixture(t, "failed.json"), provider.VideoJob{State: provider.VideoFailed, Seconds: 8,
			Error: "Your request was blocked by our moderation system."}, ""},
		{"failed with a code only", `{"id":"video_1","status":"failed","progress":0,"seconds":"4","error":{"code":"internal_error","message":""}}`,
			provider.VideoJob{State: provider.VideoFailed, Seconds: 4, Error: "The upstream provider could not generate the video. (internal_error)"}, ""},
		{"numeric seconds from a compatible vendor", `{"id":"video_1","status":"in_progress","progress":7.5,"seconds":12}`,
			provider.VideoJob{State: provider.VideoRunning, Progress: 7, Seconds: 12}, ""},
		{"unknown status", `{"id":"video_1","status":"thinking"}`, provider.VideoJob{}, apierr.CodeBadUpstreamResponse},
		{"malformed JSON", `{"id":"video_1","status":`, provider.VideoJob{}, apierr.CodeBadUpstreamResponse},
		{"no id", `{"status":"queued"}`, provider.VideoJob{}, apierr.CodeBadUpstreamResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSoraFake(t, 200, tt.answer)
			job, err := soraClient(t, f.URL).VideoStatus(context.Background(), "sora-2", "video_1")
			if f.method != "GET" || f.path != "/v1/videos/video_1" || len(f.body) != 0 || f.header.Get("Content-Type") != "" {
				t.Fatalf("sent %s %s %q %v", f.method, f.path, f.body, f.header)
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
			tt.want.ID = job.ID
			if job != tt.want || job.ID == "" {
				t.Fatalf("got %+v, want %+v", job, tt.want)
			}
		})
	}
}

// The recorded answers are ones the official SDK reads.
func TestVideoFixturesOracle(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join("testdata", "video", "*.json"))
	if len(names) == 0 {
		t.Fatal("no fixtures")
	}
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			f := newSoraFake(t, 200, videoFixture(t, filepath.Base(name)))
			sdk := openai.NewClient(option.WithBaseURL(f.URL+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
			v, err := sdk.Videos.Get(context.Background(), "video_1")
			if err != nil {
				t.Fatal(err)
			}
			if v.ID == "" || v.Object != "video" || v.Seconds != "8" || v.Size != "1280x720" || !v.JSON.Status.Valid() {
				t.Fatalf("the SDK read %+v", v)
			}
			if v.Status == openai.VideoStatusFailed && v.Error.Message == "" {
				t.Fatal("a failed video without a reason")
			}
		})
	}
}

// The download is the upstream's body, handed over before it has all
// arrived, with the vendor's type and length.
func TestVideoContentStreams(t *testing.T) {
	first, rest := []byte("\x00\x00\x00\x18ftypmp42"), bytes.Repeat([]byte("m"), 1000)
	release := make(chan struct{})
	var path, accept, auth string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, accept, auth = r.URL.Path, r.Header.Get("Accept"), r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "video/mp4")
		w.Header().Set("Content-Length", "1012")
		_, _ = w.Write(first)
		w.(http.Flusher).Flush()
		<-release
		_, _ = w.Write(rest)
	}))
	defer s.Close()
	defer close(release) // a failing test must not leave the handler blocked
	vc, err := soraClient(t, s.URL).VideoContent(context.Background(), provider.VideoJob{ID: "video_1", State: provider.VideoSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	defer vc.Body.Close()
	if path != "/v1/videos/video_1/content" || accept != "video/mp4" || auth != "Bearer sk-up" {
		t.Fatalf("sent %s accept %q auth %q", path, accept, auth)
	}
	if vc.Size != 1012 || vc.ContentType != "video/mp4" {
		t.Fatalf("size %d type %q", vc.Size, vc.ContentType)
	}
	got := make([]byte, len(first))
	if _, err := io.ReadFull(vc.Body, got); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("first bytes %q, %v", got, err) // the server holds the rest until now
	}
	release <- struct{}{}
	tail, err := io.ReadAll(vc.Body)
	if err != nil || !bytes.Equal(tail, rest) {
		t.Fatalf("rest: %d bytes, %v", len(tail), err)
	}
	if err := vc.Body.Close(); err != nil {
		t.Fatal(err)
	}
}

// A 404 for the job means it is gone; the poller must be able to tell.
func TestVideoGone(t *testing.T) {
	f := newSoraFake(t, 404, `{"error":{"message":"Video with id 'video_1' not found.","type":"invalid_request_error","code":null}}`)
	c := soraClient(t, f.URL)
	_, err := c.VideoStatus(context.Background(), "sora-2", "video_1")
	var e *apierr.Error
	if !errors.Is(err, provider.ErrVideoGone) || !errors.As(err, &e) || e.Status != 502 {
		t.Fatalf("status: %v", err)
	}
	if _, err := c.VideoContent(context.Background(), provider.VideoJob{ID: "video_1"}); !errors.Is(err, provider.ErrVideoGone) {
		t.Fatalf("content: %v", err)
	}
	f.status = 500
	if _, err := c.VideoStatus(context.Background(), "sora-2", "video_1"); err == nil || errors.Is(err, provider.ErrVideoGone) {
		t.Fatalf("a 500 is not gone: %v", err)
	}
}

// The vendor's refusals of a create map to the client's errors.
func TestStartVideoErrors(t *testing.T) {
	tests := []struct {
		status       int
		answer       string
		want         int
		code, inText string
	}{
		{400, `{"error":{"message":"Invalid size '640x480'.","type":"invalid_request_error","param":"size","code":"invalid_value"}}`,
			400, "invalid_value", "640x480"},
		{401, `{"error":{"message":"Incorrect API key provided: sk-up.","type":"invalid_request_error","code":"invalid_api_key"}}`,
			502, apierr.CodeUpstreamAuth, ""},
		{429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, 429, apierr.CodeRateLimitExceeded, ""},
		{500, `{"error":{"message":"The server had an error","type":"server_error"}}`, 502, apierr.CodeUpstreamError, ""},
		{200, `{"id":"video_1","status":`, 502, apierr.CodeBadUpstreamResponse, ""},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			f := newSoraFake(t, tt.status, tt.answer)
			_, err := soraClient(t, f.URL).StartVideo(context.Background(), &provider.VideoRequest{UpstreamModel: "sora-2", Prompt: "x", Seconds: 4, Size: "720x1280"})
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != tt.want || e.Code != tt.code || !strings.Contains(e.Message, tt.inText) {
				t.Fatalf("got %v, want %d %s", err, tt.want, tt.code)
			}
			if strings.Contains(e.Message, "sk-up") {
				t.Fatal("the upstream key reached the client's message")
			}
		})
	}
}

// A download redirected to another host does not take the gateway's
// credentials along (Go keeps them for another port of the same host).
func TestVideoContentRedirectDropsKey(t *testing.T) {
	var got http.Header
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		_, _ = io.WriteString(w, "mp4")
	}))
	defer cdn.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, cdn.URL+"/v.mp4", http.StatusFound)
	}))
	defer up.Close()
	vc, err := soraClient(t, up.URL).VideoContent(context.Background(), provider.VideoJob{ID: "video_1"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(vc.Body)
	_ = vc.Body.Close()
	if string(b) != "mp4" || got == nil || got.Get("Authorization") != "" || got.Get("X-Title") != "" {
		t.Fatalf("body %q, the other host got %v", b, got)
	}
}

// OpenAI documents no cancel for a running video.
func TestNoVideoCancel(t *testing.T) {
	if _, ok := any(&Client{}).(provider.VideoCanceller); ok {
		t.Fatal("Client claims a cancel OpenAI does not have")
	}
}
