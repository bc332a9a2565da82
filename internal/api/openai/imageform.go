package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/contract"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/server"
)

// Limits of an edit upload. Files are counted as they stream in, so an
// oversized upload is refused at the limit, not after it was read.
const (
	maxEditFile   = 50 << 20  // the largest image any model accepts (GPT image models)
	maxEditBody   = 100 << 20 // a whole upload, unless the operator's max_request_bytes is larger
	maxEditParts  = 64        // files and fields together (16 images, a mask, some fields)
	maxEditField  = 64 << 10  // one text field (a 32000-character prompt fits)
	editMemBudget = 8 << 20   // files beyond this much per request wait in temporary files
)

// heldImage is one uploaded file, held once: in memory, or in a temporary
// file when the request's memory budget is spent.
type heldImage struct {
	field, filename, declared string // declared: the part's Content-Type
	sniffed                   string // the real type, from the first bytes
	head                      []byte // the first bytes, for the type and the dimensions
	mem                       []byte
	disk                      *os.File
	size                      int64
}

// open reads the file from the start; readers are independent.
func (f *heldImage) open() (io.ReadCloser, error) {
	if f.disk != nil {
		return io.NopCloser(io.NewSectionReader(f.disk, 0, f.size)), nil
	}
	return io.NopCloser(bytes.NewReader(f.mem)), nil
}

// editForm is a parsed edit upload.
type editForm struct {
	fields []provider.FormField
	files  []*heldImage
	inMem  int64
}

// close deletes the temporary files.
func (f *editForm) close() {
	for _, h := range f.files {
		if h.disk != nil {
			_ = h.disk.Close()
			_ = os.Remove(h.disk.Name())
		}
	}
}

// value is the last value of a text field ("" when absent) and how many
// times it was sent.
func (f *editForm) value(name string) (string, int) {
	v, n := "", 0
	for _, fl := range f.fields {
		if fl.Name == name {
			v, n = fl.Value, n+1
		}
	}
	return v, n
}

// readEditForm reads a multipart/form-data upload part by part. Text
// fields are kept; files are held once, their type sniffed from the first
// bytes (a file that is not an image is refused at once); sizes are
// counted as bytes arrive. The caller closes the form, also on error.
func (h *Handler) readEditForm(w http.ResponseWriter, r *http.Request) (*editForm, error) {
	form := &editForm{}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return form, apierr.Invalid("image", "Image edits take a multipart/form-data body with the image in the 'image' field (got Content-Type %q).", r.Header.Get("Content-Type"))
	}
	if params["boundary"] == "" {
		return form, apierr.Invalid("image", "The multipart/form-data Content-Type has no boundary parameter.")
	}
	limit := max(h.MaxBody, maxEditBody)
	if r.ContentLength > limit {
		return form, imageUploadTooLarge("image", limit)
	}
	mr := multipart.NewReader(http.MaxBytesReader(w, r.Body, limit), params["boundary"])
	for parts := 0; ; parts++ {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return form, imageFormError("", limit, err)
		}
		if parts == maxEditParts {
			return form, apierr.Invalid(p.FormName(), "The form has more than %d parts.", maxEditParts)
		}
		name := p.FormName()
		isFile := p.FileName() != ""
		switch {
		case name == "":
			return form, apierr.Invalid("", "A form part has no name.")
		case !isFile && (name == "image" || name == "image[]" || name == "mask"):
			return form, apierr.Invalid(formParam(name), "'%s' must be a file upload (a part with a filename), not a text field.", name)
		case isFile && knownEditField(name):
			return form, apierr.Invalid(name, "'%s' must be a text field, not a file.", name)
		case isFile:
			err = form.readFile(r.Context(), p, limit)
		default:
			err = form.readField(r.Context(), p, limit)
		}
		if err != nil {
			return form, err
		}
	}
	return form, nil
}

// knownEditField reports the text fields of CreateImageEditRequest.
func knownEditField(name string) bool {
	switch name {
	case "model", "prompt", "n", "size", "quality", "response_format", "user", "background", "output_format",
		"output_compression", "input_fidelity", "stream", "partial_images":
		return true
	}
	return false
}

