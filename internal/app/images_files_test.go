package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/imagestore"
)

// demoURLs asks the demo for n images as URLs, with extra request headers.
func demoURLs(t *testing.T, g *imageGateway, n int, header ...string) []string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/images/generations",
		strings.NewReader(`{"model":"demo-image","prompt":"a red square","size":"256x256","response_format":"url","n":`+strconv.Itoa(n)+`}`))
	req.Header.Set("Authorization", "Bearer "+g.keys["default"])
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data []struct {
			URL string `json:"url"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || len(out.Data) != n {
		t.Fatalf("status %d, %v, %+v", resp.StatusCode, err, out)
	}
	urls := make([]string, n)
	for i, d := range out.Data {
		urls[i] = d.URL
	}
	return urls
}

// signer signs URLs with the gateway's key at a chosen time.
func signer(t *testing.T, now time.Time) *imagestore.Store {
	t.Helper()
	key, err := imagestore.LoadKey("", imagesSecret)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := imagestore.NewDir(t.TempDir())
	s, err := imagestore.New(imagestore.Options{Backend: d, Key: key, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Signed image URLs work until they expire and for their own image only.
func TestImageURLSignatures(t *testing.T) {
	g := startImageGateway(t)
	urls := demoURLs(t, g, 2)
	u0, _ := url.Parse(urls[0])
	u1, _ := url.Parse(urls[1])
	name0 := strings.TrimPrefix(u0.Path, imagestore.FilesPath)
	name1 := strings.TrimPrefix(u1.Path, imagestore.FilesPath)
	q := u0.Query()
	tampered := []byte(q.Get("sig"))
	tampered[0] ^= 0x01
	if tampered[0] == q.Get("sig")[0] {
		t.Fatal("tampering changed nothing")
	}
	expired := signer(t, time.Now().Add(-2*time.Hour)).URL(g.URL, name0)
	unknown := signer(t, time.Now()).URL(g.URL, strings.Repeat("a", 32)+".png")
	base := g.URL + imagestore.FilesPath
	tests := []struct {
		name   string
		url    string
		status int
		code   string
	}{
		{"valid", urls[0], 200, ""},
		{"valid, the other image", urls[1], 200, ""},
		{"tampered signature", base + name0 + "?exp=" + q.Get("exp") + "&sig=" + string(tampered), 403, "invalid_signature"},
		{"no signature", base + name0, 403, "invalid_signature"},
		{"later expiry", base + name0 + "?exp=" + q.Get("exp") + "0&sig=" + q.Get("sig"), 403, "invalid_signature"},
		{"signature of another image", base + name1 + "?" + u0.RawQuery, 403, "invalid_signature"},
		{"expired", expired, 403, "url_expired"},
		{"valid signature, no such image", unknown, 404, "not_found"},
		{"not an image name", base + "modelgate.db?" + u0.RawQuery, 404, "not_found"},
		{"another extension", base + strings.TrimSuffix(name0, ".png") + ".html?" + u0.RawQuery, 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := fetch(t, tt.url)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			if tt.status == 200 {
				if w, _ := pngSize(t, b); w != 256 || resp.Header.Get("Content-Type") != "image/png" ||
					resp.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(resp.Header.Get("Cache-Control"), "private, max-age=") {
					t.Fatalf("served %d px, headers %v", w, resp.Header)
				}
				return
			}
			var e struct {
				Error struct{ Code string } `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil || e.Error.Code != tt.code {
				t.Fatalf("error %s, want code %s", b, tt.code)
			}
		})
	}
	// Ranges work (the local store is seekable), and so does HEAD.
	req, _ := http.NewRequest(http.MethodGet, urls[0], nil)
	req.Header.Set("Range", "bytes=0-7")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || resp.ContentLength != 8 {
		t.Fatalf("range: %d %d", resp.StatusCode, resp.ContentLength)
	}
	if resp, err := http.Head(urls[0]); err != nil || resp.StatusCode != 200 {
		t.Fatalf("head: %v %v", resp, err)
	}
	// A link needs no key, so no fetch left a usage record (there is no
	// account to bill or show it to); the refused ones were counted.
	for _, r := range g.usage() {
		if r.Endpoint == "images.files" {
			t.Errorf("file record %+v", r)
		}
	}
	want := map[string]uint64{"invalid_signature": 4, "url_expired": 1, "not_found": 3}
	got := g.app.Refused().Counts()
	for reason, n := range want {
		if got[reason] != n {
			t.Errorf("refused %s: %d, want %d (all: %v)", reason, got[reason], n, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("refused counts %v, want %v", got, want)
	}
}

// The URL base is never the client's Host: without public_url it is the
// listener's address, and a proxy's X-Forwarded-Host and -Proto count only
// from trusted_proxies.
func TestImageURLBase(t *testing.T) {
	g := startImageGateway(t)
	forged := []string{"Host", "evil.example:8443", "X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https"}
	u := demoURLs(t, g, 1, forged...)[0]
	if !strings.HasPrefix(u, g.URL+"/v1/images/files/") {
		t.Fatalf("url %s, want it under %s", u, g.URL)
	}
	if resp, _ := fetch(t, u); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}

	// Behind a trusted proxy (the test's loopback client stands for it),
	// its forwarded origin; the link works when it reaches the gateway.
	p := startImageGateway(t, func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1", "::1"} })
	u = demoURLs(t, p, 1, "Host", "ignored.example", "X-Forwarded-Host", "images.example:8443", "X-Forwarded-Proto", "https")[0]
	if !strings.HasPrefix(u, "https://images.example:8443/v1/images/files/") {
		t.Fatalf("url %s", u)
	}
	if resp, _ := fetch(t, p.URL+strings.TrimPrefix(u, "https://images.example:8443")); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}

	for _, tc := range []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"images.public_url", func(c *config.Config) { c.Images.PublicURL = "https://gw.example.com/ai" }, "https://gw.example.com/ai/v1/images/files/"},
		{"top-level public_url", func(c *config.Config) { c.PublicURL = "https://gw.example.com"; c.ApplyDefaults() }, "https://gw.example.com/v1/images/files/"},
	} {
		g := startImageGateway(t, tc.mutate, func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1"} })
		if u := demoURLs(t, g, 1, forged...)[0]; !strings.HasPrefix(u, tc.want) {
			t.Errorf("%s: url %s, want %s…", tc.name, u, tc.want)
		}
	}
}

