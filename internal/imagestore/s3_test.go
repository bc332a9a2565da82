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
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// The signing matches the examples AWS publishes for S3
// (docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html).
func TestSigV4AWSExamples(t *testing.T) {
	const ak, sk = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	at := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	welcome := sha256.Sum256([]byte("Welcome to Amazon S3."))
	tests := []struct {
		name, method, path string
		query              url.Values
		headers            map[string]string
		payload, want      string
	}{
		{"GET Object", "GET", "/test.txt", nil, map[string]string{"host": "examplebucket.s3.amazonaws.com", "range": "bytes=0-9",
			"x-amz-content-sha256": emptySHA256, "x-amz-date": "20130524T000000Z"}, emptySHA256,
			"f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"},
		{"PUT Object", "PUT", "/test$file.text", nil, map[string]string{"host": "examplebucket.s3.amazonaws.com",
			"date": "Fri, 24 May 2013 00:00:00 GMT", "x-amz-date": "20130524T000000Z", "x-amz-storage-class": "REDUCED_REDUNDANCY",
			"x-amz-content-sha256": hex.EncodeToString(welcome[:])}, hex.EncodeToString(welcome[:]),
			"98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"},
		{"GET Bucket", "GET", "/", url.Values{"prefix": {"J"}, "max-keys": {"2"}}, map[string]string{"host": "examplebucket.s3.amazonaws.com",
			"x-amz-content-sha256": emptySHA256, "x-amz-date": "20130524T000000Z"}, emptySHA256,
			"34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sigV4(tt.method, tt.path, tt.query, tt.headers, tt.payload, ak, sk, "us-east-1", "s3", at)
			if !strings.HasSuffix(got, "Signature="+tt.want) || !strings.HasPrefix(got, "AWS4-HMAC-SHA256 Credential="+ak+"/20130524/us-east-1/s3/aws4_request, ") {
				t.Fatalf("got %s\nwant signature %s", got, tt.want)
			}
		})
	}
}

// fakeS3 is a path-style bucket that checks each request's signature.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	types   map[string]string
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	auth := r.Header.Get("Authorization")
	headers := map[string]string{"host": r.Host}
	for _, k := range []string{"content-type", "x-amz-date", "x-amz-content-sha256"} {
		if v := r.Header.Get(k); v != "" {
			headers[k] = v
		}
	}
	at, _ := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	sum := sha256.Sum256(body)
	want := sigV4(r.Method, r.URL.EscapedPath(), r.URL.Query(), headers, hex.EncodeToString(sum[:]), "AK", "SK", "eu-west-1", "s3", at)
	if auth != want || r.Header.Get("X-Amz-Content-Sha256") != hex.EncodeToString(sum[:]) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, "<Error><Code>SignatureDoesNotMatch</Code></Error>")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		f.objects[r.URL.Path], f.types[r.URL.Path] = body, r.Header.Get("Content-Type")
	case http.MethodGet:
		b, ok := f.objects[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, "<Error><Code>NoSuchKey</Code></Error>")
			return
		}
		w.Header().Set("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")
		_, _ = w.Write(b)
	}
}

func TestS3Backend(t *testing.T) {
	f := &fakeS3{objects: map[string][]byte{}, types: map[string]string{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	s3, err := NewS3(S3Options{Endpoint: srv.URL + "/", Region: "eu-west-1", Bucket: "imgs", Prefix: "gw/", AccessKey: "AK", SecretKey: "SK"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	st, err := New(Options{Backend: s3, Key: make([]byte, 32), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name, err := st.Save(ctx, pngHeader)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.types["/imgs/gw/"+name]; got != "image/png" {
		t.Fatalf("stored as %q (objects %v)", got, f.types)
	}
	obj, err := st.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	if !bytes.Equal(b, pngHeader) || obj.ContentType != "image/png" || obj.ModTime.Year() != 2015 {
		t.Fatalf("read %q %+v", b, obj)
	}
	if _, err := st.Open(ctx, strings.Repeat("b", 32)+".png"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing object: %v", err)
	}

	wrong, _ := NewS3(S3Options{Endpoint: srv.URL, Region: "eu-west-1", Bucket: "imgs", AccessKey: "AK", SecretKey: "nope"})
	if err := wrong.Put(ctx, name, pngHeader, "image/png"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("wrong secret: %v", err)
	}
	if _, err := wrong.Get(ctx, name); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("wrong secret get: %v", err)
	}
}

func TestNewS3Refuses(t *testing.T) {
	for _, o := range []S3Options{
		{Endpoint: "minio:9000", Bucket: "b", AccessKey: "a", SecretKey: "s"},
		{Endpoint: "http://minio:9000", Bucket: "", AccessKey: "a", SecretKey: "s"},
		{Endpoint: "http://minio:9000", Bucket: "a/b", AccessKey: "a", SecretKey: "s"},
		{Endpoint: "http://minio:9000", Bucket: "b", AccessKey: "a"},
	} {
		if _, err := NewS3(o); err == nil {
			t.Errorf("NewS3(%+v) accepted", o)
		}
	}
}
