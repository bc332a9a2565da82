package gemini

import (
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

// imagenFake answers every :predict with a file from testdata/imagen/
// (or a status and body) and keeps the last request.
type imagenFake struct {
	mu     sync.Mutex
	path   string
	body   []byte
	header http.Header
	status int
	answer []byte
}

func newImagenFake(t *testing.T, status int, answer []byte) (*imagenFake, *httptest.Server) {
	f := &imagenFake{status: status, answer: answer}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.path, f.body, f.header = r.URL.Path, b, r.Header.Clone()
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(f.status)
		_, _ = w.Write(f.answer)
	}))
	t.Cleanup(s.Close)
	return f, s
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/imagen/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The request is Imagen's predict call; the answer keeps the images that
// were not filtered, with the enhanced prompt as revised_prompt.
func TestImagenGenerate(t *testing.T) {
	f, s := newImagenFake(t, 200, readFile(t, "response.json"))
	c := testClient(t, s.URL)
	res, err := c.GenerateImages(context.Background(), &provider.ImageRequest{PublicModel: "imagen", UpstreamModel: "imagen-3.0-generate-002",
		Prompt: "a red square", N: 3, Size: "1408x768", Quality: "hd", Style: "vivid", User: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if f.path != "/v1beta/models/imagen-3.0-generate-002:predict" || f.header.Get("X-Goog-Api-Key") != "k" {
		t.Fatalf("sent to %s with %v", f.path, f.header)
	}
	golden(t, "testdata/imagen/request.golden.json", canonical(t, f.body))
	if len(res.Images) != 2 || res.Images[0].MIMEType != "image/png" || res.Images[0].B64JSON == "" ||
		res.Images[1].RevisedPrompt != "A small red square, centered, on a plain white background." {
		t.Fatalf("images %+v", res.Images)
	}
	if res.Size != "1408x768" || res.Created != 1767225600 {
		t.Fatalf("size %s created %d", res.Size, res.Created)
	}
}

func TestImagenAspect(t *testing.T) {
	for size, want := range map[string]string{"": "", "auto": "", "1024x1024": "1:1", "512x512": "1:1", "896x1280": "3:4",
		"1280x896": "4:3", "768x1408": "9:16", "1408x768": "16:9", "1920x1080": "16:9", "1536x1024": "!", "1024x1023": "!", "x": "!"} {
		got, ok := imagenAspect(size)
		if !ok {
			got = "!"
		}
		if got != want {
			t.Errorf("imagenAspect(%q) = %q, want %q", size, got, want)
		}
	}
}

// Requests Imagen cannot serve are refused before it is called; its
// refusals and failures map to the client's errors.
func TestImagenErrors(t *testing.T) {
	tests := []struct {
		name   string
		req    provider.ImageRequest
		status int
		answer string
		want   int
		param  string
		code   string
	}{
		{"not imagen", provider.ImageRequest{UpstreamModel: "gemini-2.5-flash", N: 1}, 200, "", 400, "model", "invalid_request_error"},
		{"five images", provider.ImageRequest{UpstreamModel: "imagen-3.0-generate-002", N: 5}, 200, "", 400, "n", "invalid_request_error"},
		{"size", provider.ImageRequest{UpstreamModel: "imagen-3.0-generate-002", N: 1, Size: "1536x1024"}, 200, "", 400, "size", "invalid_request_error"},
		{"all filtered", provider.ImageRequest{UpstreamModel: "imagen-3.0-generate-002", N: 1}, 200, string(readFile(t, "filtered.json")), 400, "prompt", "content_policy_violation"},
		{"rate limited", provider.ImageRequest{UpstreamModel: "imagen-3.0-generate-002", N: 1}, 429,
			`{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`, 429, "", "rate_limit_exceeded"},
		{"bad key", provider.ImageRequest{UpstreamModel: "imagen-3.0-generate-002", N: 1}, 403,
			`{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}`, 502, "", "upstream_auth_failed"},
		{"malformed", provider.ImageRequest{UpstreamModel: "imagen-3.0-generate-002", N: 1}, 200, `{"predictions":[`, 502, "", "bad_upstream_response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, s := newImagenFake(t, tt.status, []byte(tt.answer))
			tt.req.Prompt, tt.req.PublicModel = "x", "m"
			_, err := testClient(t, s.URL).GenerateImages(context.Background(), &tt.req)
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != tt.want || e.Param != tt.param || e.Code != tt.code {
				t.Fatalf("got %v, want %d %s %s", err, tt.want, tt.param, tt.code)
			}
			if tt.answer == "" && f.body != nil {
				t.Fatal("Imagen was called for a request it cannot serve")
			}
			if tt.code == "content_policy_violation" && !strings.Contains(e.Message, "safety filter threshold") {
				t.Fatalf("message %q", e.Message)
			}
		})
	}
}

// The official SDK is the oracle: for the same request it sends the same
// predict body as the adapter, and it accepts the recorded answer.
func TestImagenMatchesSDK(t *testing.T) {
	f, s := newImagenFake(t, 200, readFile(t, "response.json"))
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendVertexAI, APIKey: "k",
		HTTPOptions: genai.HTTPOptions{BaseURL: s.URL, APIVersion: "v1beta"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Models.GenerateImages(ctx, "imagen-3.0-generate-002", "a red square",
		&genai.GenerateImagesConfig{NumberOfImages: 2, AspectRatio: "9:16", IncludeRAIReason: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(f.path, "/models/imagen-3.0-generate-002:predict") {
		t.Fatalf("the SDK posted to %s", f.path)
	}
	sdkBody := canonical(t, f.body)
	if len(res.GeneratedImages) != 3 || len(res.GeneratedImages[0].Image.ImageBytes) == 0 ||
		res.GeneratedImages[0].Image.MIMEType != "image/png" || res.GeneratedImages[1].RAIFilteredReason == "" ||
		res.GeneratedImages[2].EnhancedPrompt == "" {
		t.Fatalf("the SDK read the recorded answer as %+v", res.GeneratedImages)
	}
	if _, err := testClient(t, s.URL).GenerateImages(ctx, &provider.ImageRequest{UpstreamModel: "imagen-3.0-generate-002",
		Prompt: "a red square", N: 2, Size: "768x1408"}); err != nil {
		t.Fatal(err)
	}
	if ours := canonical(t, f.body); string(ours) != string(sdkBody) {
		t.Fatalf("adapter sent\n%s\nthe SDK sends\n%s", ours, sdkBody)
	}
}

// The fake Imagen's recorded answers (providertest/testdata/imagen) are
// ones the official SDK reads.
func TestImagenFixturesOracle(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "providertest", "testdata", "imagen", "*.json"))
	if len(files) == 0 {
		t.Fatal("no imagen fixtures")
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			_, s := newImagenFake(t, 200, b)
			client, err := genai.NewClient(context.Background(), &genai.ClientConfig{Backend: genai.BackendVertexAI, APIKey: "k",
				HTTPOptions: genai.HTTPOptions{BaseURL: s.URL, APIVersion: "v1beta"}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := client.Models.GenerateImages(context.Background(), "imagen-3.0-generate-002", "x", nil)
			if err != nil || len(res.GeneratedImages) == 0 {
				t.Fatalf("the SDK refused the fixture: %v", err)
			}
			for _, img := range res.GeneratedImages {
				if (img.Image == nil || len(img.Image.ImageBytes) == 0) && img.RAIFilteredReason == "" {
					t.Fatalf("an entry with neither an image nor a filter reason: %+v", img)
				}
			}
		})
	}
}
