package sse

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// Writer writes "data:" events to a client and flushes them.
type Writer struct {
	w        io.Writer
	rc       *http.ResponseController
	buf      []byte
	timeout  time.Duration
	deadline time.Time // the write deadline last set
}

// NewWriter writes to an HTTP response, flushing through its controller.
func NewWriter(w http.ResponseWriter) *Writer {
	return &Writer{w: w, rc: http.NewResponseController(w)}
}

// SetTimeout bounds how long each later write or flush may block on a
// client that does not take what it is sent (0: no bound): between 7/8 of
// d and d, since the connection's deadline is moved only when less than
// 7/8 of d is left (moving it costs more than writing a small event). A
// write that takes longer fails with an error for which TooSlow is true,
// and the connection is unusable afterwards. The deadline stays set when the
// handler returns, so the server's own last bytes (the final chunk,
// trailers) are bounded too; net/http clears it once the response is
// written, before the next request on the connection.
func (w *Writer) SetTimeout(d time.Duration) { w.timeout = d }

// TooSlow reports whether err is a write that failed because the client
// did not take it within the writer's timeout (not because it went away).
func TooSlow(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// arm gives the next write or flush its deadline.
func (w *Writer) arm() {
	if w.timeout <= 0 {
		return
	}
	now := time.Now()
	if w.deadline.Sub(now) > w.timeout-w.timeout/8 {
		return // set moments ago
	}
	w.deadline = now.Add(w.timeout)
	_ = w.rc.SetWriteDeadline(w.deadline)
}

// Data writes one event whose data is payload (which must not contain a
// newline; JSON from json.Marshal never does). It does not flush.
func (w *Writer) Data(payload []byte) error {
	w.buf = append(w.buf[:0], "data: "...)
	w.buf = append(w.buf, payload...)
	w.buf = append(w.buf, '\n', '\n')
	w.arm()
	_, err := w.w.Write(w.buf)
	return err
}

// Done writes the terminating "data: [DONE]" event.
func (w *Writer) Done() error {
	w.arm()
	_, err := io.WriteString(w.w, "data: [DONE]\n\n")
	return err
}

// Flush sends what was written so far to the client.
func (w *Writer) Flush() error {
	w.arm()
	return w.rc.Flush()
}
