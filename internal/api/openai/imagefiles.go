package openai

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// Error codes of the image file endpoint.
const (
	codeBadSignature = "invalid_signature"
	codeLinkExpired  = "url_expired"
)

// ImageFiles serves GET imagestore.FilesPath + "{name}": the images behind
// the signed URLs of image answers. It takes no API key (the signature is
// the credential, so links work in a browser or an <img> tag): a missing,
// wrong or expired signature is a 403, checked before the name is looked
// up, so nobody learns which images exist; an unknown name with a valid
// signature (an image already swept) is a 404.
func (h *Handler) ImageFiles() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := reqinfo.From(r.Context())
		info.Endpoint = "images.files"
		defer h.Record(info, &lifecycle.Outcome{})
		name := r.PathValue("name")
		if h.Images == nil || !imagestore.ValidName(name) {
			h.fail(w, info, fileNotFound())
			return
		}
		q := r.URL.Query()
		switch err := h.Images.Check(imagestore.FilesPath+name, q.Get("exp"), q.Get("sig")); {
		case errors.Is(err, imagestore.ErrExpired):
			h.fail(w, info, &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypeInvalidRequest, Code: codeLinkExpired,
				Message: "This image URL has expired; generate the image again to get a new one."})
			return
		case err != nil:
			h.fail(w, info, &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypeInvalidRequest, Code: codeBadSignature,
				Message: "This image URL's signature is not valid for it."})
			return
		}
		obj, err := h.Images.Open(r.Context(), name)
		if errors.Is(err, imagestore.ErrNotFound) {
			h.fail(w, info, fileNotFound())
			return
		}
		if err != nil {
			h.fail(w, info, apierr.Internal(err))
			return
		}
		defer obj.Body.Close()
		hdr := w.Header()
		hdr.Set("Content-Type", obj.ContentType)
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("Content-Security-Policy", "default-src 'none'; sandbox")
		exp, _ := strconv.ParseInt(q.Get("exp"), 10, 64)
		if left := time.Unix(exp, 0).Sub(h.Clock()); left > 0 {
			hdr.Set("Cache-Control", "private, max-age="+strconv.FormatInt(int64(left/time.Second), 10))
		}
		info.Status = http.StatusOK
		if rs, ok := obj.Body.(io.ReadSeeker); ok {
			http.ServeContent(w, r, "", obj.ModTime, rs)
			return
		}
		if obj.Size >= 0 {
			hdr.Set("Content-Length", strconv.FormatInt(obj.Size, 10))
		}
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return
		}
		if _, err := io.Copy(w, obj.Body); err != nil {
			info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, apierr.CodeClientClosed, err.Error()
		}
	})
}

func fileNotFound() *apierr.Error {
	return &apierr.Error{Status: http.StatusNotFound, Type: apierr.TypeInvalidRequest, Code: apierr.CodeNotFound,
		Message: "No such image. Image URLs are valid for a limited time."}
}
