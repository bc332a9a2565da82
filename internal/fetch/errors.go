package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/modelgate/modelgate/internal/apierr"
)

// param is the request field image URLs live in.
const param = "messages"

// invalidURL is the answer for a URL that does not parse.
func invalidURL(cause error) *apierr.Error {
	e := apierr.Invalid(param, "Image URL is not a valid http or https URL.")
	e.Err = cause
	return e
}

// fail maps a fetch failure to the client-facing error. Messages name only
// the URL's host; the cause (addresses, upstream text) stays in Err for the
// log.
func (f *Fetcher) fail(ctx context.Context, host string, cause error) *apierr.Error {
	var ae *apierr.Error
	if errors.As(cause, &ae) {
		return ae
	}
	// A limit of the whole request (FetchAll) stopped this download.
	switch c := context.Cause(ctx); {
	case errors.Is(c, errAborted):
		e := apierr.Invalid(param, "Another image of the request could not be fetched.")
		e.Err = errors.Join(errAborted, cause)
		return e
	case errors.Is(c, errTotalTimeout):
		e := apierr.Invalid(param, "Downloading the images this request names by URL took longer than the %s limit per request (the image from host %q was still arriving).", f.opts.TotalTimeout, host)
		e.Err = errors.Join(errTotalTimeout, cause)
		return e
	}
	// The caller's own context ending is not the image's fault.
	if c := context.Cause(ctx); c != nil && !errors.Is(c, errTimeout) && !errors.Is(c, context.DeadlineExceeded) {
		if errors.Is(c, apierr.ErrShuttingDown) {
			return apierr.ShuttingDown(cause)
		}
		return &apierr.Error{Status: apierr.StatusClientClosed, Type: apierr.TypeInvalidRequest,
			Code: apierr.CodeClientClosed, Message: "The client closed the request.", Err: cause}
	}
	var msg string
	var se *statusError
	var ne net.Error
	switch {
	case errors.Is(cause, errScheme):
		msg = "Image URL must use the http or https scheme."
	case errors.Is(cause, errNoHost):
		msg = "Image URL has no host."
	case errors.Is(cause, errBlocked):
		msg = fmt.Sprintf("Image URL host %q is not allowed: it is or resolves to a private, loopback, link-local or otherwise internal address.", host)
	case errors.Is(cause, errTooManyHops):
		msg = fmt.Sprintf("Fetching the image from host %q followed more than %d redirects.", host, f.opts.MaxRedirects)
	case errors.As(cause, &se):
		msg = fmt.Sprintf("Fetching the image from host %q failed with HTTP status %d.", host, se.code)
	case errors.Is(cause, errContentType):
		msg = fmt.Sprintf("The file at host %q is not a supported image; use JPEG, PNG, GIF or WebP.", host)
	case errors.Is(cause, errSniffMismatch):
		msg = fmt.Sprintf("The file at host %q is not a JPEG, PNG, GIF or WebP image, whatever its Content-Type says.", host)
	case errors.Is(cause, errTotalTooLarge):
		msg = fmt.Sprintf("The images this request names by URL add up to more than the %d-byte limit per request (passed while downloading from host %q).", f.opts.MaxTotalBytes, host)
	case errors.Is(cause, errTooLarge):
		msg = fmt.Sprintf("The image at host %q is larger than the %d-byte limit.", host, f.opts.MaxBytes)
	case errors.Is(context.Cause(ctx), errTimeout) || errors.Is(cause, context.DeadlineExceeded) ||
		errors.As(cause, &ne) && ne.Timeout():
		msg = fmt.Sprintf("Fetching the image from host %q timed out after %s.", host, f.opts.Timeout)
	default:
		msg = fmt.Sprintf("Could not fetch the image from host %q.", host)
	}
	e := apierr.Invalid(param, "%s", msg)
	e.Err = cause
	return e
}
