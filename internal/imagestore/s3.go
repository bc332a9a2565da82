package imagestore

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// S3Options configure an S3-compatible bucket (AWS S3, MinIO, Cloudflare
// R2, ...), addressed path-style: {Endpoint}/{Bucket}/{Prefix}{name}.
type S3Options struct {
	Endpoint   string // e.g. https://s3.eu-west-1.amazonaws.com or http://minio:9000
	Region     string // default us-east-1 (R2: auto)
	Bucket     string
	Prefix     string // key prefix, e.g. "images/"
	AccessKey  string
	SecretKey  string
	HTTPClient *http.Client     // nil: a client with a 60s timeout
	Now        func() time.Time // signing time; nil: time.Now
}

// S3 is a Backend in an S3-compatible bucket, signed with AWS Signature
// Version 4 using only the standard library. The bucket stays private:
// clients fetch images through the gateway's signed URLs. The gateway does
// not delete objects; give the bucket a lifecycle rule that expires them
// (a day is plenty for URLs valid an hour).
type S3 struct {
	base                 *url.URL // endpoint with the bucket path
	region, prefix       string
	accessKey, secretKey string
	hc                   *http.Client
	now                  func() time.Time
}

var _ Backend = (*S3)(nil)

// NewS3 checks o and builds the backend.
func NewS3(o S3Options) (*S3, error) {
	u, err := url.Parse(strings.TrimRight(o.Endpoint, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("imagestore: s3 endpoint %q must be an http(s) URL", o.Endpoint)
	}
	if o.Bucket == "" || strings.Contains(o.Bucket, "/") {
		return nil, fmt.Errorf("imagestore: s3 bucket %q is not a bucket name", o.Bucket)
	}
	if o.AccessKey == "" || o.SecretKey == "" {
		return nil, fmt.Errorf("imagestore: s3 needs an access key and a secret key")
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: time.Minute}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	u.Path += "/" + o.Bucket + "/"
	return &S3{base: u, region: o.Region, prefix: o.Prefix, accessKey: o.AccessKey, secretKey: o.SecretKey,
		hc: o.HTTPClient, now: o.Now}, nil
}

// objectURL is the URL of an object; names are validated, prefixes are
// the operator's and escaped like any key.
func (s *S3) objectURL(name string) *url.URL {
	u := *s.base
	u.Path += s.prefix + name
	u.RawPath = ""
	return &u
}

// Put uploads one image.
func (s *S3) Put(ctx context.Context, name string, data []byte, contentType string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.objectURL(name).String(), bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	sum := sha256.Sum256(data)
	s.sign(req, hex.EncodeToString(sum[:]))
	resp, err := s.hc.Do(req)
	if err != nil {
		return fmt.Errorf("s3 put: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return fmt.Errorf("s3 put: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	return nil
}

// Get streams one image; ErrNotFound when the bucket has none.
func (s *S3) Get(ctx context.Context, name string) (Object, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.objectURL(name).String(), nil)
	if err != nil {
		return Object{}, err
	}
	s.sign(req, emptySHA256)
	resp, err := s.hc.Do(req)
	if err != nil {
		return Object{}, fmt.Errorf("s3 get: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		resp.Body.Close()
		return Object{}, ErrNotFound
	case resp.StatusCode/100 != 2:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		resp.Body.Close()
		return Object{}, fmt.Errorf("s3 get: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	mod, _ := http.ParseTime(resp.Header.Get("Last-Modified"))
	return Object{Body: resp.Body, Size: resp.ContentLength, ContentType: ContentType(name), ModTime: mod}, nil
}

// emptySHA256 is the payload hash of a request without a body.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// sign adds x-amz-date, x-amz-content-sha256 and the Authorization of
// Signature Version 4 over the host, those two and Content-Type.
func (s *S3) sign(req *http.Request, payloadHash string) {
	t := s.now().UTC()
	req.Header.Set("X-Amz-Date", t.Format("20060102T150405Z"))
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	headers := map[string]string{"host": req.URL.Host}
	for _, k := range []string{"Content-Type", "X-Amz-Date", "X-Amz-Content-Sha256"} {
		if v := req.Header.Get(k); v != "" {
			headers[strings.ToLower(k)] = v
		}
	}
	req.Header.Set("Authorization", sigV4(req.Method, req.URL.EscapedPath(), req.URL.Query(), headers, payloadHash,
		s.accessKey, s.secretKey, s.region, "s3", t))
}

// sigV4 is the Authorization header of AWS Signature Version 4 for a
// request: path as sent (escaped), headers with lowercase names.
func sigV4(method, path string, query url.Values, headers map[string]string, payloadHash, accessKey, secretKey, region, service string, t time.Time) string {
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	sort.Strings(names)
	var canon strings.Builder
	canon.WriteString(method + "\n" + canonicalURI(path) + "\n" + canonicalQuery(query) + "\n")
	for _, k := range names {
		canon.WriteString(k + ":" + strings.Join(strings.Fields(headers[k]), " ") + "\n")
	}
	signed := strings.Join(names, ";")
	canon.WriteString("\n" + signed + "\n" + payloadHash)
	day := t.Format("20060102")
	scope := day + "/" + region + "/" + service + "/aws4_request"
	h := sha256.Sum256([]byte(canon.String()))
	toSign := "AWS4-HMAC-SHA256\n" + t.Format("20060102T150405Z") + "\n" + scope + "\n" + hex.EncodeToString(h[:])
	key := []byte("AWS4" + secretKey)
	for _, part := range []string{day, region, service, "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	return "AWS4-HMAC-SHA256 Credential=" + accessKey + "/" + scope + ", SignedHeaders=" + signed +
		", Signature=" + hex.EncodeToString(hmacSHA256(key, toSign))
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalURI re-escapes an escaped path the way S3 expects: every byte
// but A-Z a-z 0-9 - . _ ~ and '/', once.
func canonicalURI(escaped string) string {
	raw, err := url.PathUnescape(escaped)
	if err != nil {
		raw = escaped
	}
	if raw == "" {
		return "/"
	}
	return awsEscape(raw, false)
}

func canonicalQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		vs := append([]string(nil), q[k]...)
		sort.Strings(vs)
		for _, v := range vs {
			parts = append(parts, awsEscape(k, true)+"="+awsEscape(v, true))
		}
	}
	return strings.Join(parts, "&")
}

// awsEscape percent-encodes every byte but the unreserved ones (and '/'
// unless slash is true).
func awsEscape(s string, slash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		case c == '/' && !slash:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
