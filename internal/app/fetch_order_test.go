package app_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// imageServer serves one PNG at any path and counts the requests it gets.
func imageServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	png := testPNG(t, 32, 32, false)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// A request whose account cannot pay for it, whose key may not use the
// model, whose model has no price, or whose parameters are refused
// downloads nothing: every image a client names by URL (a video's
// reference image, a chat image for Gemini) is fetched only once the
// request is admitted and its cost reserved.
func TestImageURLsFetchedAfterAdmission(t *testing.T) {
	images, hits := imageServer(t)
	up := providertest.NewOpenAI(t)
	gem := providertest.NewGemini(t)
	cfg := testConfig(t, up.URL)
	videoConfig(cfg)
	cfg.Providers = append(cfg.Providers, config.Provider{Name: "fake-gemini", Type: "gemini", BaseURL: gem.URL, APIKey: "x",
		Models: append(geminiModels, config.ModelRef{ID: "gemini-unpriced", Upstream: "gemini-unpriced"}), Weight: 1,
		Timeout: config.Duration(3 * time.Second), IdleTimeout: config.Duration(time.Second)})
	in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
	for _, m := range geminiModels {
		cfg.Models = append(cfg.Models, config.ModelConfig{ID: m.ID, Input: &in, Output: &out})
	}
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test", FetchPrivate: true})
	g.upstream = up

	broke := g.newPayer("default", 0, 0, time.Time{})              // $0
	capped := g.newPayer("default", money.Unit, 1, time.Time{})    // a key whose cap is below any reservation
	basic := g.newPayer("basic", money.Unit, 0, time.Time{})       // a group without these models
	funded := g.newPayer("default", 10*money.Unit, 0, time.Time{}) // can pay
	url := images.URL + "/reference.png"
	video := func(extra string) string {
		return `{"model":"priced-video","prompt":"a cat","input_reference":{"image_url":"` + url + `"}` + extra + `}`
	}
	chat := func(model string) string {
		return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},`+
			`{"type":"image_url","image_url":{"url":%q}}]}]}`, model, url)
	}
	tests := []struct {
		name, path, key, body string
		status                int
		code                  string
	}{
		{"video, $0 balance", "/v1/videos", broke.secret, video(""), 429, "insufficient_quota"},
		{"video, spec endpoint, $0 balance", "/v1/videos/generations", broke.secret,
			`{"model":"priced-video","prompt":"a cat","image":"` + url + `"}`, 429, "insufficient_quota"},
		{"video, key cap reached", "/v1/videos", capped.secret, video(""), 429, "insufficient_quota"},
		{"video, model not allowed", "/v1/videos", basic.secret, video(""), 404, "model_not_found"},
		{"video, bad seconds", "/v1/videos", funded.secret, video(`,"seconds":"7"`), 400, ""},
		{"gemini chat, $0 balance", "/v1/chat/completions", broke.secret, chat("gemini-test"), 429, "insufficient_quota"},
		{"gemini chat, key cap reached", "/v1/chat/completions", capped.secret, chat("gemini-test"), 429, "insufficient_quota"},
		{"gemini chat, model not allowed", "/v1/chat/completions", basic.secret, chat("gemini-test"), 404, "model_not_found"},
		{"gemini chat, model not priced", "/v1/chat/completions", funded.secret, chat("gemini-unpriced"), 503, "model_not_priced"},
		{"gemini chat, bad parameter", "/v1/chat/completions", funded.secret,
			strings.Replace(chat("gemini-test"), `"messages"`, `"temperature":"hot","messages"`, 1), 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := hits.Load()
			resp, b := g.post(tt.path, "application/json", tt.key, strings.NewReader(tt.body))
			if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.code) {
				t.Errorf("%d %s, want %d %s", resp.StatusCode, b, tt.status, tt.code)
			}
			if n := hits.Load() - before; n != 0 {
				t.Errorf("the image server was hit %d times for a refused request", n)
			}
		})
	}
	if n := len(gem.Received()); n != 0 {
		t.Fatalf("Gemini received %d requests", n)
	}

	// The same requests from an account that can pay download the image
	// (so the server is reachable and the zeros above mean something).
	for _, req := range []struct{ path, body string }{{"/v1/videos", video("")}, {"/v1/chat/completions", chat("gemini-test")}} {
		before := hits.Load()
		resp, b := g.post(req.path, "application/json", funded.secret, strings.NewReader(req.body))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", req.path, resp.StatusCode, b)
		}
		if n := hits.Load() - before; n != 1 {
			t.Fatalf("%s: the image server was hit %d times, want 1", req.path, n)
		}
	}
}
