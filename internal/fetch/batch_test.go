package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
)

// imageServer serves /N as a PNG padded to size bytes, after delay; it
// counts the requests it received.
type imageServer struct {
	*httptest.Server
	hits     atomic.Int64
	inFlight atomic.Int64
	peak     atomic.Int64 // the most requests it held at once
}

func newImageServer(t *testing.T, size int, delay time.Duration, chunked bool) *imageServer {
	t.Helper()
	png := encoded(t, "png")
	body := append(append([]byte{}, png...), make([]byte, max(size-len(png), 0))...)
	s := &imageServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		for {
			if p := s.peak.Load(); n <= p || s.peak.CompareAndSwap(p, n) {
				break
			}
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "image/png")
		if !chunked {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		for i := 0; i < len(body); i += 256 {
			_, _ = w.Write(body[i:min(i+256, len(body))])
			if chunked {
				w.(http.Flusher).Flush()
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// refs are n URLs on s and their params.
func refs(s *imageServer, n int) (urls, params []string) {
	for i := range n {
		urls = append(urls, fmt.Sprintf("%s/%d.png", s.URL, i))
		params = append(params, fmt.Sprintf("messages[0].content[%d].image_url.url", i))
	}
	return urls, params
}

// limitErr checks err is a 400 naming param whose message contains substr.
func limitErr(t *testing.T, err error, param, substr string) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not *apierr.Error", err, err)
	}
	if e.Status != http.StatusBadRequest || e.Type != apierr.TypeInvalidRequest || e.Param != param {
		t.Fatalf("error = %d %s param %q (%s), want 400 invalid_request_error param %s", e.Status, e.Type, e.Param, e.Message, param)
	}
	if !strings.Contains(e.Message, substr) {
		t.Fatalf("message %q does not contain %q", e.Message, substr)
	}
}

func collect(got map[int][]byte) func(int, string, []byte) error {
	return func(i int, mt string, data []byte) error {
		if mt != "image/png" {
			return fmt.Errorf("image %d is %s", i, mt)
		}
		got[i] = data
		return nil
	}
}

func TestFetchAllWithinLimits(t *testing.T) {
	t.Parallel()
	s := newImageServer(t, 1000, 200*time.Millisecond, false)
	f := New(Options{AllowPrivate: true, MaxImages: 4, MaxTotalBytes: 4000, TotalTimeout: 5 * time.Second, Parallel: 4})
	urls, params := refs(s, 4)
	got := map[int][]byte{}
	if err := f.FetchAll(context.Background(), urls, params, collect(got)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || len(got[3]) != 1000 {
		t.Fatalf("got %d images", len(got))
	}
	// Each download waits 200 ms at the server: fetched together, they
	// overlap there (counted by the server, not timed by the test).
	if p := s.peak.Load(); p < 2 {
		t.Errorf("at most %d download at once: not concurrent", p)
	}
}

func TestFetchAllTooMany(t *testing.T) {
	t.Parallel()
	s := newImageServer(t, 100, 0, false)
	urls, params := refs(s, 5)
	err := New(Options{AllowPrivate: true, MaxImages: 4}).FetchAll(context.Background(), urls, params, collect(map[int][]byte{}))
	limitErr(t, err, "messages[0].content[4].image_url.url", "names 5 images by URL; the gateway downloads at most 4 per request")
	err = New(Options{AllowPrivate: true, MaxImages: -1}).FetchAll(context.Background(), urls[:1], params[:1], collect(map[int][]byte{}))
	limitErr(t, err, "messages[0].content[0].image_url.url", "does not download images from URLs")
	if n := s.hits.Load(); n != 0 {
		t.Errorf("%d downloads for refused requests", n)
	}
	// The default: 16.
	urls, params = refs(s, DefaultMaxImages+1)
	err = New(Options{AllowPrivate: true}).FetchAll(context.Background(), urls, params, collect(map[int][]byte{}))
	limitErr(t, err, params[DefaultMaxImages], "at most 16 per request")
}

func TestFetchAllTotalBytes(t *testing.T) {
	t.Parallel()
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			t.Parallel()
			s := newImageServer(t, 600, 0, chunked)
			urls, params := refs(s, 3)
			// One at a time, so the second image is the one that passes 1000 bytes.
			f := New(Options{AllowPrivate: true, MaxTotalBytes: 1000, Parallel: 1})
			err := f.FetchAll(context.Background(), urls, params, collect(map[int][]byte{}))
			limitErr(t, err, params[1], "add up to more than the 1000-byte limit per request")
			if n := s.hits.Load(); n != 2 {
				t.Errorf("%d downloads, want 2: the third is never started", n)
			}
		})
	}
	// An image larger than the total by itself is refused on the same grounds.
	s := newImageServer(t, 5000, 0, true)
	urls, params := refs(s, 1)
	err := New(Options{AllowPrivate: true, MaxTotalBytes: 1000}).FetchAll(context.Background(), urls, params, collect(map[int][]byte{}))
	limitErr(t, err, params[0], "1000-byte limit per request")
}

func TestFetchAllTotalTime(t *testing.T) {
	t.Parallel()
	s := newImageServer(t, 100, 300*time.Millisecond, false)
	urls, params := refs(s, 3)
	f := New(Options{AllowPrivate: true, TotalTimeout: 450 * time.Millisecond, Parallel: 1})
	start := time.Now()
	err := f.FetchAll(context.Background(), urls, params, collect(map[int][]byte{}))
	limitErr(t, err, params[1], "took longer than the 450ms limit per request")
	if el := time.Since(start); el > 4*time.Second { // the failure mode is the 5 s server delay
		t.Errorf("took %v", el)
	}
	// Every image within its own 10 s, all of them not within 450 ms.
	if n := s.hits.Load(); n != 2 {
		t.Errorf("%d downloads, want 2", n)
	}
}

// One image's own failure is Fetch's error (param messages) and stops the
// others; the client leaving is a 499.
func TestFetchAllFailures(t *testing.T) {
	t.Parallel()
	slow := newImageServer(t, 100, 5*time.Second, false)
	bad := serve(t, "text/html", []byte("<html>"))
	urls, params := refs(slow, 3)
	urls[1] = bad.URL + "/page.html"
	start := time.Now()
	err := New(Options{AllowPrivate: true}).FetchAll(context.Background(), urls, params, collect(map[int][]byte{}))
	wantErr(t, err, "not a supported image")
	if el := time.Since(start); el > 4*time.Second { // the failure mode is the 5 s server delay
		t.Errorf("the other downloads were not cancelled: %v", el)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	urls, params = refs(slow, 2)
	err = New(Options{AllowPrivate: true}).FetchAll(ctx, urls, params, collect(map[int][]byte{}))
	if e := apierr.From(err); e.Status != apierr.StatusClientClosed {
		t.Fatalf("got %v, want 499", err)
	}

	// each's error ends the call.
	ok := newImageServer(t, 100, 0, false)
	urls, params = refs(ok, 2)
	err = New(Options{AllowPrivate: true}).FetchAll(context.Background(), urls, params, func(i int, _ string, data []byte) error {
		if !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("image %d: %q", i, data)
		}
		return errors.New("refused")
	})
	if err == nil || err.Error() != "refused" {
		t.Fatalf("got %v", err)
	}
}
