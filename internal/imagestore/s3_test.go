package imagestore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

const (
	testAccessKey = "AKIDMODELGATE"
	testSecretKey = "modelgate-test-secret"
	testBucket    = "imgs"
	testRegion    = "eu-west-1"
)

// fakeS3 is an in-process S3 server: gofakes3 with its in-memory backend
// behind httptest, with one bucket, testBucket. gofakes3 verifies no
// signatures, so a thin layer in front refuses requests whose credential
// names another access key (a wrong secret key goes unnoticed) and
// records what each request looked like on the wire.
type fakeS3 struct {
	URL string
	mem *s3mem.Backend
	at  time.Time // the server's clock, fixed: objects' Last-Modified

	mu   sync.Mutex
	reqs []wireRequest
}

// wireRequest is what the server saw of one request.
type wireRequest struct {
	Method, Path, RawQuery string
	Header                 http.Header
	BodySHA256             string
}

func newFakeS3(t *testing.T) *fakeS3 {
	t.Helper()
	f := &fakeS3{at: time.Now().Add(-time.Minute).Truncate(time.Second)}
	clock := gofakes3.FixedTimeSource(f.at)
	f.mem = s3mem.New(s3mem.WithTimeSource(clock))
	if err := f.mem.CreateBucket(testBucket); err != nil {
		t.Fatal(err)
	}
	s3 := gofakes3.New(f.mem, gofakes3.WithTimeSource(clock)).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sum := sha256.Sum256(body)
		f.mu.Lock()
		f.reqs = append(f.reqs, wireRequest{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), hex.EncodeToString(sum[:])})
		f.mu.Unlock()
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+testAccessKey+"/") {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code>`+
				`<Message>The AWS Access Key Id you provided does not exist in our records.</Message></Error>`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		s3.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// backend is an S3 backend for this server; o fills in what it leaves empty.
func (f *fakeS3) backend(t *testing.T, o S3Options) *S3 {
	t.Helper()
	if o.Endpoint == "" {
		o.Endpoint = f.URL + "/"
	}
	if o.Bucket == "" {
		o.Bucket = testBucket
	}
	if o.Region == "" {
		o.Region = testRegion
	}
	if o.AccessKey == "" {
		o.AccessKey, o.SecretKey = testAccessKey, testSecretKey
	}
	b, err := NewS3(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fakeS3) requests() []wireRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wireRequest(nil), f.reqs...)
}

// Objects land under the prefix with the sniffed type, and come back with
// the bucket's modification time.
func TestS3PrefixAndContentType(t *testing.T) {
	ctx := context.Background()
	for _, prefix := range []string{"", "gw/", "a/b/images-"} {
		t.Run("prefix "+prefix, func(t *testing.T) {
			f := newFakeS3(t)
			s, err := New(Options{Backend: f.backend(t, S3Options{Prefix: prefix}), Key: make([]byte, 32)})
			if err != nil {
				t.Fatal(err)
			}
			gif := []byte("GIF89a\x01\x00\x01\x00")
			name, err := s.Save(ctx, gif)
			if err != nil {
				t.Fatal(err)
			}
			stored, err := f.mem.HeadObject(testBucket, prefix+name)
			if err != nil {
				t.Fatalf("object %q: %v", prefix+name, err)
			}
			if ct := stored.Metadata["Content-Type"]; ct != "image/gif" || stored.Size != int64(len(gif)) {
				t.Fatalf("stored as %q, %d bytes", ct, stored.Size)
			}
			obj, err := s.Open(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Body.Close()
			if got, _ := io.ReadAll(obj.Body); !bytes.Equal(got, gif) || obj.ContentType != "image/gif" || !obj.ModTime.Equal(f.at) {
				t.Fatalf("read %q as %q, modified %v (want %v)", got, obj.ContentType, obj.ModTime, f.at)
			}
		})
	}
}

// The type served is the one of the name, whatever the bucket holds.
func TestS3TypeFromName(t *testing.T) {
	f := newFakeS3(t)
	b := f.backend(t, S3Options{})
	name := strings.Repeat("c", 32) + ".webp"
	if err := put(context.Background(), b, name, []byte("RIFF\x00\x00\x00\x00WEBPVP8 "), "text/html"); err != nil {
		t.Fatal(err)
	}
	obj, err := b.Get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	obj.Body.Close()
	if obj.ContentType != "image/webp" {
		t.Fatalf("served as %q", obj.ContentType)
	}
}

// The wire: path-style URLs, one plain PUT with a signed payload hash (no
// aws-chunked streaming, which not every S3-compatible service takes), SigV4
// scoped to the configured region, and no GetBucketLocation round trip.
func TestS3RequestShape(t *testing.T) {
	f := newFakeS3(t)
	b := f.backend(t, S3Options{Prefix: "gw/"})
	ctx := context.Background()
	name := strings.Repeat("d", 32) + ".png"
	if err := put(ctx, b, name, pngHeader, "image/png"); err != nil {
		t.Fatal(err)
	}
	obj, err := b.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	obj.Body.Close()
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want a PUT and a GET: %+v", len(reqs), reqs)
	}
	sum := sha256.Sum256(pngHeader)
	empty := hex.EncodeToString(sha256.New().Sum(nil))
	for i, want := range []struct{ method, payload string }{
		{http.MethodPut, hex.EncodeToString(sum[:])},
		{http.MethodGet, empty},
	} {
		r := reqs[i]
		auth := r.Header.Get("Authorization")
		switch {
		case r.Method != want.method || r.Path != "/"+testBucket+"/gw/"+name || r.RawQuery != "":
			t.Errorf("request %d: %s %s?%s", i, r.Method, r.Path, r.RawQuery)
		case r.Header.Get("X-Amz-Content-Sha256") != want.payload || r.BodySHA256 != want.payload:
			t.Errorf("request %d: payload hash %q, body hash %s", i, r.Header.Get("X-Amz-Content-Sha256"), r.BodySHA256)
		case strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked"):
			t.Errorf("request %d: streaming upload", i)
		case !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+testAccessKey+"/") ||
			!strings.Contains(auth, "/"+testRegion+"/s3/aws4_request,") || !strings.Contains(auth, "x-amz-content-sha256"):
			t.Errorf("request %d: Authorization %q", i, auth)
		}
	}
	if ct := reqs[0].Header.Get("Content-Type"); ct != "image/png" {
		t.Errorf("PUT Content-Type %q", ct)
	}
}

// A key the server does not know is an error, never a missing image.
func TestS3WrongCredentials(t *testing.T) {
	f := newFakeS3(t)
	ctx := context.Background()
	name := strings.Repeat("e", 32) + ".png"
	if err := put(ctx, f.backend(t, S3Options{}), name, pngHeader, "image/png"); err != nil {
		t.Fatal(err)
	}
	wrong := f.backend(t, S3Options{AccessKey: "AKIDSOMEONEELSE", SecretKey: testSecretKey})
	err := put(ctx, wrong, name, pngHeader, "image/png")
	if err == nil || !strings.Contains(err.Error(), "HTTP 403 InvalidAccessKeyId") {
		t.Fatalf("Put with a wrong key = %v", err)
	}
	if _, err := wrong.Get(ctx, name); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "403") {
		t.Fatalf("Get with a wrong key = %v", err)
	}
}

// A bucket that is not there is a misconfiguration the operator must see:
// an error, not a stream of 404s for images.
func TestS3MissingBucket(t *testing.T) {
	f := newFakeS3(t)
	b := f.backend(t, S3Options{Bucket: "nobucket"})
	ctx := context.Background()
	name := strings.Repeat("f", 32) + ".png"
	if err := put(ctx, b, name, pngHeader, "image/png"); err == nil || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Fatalf("Put = %v", err)
	}
	if _, err := b.Get(ctx, name); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("Get = %v", err)
	}
}

// A server that never answers costs at most Timeout.
func TestS3Timeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	b, err := NewS3(S3Options{Endpoint: srv.URL, Bucket: testBucket, AccessKey: "a", SecretKey: "s", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = put(context.Background(), b, strings.Repeat("0", 32)+".png", pngHeader, "image/png")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Put = %v", err)
	}
	if _, err := b.Get(context.Background(), strings.Repeat("0", 32)+".png"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %s", d)
	}
}

// recorder is a transport that answers every request with an empty 200 and
// keeps it, to see where requests would go without a network.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (rt *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	rt.mu.Lock()
	rt.reqs = append(rt.reqs, r)
	rt.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Etag": {`"0"`}}, Body: http.NoBody, Request: r}, nil
}

// Every endpoint is addressed path-style, at the host configured, signed
// for the configured region or the one an AWS host names.
func TestS3Addressing(t *testing.T) {
	name := strings.Repeat("9", 32) + ".png"
	for _, tc := range []struct {
		endpoint, region, bucket string
		wantURL, wantRegion      string
	}{
		{"https://s3.eu-west-2.amazonaws.com", "", "imgs", "https://s3.eu-west-2.amazonaws.com/imgs/p/" + name, "eu-west-2"},
		{"https://s3.eu-west-2.amazonaws.com/", "", "my.images", "https://s3.eu-west-2.amazonaws.com/my.images/p/" + name, "eu-west-2"},
		{"https://s3.amazonaws.com", "", "imgs", "https://s3.us-east-1.amazonaws.com/imgs/p/" + name, "us-east-1"},
		{"https://acct.r2.cloudflarestorage.com", "auto", "imgs", "https://acct.r2.cloudflarestorage.com/imgs/p/" + name, "auto"},
		{"http://minio:9000", "", "imgs", "http://minio:9000/imgs/p/" + name, "us-east-1"},
		{"http://10.0.0.7:9000/", "garage", "imgs", "http://10.0.0.7:9000/imgs/p/" + name, "garage"},
	} {
		t.Run(tc.endpoint+" "+tc.bucket, func(t *testing.T) {
			rt := &recorder{}
			b, err := NewS3(S3Options{Endpoint: tc.endpoint, Region: tc.region, Bucket: tc.bucket, Prefix: "p/",
				AccessKey: "AK", SecretKey: "SK", Transport: rt})
			if err != nil {
				t.Fatal(err)
			}
			if err := put(context.Background(), b, name, pngHeader, "image/png"); err != nil {
				t.Fatal(err)
			}
			if len(rt.reqs) != 1 {
				t.Fatalf("%d requests", len(rt.reqs))
			}
			r := rt.reqs[0]
			if r.URL.String() != tc.wantURL {
				t.Errorf("URL %s, want %s", r.URL, tc.wantURL)
			}
			if auth := r.Header.Get("Authorization"); !strings.Contains(auth, "/"+tc.wantRegion+"/s3/aws4_request,") {
				t.Errorf("Authorization %q, want region %s", auth, tc.wantRegion)
			}
		})
	}
}

func TestNewS3Refuses(t *testing.T) {
	for _, o := range []S3Options{
		{Endpoint: "minio:9000", Bucket: "b", AccessKey: "a", SecretKey: "s"},
		{Endpoint: "ftp://minio:9000", Bucket: "bkt", AccessKey: "a", SecretKey: "s"},
		{Endpoint: "http://minio:9000/s3", Bucket: "bkt", AccessKey: "a", SecretKey: "s"},
		{Endpoint: "http://minio:9000?x=1", Bucket: "bkt", AccessKey: "a", SecretKey: "s"},
		{Endpoint: "http://user:pw@minio:9000", Bucket: "bkt", AccessKey: "a", SecretKey: "s"},
		{Endpoint: "http://minio:9000", Bucket: "", AccessKey: "a", SecretKey: "s"},
		{Endpoint: "http://minio:9000", Bucket: "a/b", AccessKey: "a", SecretKey: "s"},
		{Endpoint: "http://minio:9000", Bucket: "b", AccessKey: "a", SecretKey: "s"}, // too short
		{Endpoint: "http://minio:9000", Bucket: "-bkt", AccessKey: "a", SecretKey: "s"},
		{Endpoint: "http://minio:9000", Bucket: "bkt", AccessKey: "a"},
		{Endpoint: "http://minio:9000", Bucket: "bkt", SecretKey: "s"},
	} {
		if _, err := NewS3(o); err == nil {
			t.Errorf("NewS3(%+v) accepted", o)
		}
	}
}
