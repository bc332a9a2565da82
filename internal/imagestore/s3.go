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
	"slices"
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
	// Timeout bounds each request of a Put (each part of a large one), a
	// Delete, and one Get including reading its body (as the whole-request
	// timeout of the earlier client did); 0: a minute. Serving videos to
	// slow clients wants more.
	Timeout time.Duration
	// PartSize is how much of a large object a Put holds in memory and
	// sends in one request; 0: 16 MiB. S3 wants at least 5 MiB.
	PartSize int64
}

// S3 is a Backend in an S3-compatible bucket, spoken to with minio-go
// (Signature Version 4, every request's payload hash signed, path-style
// addressing). An object up to PartSize goes up in a single PUT; a larger
// one in a multipart upload, one part in memory at a time. The bucket stays
// private: clients fetch objects through the gateway's signed URLs. The
// gateway does not delete images (videos it does, when their task
// expires); give the bucket a lifecycle rule that expires them (a day is
// plenty for URLs valid an hour).
type S3 struct {
	core     *minio.Core
	bucket   string
	prefix   string
	timeout  time.Duration
	partSize int
}

// DefaultPartSize is the S3 part size of a streamed upload: the memory one
// upload holds.
const DefaultPartSize = 16 << 20

// minPartSize is the smallest part S3 accepts (but for the last one).
const minPartSize = 5 << 20

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
	switch {
	case o.PartSize == 0:
		o.PartSize = DefaultPartSize
	case o.PartSize < minPartSize || o.PartSize > 1<<30:
		return nil, fmt.Errorf("imagestore: s3 part size %d must be between 5 MiB and 1 GiB", o.PartSize)
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
	return &S3{core: core, bucket: o.Bucket, prefix: o.Prefix, timeout: o.Timeout, partSize: int(o.PartSize)}, nil
}

// Put uploads what r yields. Up to PartSize bytes go in a single PUT whose
// payload hash is signed, the one request shape every S3-compatible service
// accepts (no aws-chunked streaming signatures, no trailing checksums);
// more go in a multipart upload of such PUTs, one part held in memory at a
// time, aborted on any error so nothing is stored.
func (s *S3) Put(ctx context.Context, name string, r io.Reader, contentType string) (int64, error) {
	key := s.prefix + name
	opts := minio.PutObjectOptions{ContentType: contentType, DisableContentSha256: true}
	buf, err := fill(ctx, r, nil, s.partSize)
	switch {
	case err == io.EOF:
		rctx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		sum := sha256.Sum256(buf)
		if _, err := s.core.PutObject(rctx, s.bucket, key, bytes.NewReader(buf), int64(len(buf)), "", hex.EncodeToString(sum[:]), opts); err != nil {
			return 0, s3Error("put", key, err)
		}
		return int64(len(buf)), nil
	case err != nil:
		return 0, err
	}
	return s.putMultipart(ctx, key, r, buf, opts)
}

// putMultipart uploads buf, a full first part, and then the rest of r.
func (s *S3) putMultipart(ctx context.Context, key string, r io.Reader, buf []byte, opts minio.PutObjectOptions) (n int64, err error) {
	rctx, cancel := context.WithTimeout(ctx, s.timeout)
	id, err := s.core.NewMultipartUpload(rctx, s.bucket, key, opts)
	cancel()
	if err != nil {
		return 0, s3Error("create multipart upload", key, err)
	}
	defer func() {
		if err != nil {
			// Parts are kept (and billed) until aborted: abort even when
			// ctx has ended.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
			defer cancel()
			_ = s.core.AbortMultipartUpload(actx, s.bucket, key, id)
		}
	}()
	var parts []minio.CompletePart
	for last := false; ; {
		num := len(parts) + 1
		rctx, cancel := context.WithTimeout(ctx, s.timeout)
		sum := sha256.Sum256(buf)
		p, err := s.core.PutObjectPart(rctx, s.bucket, key, id, num, bytes.NewReader(buf), int64(len(buf)),
			minio.PutObjectPartOptions{Sha256Hex: hex.EncodeToString(sum[:]), DisableContentSha256: true})
		cancel()
		if err != nil {
			return 0, s3Error(fmt.Sprintf("put part %d of", num), key, err)
		}
		parts = append(parts, minio.CompletePart{PartNumber: num, ETag: p.ETag})
		n += int64(len(buf))
		if last {
			break
		}
		buf, err = fill(ctx, r, buf, s.partSize)
		if err == io.EOF {
			if len(buf) == 0 {
				break
			}
			last = true
		} else if err != nil {
			return 0, err
		}
	}
	rctx, cancel = context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.core.CompleteMultipartUpload(rctx, s.bucket, key, id, parts, opts); err != nil {
		return 0, s3Error("complete multipart upload", key, err)
	}
	return n, nil
}

