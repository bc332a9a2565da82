package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/server"
)

// Reading multipart/form-data uploads (audio transcriptions; written to
// serve any multipart endpoint, though image edits keep their own reader
// in imageform.go for now) part by part: text fields are small and read whole; files are copied
// once into a spool (memory up to spoolMemory, a temporary file beyond)
// and refused with 413 as soon as they pass their limit, before the rest
// of the body is read.

// spoolMemory is how much of an upload stays in memory; larger files go
// to a temporary file.
const spoolMemory = 1 << 20

// formOverhead is what a form may add to its files: text fields, part
// headers and boundaries.
const formOverhead = 1 << 20

// openMultipart checks that r is multipart/form-data with a boundary (else
// 400 naming fileParam, the field the client most needs to send), refuses
// a declared body above maxBody at once (413), and returns a reader over
// the body that stops at maxBody.
func openMultipart(w http.ResponseWriter, r *http.Request, maxBody int64, fileParam string) (*multipart.Reader, error) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/form-data" {
		return nil, apierr.Invalid(fileParam, "The request must be multipart/form-data (got Content-Type %q) with the file in the '%s' field.", ct, fileParam)
	}
	boundary := params["boundary"]
	if boundary == "" || len(boundary) > 70 {
		return nil, apierr.Invalid(fileParam, "The multipart/form-data Content-Type has no valid boundary parameter.")
	}
	if r.ContentLength > maxBody {
		return nil, multipartTooLarge(fileParam, maxBody-formOverhead)
	}
	return multipart.NewReader(http.MaxBytesReader(w, r.Body, maxBody), boundary), nil
}

// multipartError is the client's error for a failure while reading the form:
// 413 when the body passed its limit, else 400 for a malformed body.
func multipartError(err error, param string, fileLimit int64) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return multipartTooLarge(param, fileLimit)
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	e := apierr.Invalid(param, "The multipart/form-data body is malformed: %s.", err)
	e.Err = err
	return e
}

// multipartTooLarge is the 413 for a file (or a whole form) above limit.
func multipartTooLarge(param string, limit int64) *apierr.Error {
	return &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest, Code: apierr.CodeRequestTooLarge,
		Param: param, Message: fmt.Sprintf("The '%s' upload is larger than the limit of %d bytes (%d MB).", param, limit, limit>>20)}
}

// isFilePart reports whether a part is a file upload: its
// Content-Disposition carries a non-empty filename.
func isFilePart(p *multipart.Part) bool {
	_, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	return err == nil && params["filename"] != ""
}

// heldReader holds every byte it reads against the server's body memory
// budget (server.HoldBody): it reads the parts of a form that stay in
// memory; what goes to a temporary file is read without it.
type heldReader struct {
	ctx context.Context
	r   io.Reader
}

func (h heldReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if n > 0 {
		if herr := server.HoldBody(h.ctx, int64(n)); herr != nil {
			return 0, herr
		}
	}
	return n, err
}

// readFormValue reads a text part of at most limit bytes, which must be
// UTF-8; a longer or binary value is a 400 naming the field.
func readFormValue(ctx context.Context, p *multipart.Part, limit int64) (string, error) {
	b, err := io.ReadAll(io.LimitReader(heldReader{ctx, p}, limit+1))
	if err != nil {
		return "", err
	}
	name := p.FormName()
	if int64(len(b)) > limit {
		return "", apierr.Invalid(name, "The '%s' field is longer than %d bytes.", name, limit)
	}
	if !utf8.Valid(b) {
		return "", apierr.Invalid(name, "The '%s' field is not UTF-8 text.", name)
	}
	return string(b), nil
}

// spooled is an uploaded file held once, in memory or in a temporary file.
// Readers from ReaderAt or Open may run concurrently; Close removes the
// temporary file.
type spooled struct {
	Name        string // the client's file name
	ContentType string // the client's part Content-Type ("" when none)
	Size        int64
	mem         []byte
	file        *os.File
}

// spoolPart copies a file part into a spool, refusing it with 413 (naming
// param) as soon as it passes limit bytes. What stays in memory is held
// against the server's body memory budget as it arrives.
func spoolPart(ctx context.Context, p *multipart.Part, param string, limit int64) (*spooled, error) {
	s := &spooled{Name: p.FileName(), ContentType: p.Header.Get("Content-Type")}
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(heldReader{ctx, p}, spoolMemory+1))
	if err != nil {
		return nil, multipartError(err, param, limit)
	}
	if n <= spoolMemory {
		if n > limit {
			return nil, multipartTooLarge(param, limit)
		}
		s.mem, s.Size = buf.Bytes(), n
		return s, nil
	}
	f, err := os.CreateTemp("", "modelgate-upload-*")
	if err != nil {
		return nil, apierr.Internal(fmt.Errorf("spool upload: %w", err))
	}
	s.file = f
	if _, err := f.Write(buf.Bytes()); err != nil {
		s.Close()
		return nil, apierr.Internal(fmt.Errorf("spool upload: %w", err))
	}
	m, err := io.Copy(f, io.LimitReader(p, limit-n+1))
	s.Size = n + m
	if err == nil && s.Size > limit {
		err = multipartTooLarge(param, limit)
	}
	if err != nil {
		s.Close()
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, apierr.Internal(fmt.Errorf("spool upload: %w", err))
		}
		return nil, multipartError(err, param, limit)
	}
	return s, nil
}

// ReaderAt reads the held file.
func (s *spooled) ReaderAt() io.ReaderAt {
	if s.file != nil {
		return s.file
	}
	return bytes.NewReader(s.mem)
}

// Open returns a reader from the start of the file (provider.FormFile's
// Open).
func (s *spooled) Open() (io.ReadCloser, error) {
	return io.NopCloser(io.NewSectionReader(s.ReaderAt(), 0, s.Size)), nil
}

// Close frees the spool; safe on nil and more than once.
func (s *spooled) Close() {
	if s == nil || s.file == nil {
		return
	}
	name := s.file.Name()
	_ = s.file.Close()
	_ = os.Remove(name)
	s.file = nil
}
