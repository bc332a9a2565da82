package sse

import (
	"io"
	"net/http"
)

// Writer writes "data:" events to a client and flushes them.
type Writer struct {
	w   io.Writer
	rc  *http.ResponseController
	buf []byte
}

// NewWriter writes to an HTTP response, flushing through its controller.
func NewWriter(w http.ResponseWriter) *Writer {
	return &Writer{w: w, rc: http.NewResponseController(w)}
}

// Data writes one event whose data is payload (which must not contain a
// newline; JSON from json.Marshal never does). It does not flush.
func (w *Writer) Data(payload []byte) error {
	w.buf = append(w.buf[:0], "data: "...)
	w.buf = append(w.buf, payload...)
	w.buf = append(w.buf, '\n', '\n')
	_, err := w.w.Write(w.buf)
	return err
}

// Done writes the terminating "data: [DONE]" event.
func (w *Writer) Done() error {
	_, err := io.WriteString(w.w, "data: [DONE]\n\n")
	return err
}

// Flush sends what was written so far to the client.
func (w *Writer) Flush() error {
	return w.rc.Flush()
}
