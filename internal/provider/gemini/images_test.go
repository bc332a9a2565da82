package gemini

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/fetch"
	"github.com/modelgate/modelgate/internal/provider"
)

// pngOf is a real PNG padded to at least size bytes (decoders ignore
// what follows IEND).
func pngOf(t *testing.T, size int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return append(b.Bytes(), make([]byte, max(size-b.Len(), 0))...)
}

// imageHost serves /N.png (a PNG of size bytes) after delay and counts
// the downloads.
func imageHost(t *testing.T, size int, delay time.Duration) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	body := pngOf(t, size)
	var hits atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s, &hits
}

// imageRequest is a chat request with a data: image and then the given
// counts of image URLs on host in successive user messages.
func imageRequest(host string, perMessage ...int) []byte {
	type part map[string]any
	var msgs []any
	k := 0
	for i, n := range perMessage {
		content := []part{{"type": "text", "text": fmt.Sprintf("message %d", i)}}
		if i == 0 {
			content = append(content, part{"type": "image_url", "image_url": part{"url": "data:image/png;base64,iVBORw0KGgo="}})
		}
		for range n {
			content = append(content, part{"type": "image_url", "image_url": part{"url": fmt.Sprintf("%s/%d.png", host, k)}})
			k++
		}
		msgs = append(msgs, part{"role": "user", "content": content}, part{"role": "assistant", "content": "ok"})
	}
	b, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs})
	return b
}

// limitedClient is a Gemini client in front of up whose fetcher allows
// loopback hosts and has the given per-request limits.
func limitedClient(t *testing.T, up string, o fetch.Options) *Client {
	t.Helper()
	o.AllowPrivate = true
	c, err := New(Options{Name: "gemini-test", BaseURL: up + "/", APIKey: "k", Fetcher: fetch.New(o)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestImageURLLimits(t *testing.T) {
	tests := []struct {
		name       string
		size       int
		delay      time.Duration
		perMessage []int
		opts       fetch.Options
		param      string // "" served
		message    string
		downloads  int64
	}{
		{name: "within the limits", size: 1000, perMessage: []int{2, 2},
			opts: fetch.Options{MaxImages: 4, MaxTotalBytes: 4000, TotalTimeout: 5 * time.Second}, downloads: 4},
		{name: "too many images", size: 1000, perMessage: []int{2, 3},
			opts:  fetch.Options{MaxImages: 4},
			param: "messages[2].content[3].image_url.url", message: "names 5 images by URL; the gateway downloads at most 4 per request"},
		{name: "too many bytes together", size: 1000, perMessage: []int{1, 2},
			opts:  fetch.Options{MaxTotalBytes: 2500, Parallel: 1},
			param: "messages[2].content[2].image_url.url", message: "add up to more than the 2500-byte limit per request", downloads: 3},
		{name: "too long together", size: 100, delay: 300 * time.Millisecond, perMessage: []int{3},
			opts:  fetch.Options{TotalTimeout: 450 * time.Millisecond, Parallel: 1},
			param: "messages[0].content[3].image_url.url", message: "took longer than the 450ms limit per request", downloads: 2},
		{name: "fetching turned off", size: 100, perMessage: []int{1},
			opts:  fetch.Options{MaxImages: -1},
			param: "messages[0].content[2].image_url.url", message: "does not download images from URLs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, 200, "application/json", fixture(t, "response/thinking.gemini.json"))
			host, hits := imageHost(t, tt.size, tt.delay)
			c := limitedClient(t, up.URL, tt.opts)
			_, err := c.Chat(context.Background(), &provider.ChatRequest{PublicModel: "p", UpstreamModel: "gemini-2.5-pro",
				Body: imageRequest(host.URL, tt.perMessage...)})
			if n := hits.Load(); tt.downloads > 0 && n != tt.downloads {
				t.Errorf("%d downloads, want %d", n, tt.downloads)
			}
			if tt.param == "" {
				if err != nil {
					t.Fatal(err)
				}
				var sent genRequest
				if err := json.Unmarshal([]byte(up.body), &sent); err != nil {
					t.Fatal(err)
				}
				var inline []*blob
				for _, ct := range sent.Contents {
					for _, p := range ct.Parts {
						if p.InlineData != nil {
							inline = append(inline, p.InlineData)
						}
					}
				}
				want := base64.StdEncoding.EncodeToString(pngOf(t, tt.size))
				if len(inline) != 5 || inline[0].Data != "iVBORw0KGgo=" || inline[4].Data != want || inline[4].MIMEType != "image/png" {
					t.Errorf("sent %d inline images", len(inline))
				}
				return
			}
			ae := apierr.From(err)
			if ae.Status != 400 || ae.Type != apierr.TypeInvalidRequest || ae.Param != tt.param || !strings.Contains(ae.Message, tt.message) {
				t.Fatalf("got %d %s param %q: %s; want 400 on %s saying %q", ae.Status, ae.Type, ae.Param, ae.Message, tt.param, tt.message)
			}
			if up.path != "" {
				t.Errorf("the upstream was called (%s)", up.path)
			}
		})
	}
}

// The defaults: 16 image URLs pass the count, the 17th does not.
func TestImageURLDefaultCount(t *testing.T) {
	up := newUpstream(t, 200, "application/json", fixture(t, "response/thinking.gemini.json"))
	host, hits := imageHost(t, 100, 0)
	c := limitedClient(t, up.URL, fetch.Options{})
	_, err := c.Chat(context.Background(), &provider.ChatRequest{UpstreamModel: "g", Body: imageRequest(host.URL, 16)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), &provider.ChatRequest{UpstreamModel: "g", Body: imageRequest(host.URL, 10, 7)})
	if ae := apierr.From(err); ae.Status != 400 || ae.Param != "messages[2].content[7].image_url.url" {
		t.Fatalf("17 images: %v (param %q)", err, ae.Param)
	}
	if n := hits.Load(); n != 16 {
		t.Errorf("%d downloads, want 16", n)
	}
}
