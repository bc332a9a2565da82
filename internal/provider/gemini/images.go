package gemini

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
)

// BatchFetcher downloads all the images one request names by URL under
// limits for the request as a whole (how many, how many bytes together,
// how long for all), refusing with a 400 that names params[i] when the
// request passes one, before any upstream call. each receives the images
// in order once all arrived. fetch.Fetcher implements it; an ImageFetcher
// without it fetches one image at a time with only its own limits.
type BatchFetcher interface {
	FetchAll(ctx context.Context, urls, params []string, each func(i int, mimeType string, data []byte) error) error
}

// imageQueue holds a request's image URLs until they are downloaded
// together, each with the part its data goes into.
type imageQueue struct {
	urls, params []string
	blobs        []*blob
}

// add queues u and returns the blob its data will fill.
func (q *imageQueue) add(u, param string) *blob {
	b := &blob{}
	q.urls, q.params, q.blobs = append(q.urls, u), append(q.params, param), append(q.blobs, b)
	return b
}

// fetchImages downloads the queued images and fills their blobs.
func (c *Client) fetchImages(ctx context.Context, q *imageQueue) error {
	if len(q.urls) == 0 {
		return nil
	}
	fill := func(i int, mt string, data []byte) error {
		if !strings.HasPrefix(mt, "image/") {
			return apierr.Invalid("messages", "The URL did not lead to an image (got %q).", mt)
		}
		if !imageTypes[mt] {
			return apierr.Invalid("messages", "Gemini takes PNG, JPEG, WebP, HEIC and HEIF images, not %q.", mt)
		}
		*q.blobs[i] = blob{MIMEType: mt, Data: base64.StdEncoding.EncodeToString(data)}
		return nil
	}
	if bf, ok := c.fetcher.(BatchFetcher); ok {
		return fetchError(bf.FetchAll(ctx, q.urls, q.params, fill))
	}
	for i, u := range q.urls {
		mt, data, err := c.fetcher.Fetch(ctx, u)
		if err != nil {
			return fetchError(err)
		}
		if err := fill(i, mt, data); err != nil {
			return err
		}
	}
	return nil
}

// fetchError makes sure a download failure reaches the client as a 400
// about the request, whatever the fetcher returned.
func fetchError(err error) error {
	if err == nil {
		return nil
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	e := apierr.Invalid("messages", "The image at the given URL could not be downloaded.")
	e.Err = err
	return e
}
