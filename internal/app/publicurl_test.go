package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/console"
)

// claim is where a client says it reached the gateway: the Host header
// and a proxy's X-Forwarded-Host and -Proto.
type claim struct{ host, fwdHost, fwdProto string }

func (c claim) apply(r *http.Request) {
	r.Host = c.host
	r.Header.Set("X-Forwarded-Host", c.fwdHost)
	r.Header.Set("X-Forwarded-Proto", c.fwdProto)
}

// claiming is the SDK option that sends every request with c (set on the
// wire: the SDK checks the request's own URL and Host).
func claiming(c claim) option.RequestOption {
	return option.WithHTTPClient(&http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		c.apply(r)
		return http.DefaultTransport.RoundTrip(r)
	})})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// links collects every kind of absolute URL the gateway makes, each for a
// request that claims c: the OAuth redirect_uri, the Stripe success and
// cancel URLs, an image link (through the SDK) and a video link.
func (e *consoleEnv) links(c claim) map[string]string {
	t := e.t
	t.Helper()
	out := map[string]string{}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// do sends with b's cookies (the jar would pick them by the forged
	// Host, and leave out the Secure ones an https public_url makes).
	do := func(b *conUser, method, path, body string, header map[string]string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, e.g.URL+path, strings.NewReader(body))
		c.apply(req)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		if b != nil {
			u, _ := url.Parse(e.g.URL + path)
			u.Scheme = "https"
			for _, ck := range b.nf.Jar.Cookies(u) {
				req.AddCookie(ck)
			}
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, data
	}

	resp, _ := do(nil, http.MethodGet, "/console/login/github", "", nil)
	auth, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil {
		t.Fatalf("login: %d %v", resp.StatusCode, err)
	}
	out["redirect_uri"] = auth.Query().Get("redirect_uri")
	for _, ck := range resp.Cookies() {
		if ck.Name == console.FlowCookie && ck.Secure != strings.HasPrefix(out["redirect_uri"], "https://") {
			t.Errorf("flow cookie Secure %v with redirect_uri %s", ck.Secure, out["redirect_uri"])
		}
	}

	u := e.adminSignIn() // no OAuth round trip: public_url may name no real host
	resp, body := do(u, http.MethodPost, "/console/api/topups", `{"amount":"10","method":"card"}`,
		map[string]string{"Content-Type": "application/json", console.CSRFHeader: u.csrf})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("top-up: %d %s", resp.StatusCode, body)
	}
	sessions := e.pay.Sessions()
	last := sessions[len(sessions)-1]
	out["stripe success_url"], out["stripe cancel_url"] = last.SuccessURL, last.CancelURL

	sdk := e.g.client(e.g.keys["default"], claiming(c))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	img, err := sdk.Images.Generate(ctx, oai.ImageGenerateParams{Model: "demo-image", Prompt: "a red square",
		Size: "256x256", ResponseFormat: oai.ImageGenerateParamsResponseFormatURL})
	if err != nil || len(img.Data) != 1 {
		t.Fatalf("image: %v", err)
	}
	out["image url"] = img.Data[0].URL

	key := map[string]string{"Authorization": "Bearer " + e.g.keys["default"], "Content-Type": "application/json"}
	resp, body = do(nil, http.MethodPost, "/v1/videos/generations", `{"model":"demo-video-landscape","prompt":"a fox","async":true}`, key)
	var task specTask
	if err := json.Unmarshal(body, &task); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("video: %d %s", resp.StatusCode, body)
	}
	eventually(t, "the video", func() bool {
		_, body := do(nil, http.MethodGet, "/v1/videos/generations/"+task.ID, "", key)
		_ = json.Unmarshal(body, &task)
		return task.Status == "completed"
	})
	out["video url"] = task.VideoURL
	return out
}

// No absolute URL the gateway makes takes its origin from the request's
// Host header or from X-Forwarded-* sent by a peer that is not a trusted
// proxy: without public_url it is the listener's address; behind a trusted
// proxy, what the proxy forwarded; with public_url, that.
func TestLinksNeverFromHost(t *testing.T) {
	forged := claim{host: "evil.example", fwdHost: "evil.example", fwdProto: "https"}
	proxied := claim{host: "127.0.0.1", fwdHost: "gw.example.com", fwdProto: "https"}
	tests := []struct {
		name   string
		mutate func(*config.Config)
		claim  claim
		base   func(e *consoleEnv) string
	}{
		{"no public_url: the listener", func(*config.Config) {}, forged, func(e *consoleEnv) string { return e.g.URL }},
		{"forwarded headers from a trusted proxy", func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1", "::1"} },
			proxied, func(*consoleEnv) string { return "https://gw.example.com" }},
		{"public_url wins, even from a trusted proxy", func(c *config.Config) {
			c.PublicURL, c.TrustedProxies = "https://public.example.com", []string{"127.0.0.1"}
			c.Console.PublicURL, c.Images.PublicURL = "", ""
			c.ApplyDefaults()
		}, forged, func(*consoleEnv) string { return "https://public.example.com" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startConsole(t, videoConfig, tt.mutate)
			want := tt.base(e) + "/"
			links := e.links(tt.claim)
			if len(links) != 5 {
				t.Fatalf("links %v", links)
			}
			for what, link := range links {
				if !strings.HasPrefix(link, want) || strings.Contains(link, "evil") {
					t.Errorf("%s = %s, want it under %s", what, link, want)
				}
			}
		})
	}
}