// Without a configured secret the key is generated once and kept next to
// the images, so a restarted gateway still honours its links.
func TestImageURLKeyPersists(t *testing.T) {
	dir := t.TempDir()
	g := startImageGateway(t, func(c *config.Config) { c.Images.SigningKey = ""; c.Images.Dir = dir })
	u := demoURLs(t, g, 1)[0]
	g.stop()
	h := startImageGateway(t, func(c *config.Config) { c.Images.SigningKey = ""; c.Images.Dir = dir })
	path := strings.TrimPrefix(u, g.URL)
	if resp, b := fetch(t, h.URL+path); resp.StatusCode != 200 {
		t.Fatalf("after restart: %d %s", resp.StatusCode, b)
	}
}

// With images.s3 the images go to the bucket (an in-process gofakes3
// server; it checks no signatures, so the layer in front checks that the
// configured access key signs) and are served from it through the
// gateway's signed URLs.
func TestImageS3Store(t *testing.T) {
	bucket := s3mem.New()
	if err := bucket.CreateBucket("imgs"); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(bucket).Server()
	s3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=ak/") {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	defer s3.Close()
	dir := t.TempDir()
	g := startImageGateway(t, func(c *config.Config) {
		c.Images.Dir = dir
		c.Images.S3 = &config.ImagesS3{Endpoint: s3.URL, Bucket: "imgs", Prefix: "gw/", AccessKey: "ak", SecretKey: "sk"}
	})
	u := demoURLs(t, g, 1)[0]
	name := strings.TrimPrefix(strings.SplitN(u, "?", 2)[0], g.URL+imagestore.FilesPath)
	obj, err := bucket.GetObject("imgs", "gw/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := io.ReadAll(obj.Contents)
	obj.Contents.Close()
	resp, b := fetch(t, u)
	if resp.StatusCode != 200 || len(stored) == 0 || !bytes.Equal(b, stored) || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("status %d, %d bytes served, %d stored", resp.StatusCode, len(b), len(stored))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("local files written: %v", entries)
	}
}