// fill reads r into buf (reused) until it holds limit bytes, and returns
// it with io.EOF when r ended first. buf grows as the data comes, so a
// small object never costs a whole part's memory.
func fill(ctx context.Context, r io.Reader, buf []byte, limit int) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < limit {
		if err := ctx.Err(); err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(max(cap(buf), 32<<10), limit-len(buf)))
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// Delete removes one object; S3 answers a missing one with success too.
func (s *S3) Delete(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	key := s.prefix + name
	err := s.core.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchKey {
		return s3Error("delete", key, err)
	}
	return nil
}

// Get opens one object with a GET, whose body serves reads from the start;
// a Seek elsewhere makes the next Read ask for the rest of the object from
// there (a Range request, pinned to the first response's ETag), so
// http.ServeContent answers range requests. ErrNotFound when the bucket has
// no such key. The type served comes from the name, never from what the
// bucket says.
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
	b := &s3Body{s: s, ctx: ctx, cancel: cancel, key: key, etag: info.ETag, size: info.Size, body: body}
	return Object{Body: b, Size: info.Size, ContentType: ContentType(name), ModTime: info.LastModified}, nil
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

// s3Body reads an object, seekably: it holds one open response body and
// where in the object that body is, and opens another from the read offset
// when a Seek moved it. Close ends the Get's deadline.
type s3Body struct {
	s      *S3
	ctx    context.Context
	cancel context.CancelFunc
	key    string
	etag   string
	size   int64

	body    io.ReadCloser // nil when none is open
	bodyOff int64         // the object offset body reads next
	off     int64         // the offset the next Read reads
}

func (b *s3Body) Read(p []byte) (int, error) {
	if b.size >= 0 && b.off >= b.size {
		return 0, io.EOF
	}
	if b.body == nil || b.bodyOff != b.off {
		if b.body != nil {
			_ = b.body.Close()
			b.body = nil
		}
		var opts minio.GetObjectOptions
		if err := opts.SetRange(b.off, 0); err != nil {
			return 0, err
		}
		if b.etag != "" {
			_ = opts.SetMatchETag(b.etag)
		}
		body, _, _, err := b.s.core.GetObject(b.ctx, b.s.bucket, b.key, opts)
		if err != nil {
			return 0, s3Error("get", b.key, err)
		}
		b.body, b.bodyOff = body, b.off
	}
	n, err := b.body.Read(p)
	b.off += int64(n)
	b.bodyOff = b.off
	if err == io.EOF && b.size >= 0 && b.off < b.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *s3Body) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += b.off
	case io.SeekEnd:
		if b.size < 0 {
			return 0, errors.New("imagestore: seek from the end of an object of unknown size")
		}
		offset += b.size
	default:
		return 0, errors.New("imagestore: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("imagestore: seek before the start")
	}
	b.off = offset
	return offset, nil
}

func (b *s3Body) Close() error {
	var err error
	if b.body != nil {
		err = b.body.Close()
		b.body = nil
	}
	b.cancel()
	return err
}
