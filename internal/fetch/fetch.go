// Package fetch downloads client-referenced images with an SSRF guard, for
// vendors (Gemini and the like) that cannot fetch image URLs themselves.
//
// The guard checks the URL's scheme and host before the request, re-checks
// both on every redirect, and — the check that matters — vets the resolved
// IP address at dial time, so DNS rebinding, redirects and names that resolve
// to internal addresses are all covered. Proxies from the environment are
// ignored. Size and time are bounded while downloading, and the body must
// really be a JPEG, PNG, GIF or WebP image. FetchAll downloads the images
// of one request under limits for the request as a whole (how many, how
// many bytes together, how long for all), so a client cannot make the
// gateway download without end on its behalf.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultMaxBytes     = 20 << 20
	DefaultTimeout      = 10 * time.Second
	DefaultMaxRedirects = 3
	DefaultUserAgent    = "modelgate-image-fetch/1"

	// The per-request limits of FetchAll. 16 images cover honest
	// multi-image prompts (pages of a document, a few photos to compare);
	// 32 MiB is above the 20 MB Gemini accepts inline in one request, so
	// it never refuses what the vendor would take; 30 s is three slow
	// images' worth of the per-image timeout, downloaded 4 at a time.
	DefaultMaxImages     = 16
	DefaultMaxTotalBytes = 32 << 20
	DefaultTotalTimeout  = 30 * time.Second
	DefaultParallel      = 4
)

// Options configures a Fetcher. Zero fields take the defaults above.
type Options struct {
	MaxBytes     int64         // one image, default 20 MiB
	Timeout      time.Duration // one image's whole fetch, default 10s
	MaxRedirects int           // default 3
	AllowPrivate bool          // tests only: allow loopback/private targets (httptest servers)
	UserAgent    string

	// Limits of one request's images, applied by FetchAll.
	MaxImages     int           // image URLs downloaded per request, default 16; negative: none
	MaxTotalBytes int64         // their bytes together, default 32 MiB
	TotalTimeout  time.Duration // all of them together, default 30s
	Parallel      int           // downloads at once per request, default 4
}

// Fetcher downloads images. It is safe for concurrent use and keeps a
// connection pool, so create one and share it.
type Fetcher struct {
	opts         Options
	allowPrivate bool
	// dialBlocked decides at dial time; a field so tests can allow one
	// loopback server while refusing another.
	dialBlocked func(netip.AddrPort) bool
	client      *http.Client
}

// New returns a Fetcher for o, with defaults filled in.
func New(o Options) *Fetcher {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.MaxImages == 0 {
		o.MaxImages = DefaultMaxImages
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if o.TotalTimeout <= 0 {
		o.TotalTimeout = DefaultTotalTimeout
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	f := &Fetcher{opts: o, allowPrivate: o.AllowPrivate,
		dialBlocked: func(ap netip.AddrPort) bool { return blocked(ap.Addr()) }}
	dialer := &net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second, Control: f.control}
	transport := &http.Transport{
		Proxy:                  nil, // never via HTTP(S)_PROXY: the proxy would do the dialling
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    o.Timeout,
		ResponseHeaderTimeout:  o.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           32,
		IdleConnTimeout:        90 * time.Second,
	}
	f.client = &http.Client{Transport: transport, CheckRedirect: f.checkRedirect}
	return f
}

// Sentinel causes, mapped to client messages by fail.
var (
	errScheme        = errors.New("fetch: scheme is not http or https")
	errNoHost        = errors.New("fetch: URL has no host")
	errTooManyHops   = errors.New("fetch: too many redirects")
	errTimeout       = errors.New("fetch: time limit exceeded")
	errTooLarge      = errors.New("fetch: body exceeds size limit")
	errStatus        = errors.New("fetch: unexpected HTTP status")
	errContentType   = errors.New("fetch: unsupported content type")
	errSniffMismatch = errors.New("fetch: body is not a supported image")
)

// checkRedirect is http.Client.CheckRedirect: it counts hops and re-runs the
// URL checks on each target (the dial-time guard still vets its address).
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.opts.MaxRedirects {
		return errTooManyHops
	}
	return f.checkURL(req.URL)
}

// Fetch downloads an image. Errors are *apierr.Error: 400
// invalid_request_error with Param "messages" and a message naming at most
// the URL's host (blocked address, too large, not an image, bad status,
// timeout). The exceptions: when ctx itself ends, a 499 client_closed_request
// or the shutdown error. mimeType is the sniffed type, one of image/jpeg,
// image/png, image/gif, image/webp.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (mimeType string, data []byte, err error) {
	return f.fetch(ctx, rawURL, nil)
}

// fetch is Fetch, with the body charged to a request's byte budget when b
// is not nil.
func (f *Fetcher) fetch(ctx context.Context, rawURL string, b *budget) (mimeType string, data []byte, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", nil, invalidURL(err)
	}
	if err := f.checkURL(u); err != nil {
		return "", nil, f.fail(ctx, u.Host, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, f.opts.Timeout, errTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", nil, invalidURL(err)
	}
	req.Header.Set("User-Agent", f.opts.UserAgent)
	req.Header.Set("Accept", "image/jpeg, image/png, image/gif, image/webp")
	mimeType, data, err = f.do(req, b)
	if err != nil {
		return "", nil, f.fail(ctx, u.Host, err)
	}
	return mimeType, data, nil
}

// do sends req and validates the response; the body is charged to b
// (when not nil) as it arrives.
func (f *Fetcher) do(req *http.Request, b *budget) (string, []byte, error) {
	resp, err := f.client.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", nil, &statusError{code: resp.StatusCode}
	}
	declared, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || !supported[declared] {
		return "", nil, errContentType
	}
	if resp.ContentLength > f.opts.MaxBytes {
		return "", nil, errTooLarge
	}
	var body io.Reader = resp.Body
	if b != nil {
		if resp.ContentLength > b.left.Load() {
			return "", nil, errTotalTooLarge
		}
		body = &charged{r: resp.Body, b: b}
	}
	data, err := io.ReadAll(io.LimitReader(body, f.opts.MaxBytes+1))
	if err != nil {
		return "", nil, err
	}
	if int64(len(data)) > f.opts.MaxBytes {
		return "", nil, errTooLarge
	}
	sniffed := http.DetectContentType(data)
	if !supported[sniffed] {
		return "", nil, errSniffMismatch
	}
	return sniffed, data, nil
}

// supported holds the image types accepted both as declared Content-Type and
// as sniffed type. A declared type naming a different supported image type
// than the bytes (a PNG served as image/jpeg, common on misconfigured CDNs)
// is accepted and reported as what the bytes are; anything whose bytes are
// not one of these images is refused.
var supported = map[string]bool{
	"image/jpeg": true,
	"image/png":  true,
	"image/gif":  true,
	"image/webp": true,
}

// statusError carries the upstream status for the message.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("fetch: HTTP status %d", e.code) }
func (e *statusError) Unwrap() error { return errStatus }
