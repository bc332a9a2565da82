package fetch

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
)

// encoded returns a small real image in the given format.
func encoded(t *testing.T, format string) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// serve starts a test server answering with ctype and body.
func serve(t *testing.T, ctype string, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ctype)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// wantErr checks err is a 400 on "messages" whose message contains substr.
func wantErr(t *testing.T, err error, substr string) *apierr.Error {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not *apierr.Error", err, err)
	}
	if e.Status != http.StatusBadRequest || e.Type != apierr.TypeInvalidRequest || e.Param != "messages" {
		t.Fatalf("error = %d %s param %q, want 400 invalid_request_error param messages", e.Status, e.Type, e.Param)
	}
	if !strings.Contains(e.Message, substr) {
		t.Fatalf("message %q does not contain %q", e.Message, substr)
	}
	return e
}

func TestFetchImages(t *testing.T) {
	t.Parallel()
	pngData, gifData := encoded(t, "png"), encoded(t, "gif")
	cases := []struct {
		name, ctype string
		body        []byte
		wantMime    string
	}{
		{"png", "image/png", pngData, "image/png"},
		{"gif with parameters", "image/gif; charset=binary", gifData, "image/gif"},
		{"png declared as jpeg", "image/jpeg", pngData, "image/png"},
		{"upper-case type", "IMAGE/PNG", pngData, "image/png"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, c.ctype, c.body)
			mime, data, err := New(Options{AllowPrivate: true}).Fetch(context.Background(), srv.URL+"/img")
			if err != nil {
				t.Fatal(err)
			}
			if mime != c.wantMime || !bytes.Equal(data, c.body) {
				t.Fatalf("got %s, %d bytes; want %s, %d bytes", mime, len(data), c.wantMime, len(c.body))
			}
		})
	}
}

func TestFetchRefused(t *testing.T) {
	t.Parallel()
	pngData := encoded(t, "png")
	const limit = 1024
	big := append(append([]byte{}, pngData...), make([]byte, 2*limit)...)
	exact := append(append([]byte{}, pngData...), make([]byte, limit-len(pngData))...)
	cases := []struct {
		name    string
		handler http.HandlerFunc
		opts    Options
		want    string // "" = success
	}{
		{name: "exactly the limit", want: "", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(exact)
		}},
		{name: "too large by Content-Length", want: "larger than the 1024-byte limit", handler: func(w http.ResponseWriter, r *http.Request) {
			// Announces 1 GiB, sends a little, then stalls: only a
			// Content-Length check can answer "too large" before the timeout.
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", strconv.Itoa(1<<30))
			_, _ = w.Write(pngData)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}},
		{name: "too large chunked", want: "larger than the 1024-byte limit", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			for i := 0; i < len(big); i += 100 {
				_, _ = w.Write(big[i:min(i+100, len(big))])
				w.(http.Flusher).Flush()
			}
		}},
		{name: "wrong content type", want: "not a supported image", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write(pngData)
		}},
		{name: "missing content type", want: "not a supported image", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = nil
			_, _ = w.Write(pngData)
		}},
		{name: "svg refused", want: "not a supported image", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "image/svg+xml")
			_, _ = w.Write([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))
		}},
		{name: "lying content type", want: "whatever its Content-Type says", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("this is plain text, not a picture\n"))
		}},
		{name: "html served as jpeg", want: "whatever its Content-Type says", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "image/jpeg")
			_, _ = w.Write([]byte("<html><body>hi</body></html>"))
		}},
		{name: "404", want: "HTTP status 404", handler: func(w http.ResponseWriter, _ *http.Request) {
			http.NotFound(w, nil)
		}},
		{name: "500", want: "HTTP status 500", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
		}},
		{name: "timeout before headers", opts: Options{Timeout: 100 * time.Millisecond}, want: "timed out after 100ms",
			handler: func(_ http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			}},
		{name: "timeout in body", opts: Options{Timeout: 100 * time.Millisecond}, want: "timed out",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "image/png")
				_, _ = w.Write(pngData[:10])
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(c.handler)
			t.Cleanup(srv.Close)
			o := c.opts
			o.AllowPrivate = true
			if o.MaxBytes == 0 {
				o.MaxBytes = limit
			}
			start := time.Now()
			_, data, err := New(o).Fetch(context.Background(), srv.URL+"/img.png")
			if c.want == "" {
				if err != nil || len(data) != limit {
					t.Fatalf("got %d bytes, %v; want %d bytes", len(data), err, limit)
				}
				return
			}
			wantErr(t, err, c.want)
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %s", d)
			}
		})
	}
}

func TestFetchCallerCancelled(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, _, err := New(Options{AllowPrivate: true}).Fetch(ctx, srv.URL)
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != apierr.StatusClientClosed {
		t.Fatalf("got %v, want 499 client_closed_request", err)
	}
}
