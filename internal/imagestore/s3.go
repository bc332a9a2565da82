package imagestore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// S3Options configure an S3-compatible bucket (AWS S3, MinIO, Cloudflare
// R2, ...), addressed path-style: {Endpoint}/{Bucket}/{Prefix}{name}.
type S3Options struct {
	// Endpoint is scheme://host[:port] without a path, e.g.
	// https://s3.eu-west-1.amazonaws.com or http://minio:9000.
	Endpoint string
	// Region signs the requests. "" means the region in an AWS endpoint's
	// host name (s3.eu-west-1.amazonaws.com), else us-east-1; R2 wants auto.
	Region    string
	Bucket    string
	Prefix    string // key prefix, e.g. "images/"
	AccessKey string
	SecretKey string
	// Transport carries the requests; nil: a copy of http.DefaultTransport
	// that gives up on a response whose headers take over a minute.
	Transport http.RoundTripper
	// Timeout bounds one Put, and one Get including reading its body (as
	// the whole-request timeout of the earlier client did); 0: a minute.
	Timeout time.Duration
}

// S3 is a Backend in an S3-compatible bucket, spoken to with minio-go
// (Signature Version 4, single-request PUTs with a signed payload hash,
// path-style addressing). The bucket stays private: clients fetch images
// through the gateway's signed URLs. The gateway does not delete objects;
// give the bucket a lifecycle rule that expires them (a day is plenty for
// URLs valid an hour).
type S3 struct {
	core    *minio.Core
	bucket  string
	prefix  string
	timeout time.Duration
}

var _ Backend = (*S3)(nil)

// s3Retries is how many attempts minio-go makes for a request that failed
// in a way worth retrying (network errors, 5xx, SlowDown). Its default of
// ten would keep an image request waiting long after S3 is known to be down.
const s3Retries = 3

// NewS3 checks o and builds the backend. It makes no request: a wrong
// bucket or key shows in the first Put.
func NewS3(o S3Options) (*S3, error) {
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("imagestore: s3 endpoint %q must be an http(s) URL of a host without a path, like https://s3.eu-west-1.amazonaws.com", o.Endpoint)
	}
	if o.Bucket == "" || strings.Contains(o.Bucket, "/") {
		return nil, fmt.Errorf("imagestore: s3 bucket %q is not a bucket name", o.Bucket)
	}
	if err := s3utils.CheckValidBucketName(o.Bucket); err != nil {
		return nil, fmt.Errorf("imagestore: s3 bucket %q: %w", o.Bucket, err)
	}
	if o.AccessKey == "" || o.SecretKey == "" {
		return nil, errors.New("imagestore: s3 needs an access key and a secret key")
	}
	if o.Region == "" {
		o.Region = s3utils.GetRegionFromURL(*u)
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = time.Minute
		t.DisableCompression = true // serve the bytes as stored, never transparently gunzipped
		o.Transport = t
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	core, err := minio.NewCore(u.Host, &minio.Options{
		Creds:     credentials.NewStaticV4(o.AccessKey, o.SecretKey, ""),
		Secure:    u.Scheme == "https",
		Transport: o.Transport,
		// A region set here also spares minio-go its GetBucketLocation
		// round trip before the first request.
		Region:       o.Region,
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   s3Retries,
	})
	if err != nil {
		return nil, fmt.Errorf("imagestore: s3 endpoint %q: %w", o.Endpoint, err)
	}
	// Talk to the host configured (for AWS: its regional endpoint), not to
	// the dual-stack one minio-go would pick by default.
	core.SetS3EnableDualstack(false)
	return &S3{core: core, bucket: o.Bucket, prefix: o.Prefix, timeout: o.Timeout}, nil
}

// Put uploads one image in a single PUT whose payload hash is signed, the
// one request shape every S3-compatible service accepts (no aws-chunked
// streaming signatures, no trailing checksums).
func (s *S3) Put(ctx context.Context, name string, data []byte, contentType string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	key := s.prefix + name
	sum := sha256.Sum256(data)
	_, err := s.core.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), "", hex.EncodeToString(sum[:]),
		minio.PutObjectOptions{ContentType: contentType, DisableContentSha256: true})
	if err != nil {
		return s3Error("put", key, err)
	}
	return nil
}

// Get streams one image; ErrNotFound when the bucket has no such key. The
// type served comes from the name, never from what the bucket says.
func (s *S3) Get(ctx context.Context, name string) (Object, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	key := s.prefix + name
	body, info, _, err := s.core.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		cancel()
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return Object{}, ErrNotFound
		}
		return Object{}, s3Error("get", key, err)
	}
	return Object{Body: &cancelOnClose{ReadCloser: body, cancel: cancel}, Size: info.Size,
		ContentType: ContentType(name), ModTime: info.LastModified}, nil
}

// s3Error says which request failed, with S3's status and error code when
// there is one (minio-go's own message carries neither); ctx errors stay
// visible to errors.Is.
func s3Error(op, key string, err error) error {
	if r := minio.ToErrorResponse(err); r.Code != "" && r.StatusCode != 0 {
		return fmt.Errorf("s3 %s %s: HTTP %d %s: %w", op, key, r.StatusCode, r.Code, err)
	}
	return fmt.Errorf("s3 %s %s: %w", op, key, err)
}

// cancelOnClose ends a Get's deadline when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
