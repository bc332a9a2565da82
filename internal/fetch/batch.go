package fetch

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/modelgate/modelgate/internal/apierr"
)

// Causes of the per-request limits.
var (
	errTotalTooLarge = errors.New("fetch: the request's images exceed its total size limit")
	errTotalTimeout  = errors.New("fetch: the request's images exceed its total time limit")
	// errAborted ends the downloads still running once one has failed; it
	// is never what the client is told.
	errAborted = errors.New("fetch: another image of the request failed")
)

// budget is the bytes one request may still download, shared by its
// concurrent downloads.
type budget struct{ left atomic.Int64 }

// charged is a body whose bytes are taken from a budget as they arrive,
// so the request's downloads stop together once it is spent.
type charged struct {
	r io.Reader
	b *budget
}

func (c *charged) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 && c.b.left.Add(-int64(n)) < 0 {
		return n, errTotalTooLarge
	}
	return n, err
}

// FetchAll downloads the images one request names by URL, under the
// request's limits: at most MaxImages URLs (more are refused before any
// download), MaxTotalBytes together and TotalTimeout for all of them,
// Parallel at a time, each also under the per-image limits of Fetch.
// params[i] names urls[i] in the request (as
// "messages[0].content[1].image_url.url") for the error of a limit the
// request as a whole broke; a refusal of one image (blocked host, not an
// image, too large by itself) is the same 400 as from Fetch. The first
// failure cancels the downloads still running. Only when every image
// arrived is each called, in order; its error ends FetchAll.
func (f *Fetcher) FetchAll(ctx context.Context, urls, params []string, each func(i int, mimeType string, data []byte) error) error {
	if len(urls) == 0 {
		return nil
	}
	if limit := max(f.opts.MaxImages, 0); len(urls) > limit {
		if limit == 0 {
			return apierr.Invalid(params[0], "This gateway does not download images from URLs; send them as data: URLs (data:image/png;base64,...).")
		}
		return apierr.Invalid(params[limit], "The request names %d images by URL; the gateway downloads at most %d per request. Send the others as data: URLs, or split the request.", len(urls), limit)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, f.opts.TotalTimeout, errTotalTimeout)
	defer cancel()
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)

	b := &budget{}
	b.left.Store(f.opts.MaxTotalBytes)
	type result struct {
		mime string
		data []byte
		err  error
		done bool
	}
	results := make([]result, len(urls))
	slots := make(chan struct{}, f.opts.Parallel)
	var wg sync.WaitGroup
launch:
	for i, u := range urls {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break launch
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			mt, data, err := f.fetch(ctx, u, b)
			results[i] = result{mime: mt, data: data, err: err, done: err == nil}
			if err != nil {
				abort(errAborted)
			}
		}()
	}
	wg.Wait()
	// The first image in request order that failed for itself, or that a
	// request-wide limit stopped, is the one the client hears about.
	for i, r := range results {
		if r.done {
			continue
		}
		if r.err != nil && errors.Is(r.err, errAborted) {
			continue
		}
		return f.limitParam(ctx, r.err, params[i])
	}
	for i, r := range results {
		if err := each(i, r.mime, r.data); err != nil {
			return err
		}
	}
	return nil
}

// limitParam is the error for the image named param: its own error
// (which names the request-wide limit it hit, or its own fault), or,
// when it never started, why the request stopped.
func (f *Fetcher) limitParam(ctx context.Context, err error, param string) error {
	if err == nil { // never started
		cause := context.Cause(ctx)
		if !errors.Is(cause, errTotalTimeout) {
			return f.fail(ctx, "", cause) // the client left, or the server is stopping
		}
		e := apierr.Invalid(param, "Downloading the images this request names by URL took longer than the %s limit per request.", f.opts.TotalTimeout)
		e.Err = cause
		return e
	}
	var e *apierr.Error
	if errors.As(err, &e) && (errors.Is(e.Err, errTotalTooLarge) || errors.Is(e.Err, errTotalTimeout)) {
		e.Param = param
	}
	return err
}