// formParam is the spec's parameter name of a form field.
func formParam(field string) string { return strings.TrimSuffix(field, "[]") }

func (f *editForm) readField(ctx context.Context, p *multipart.Part, limit int64) error {
	b, err := io.ReadAll(io.LimitReader(heldReader{ctx, p}, maxEditField+1))
	if err != nil {
		return imageFormError(p.FormName(), limit, err)
	}
	if len(b) > maxEditField {
		return apierr.Invalid(p.FormName(), "The field '%s' is longer than %d bytes.", p.FormName(), maxEditField)
	}
	if !utf8.Valid(b) {
		return apierr.Invalid(p.FormName(), "The field '%s' is not UTF-8 text.", p.FormName())
	}
	if e := contract.Field(contract.ImageEdits, p.FormName(), string(b)); e != nil {
		return e
	}
	f.fields = append(f.fields, provider.FormField{Name: p.FormName(), Value: string(b)})
	return nil
}

// readFile holds one file part, refusing it as soon as it is not an image
// or passes maxEditFile. What stays in memory is held against the server's
// body memory budget as it arrives.
func (f *editForm) readFile(ctx context.Context, p *multipart.Part, limit int64) error {
	field := p.FormName()
	hf := &heldImage{field: field, filename: p.FileName(), declared: p.Header.Get("Content-Type")}
	f.files = append(f.files, hf)
	head := make([]byte, 512)
	n, err := io.ReadFull(heldReader{ctx, p}, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return imageFormError(field, limit, err)
	}
	hf.head = head[:n]
	if err := hf.checkType(); err != nil {
		return err
	}
	// What fits in the request's memory budget stays in memory; the rest
	// waits on disk. Either way each file is held exactly once.
	var dst io.Writer
	buf := &bytes.Buffer{}
	if f.inMem+int64(n) < editMemBudget {
		buf.Write(hf.head)
		dst = &imageSpillWriter{ctx: ctx, buf: buf, left: editMemBudget - f.inMem - int64(n), spill: hf}
	} else {
		if err := hf.toDisk(hf.head); err != nil {
			return err
		}
		dst = hf.disk
	}
	m, err := io.Copy(dst, io.LimitReader(p, maxEditFile+1-int64(n)))
	hf.size = int64(n) + m
	if err != nil {
		return imageFormError(field, limit, err)
	}
	if hf.size > maxEditFile {
		return imageUploadTooLarge(formParam(field), maxEditFile)
	}
	if hf.disk == nil {
		hf.mem = buf.Bytes()
		f.inMem += hf.size
	}
	return nil
}

// imageSpillWriter writes to memory until its budget is spent, then moves
// what it has to the file's temporary file and continues there.
type imageSpillWriter struct {
	ctx   context.Context
	buf   *bytes.Buffer
	left  int64
	spill *heldImage
}

func (b *imageSpillWriter) Write(p []byte) (int, error) {
	if b.spill.disk != nil {
		return b.spill.disk.Write(p)
	}
	if int64(len(p)) <= b.left {
		if err := server.HoldBody(b.ctx, int64(len(p))); err != nil {
			return 0, err
		}
		b.left -= int64(len(p))
		return b.buf.Write(p)
	}
	if err := b.spill.toDisk(b.buf.Bytes()); err != nil {
		return 0, err
	}
	b.buf.Reset()
	return b.spill.disk.Write(p)
}

// toDisk creates the file's temporary file, starting with prefix.
func (hf *heldImage) toDisk(prefix []byte) error {
	t, err := os.CreateTemp("", "modelgate-upload-*")
	if err != nil {
		return apierr.Internal(fmt.Errorf("hold upload: %w", err))
	}
	hf.disk = t
	if _, err := t.Write(prefix); err != nil {
		return apierr.Internal(fmt.Errorf("hold upload: %w", err))
	}
	return nil
}

// imageFormError maps a failure to read the upload (multipartError, with
// the field's name without its [] and "image" when the failure is not in a
// file).
func imageFormError(param string, limit int64, err error) error {
	if param == "" {
		param = "image"
	}
	return multipartError(err, formParam(param), limit)
}

func imageUploadTooLarge(param string, limit int64) *apierr.Error {
	return multipartTooLarge(param, limit)
}
