package sse

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// Writer writes events to a client and flushes them. Events are framed
// into a buffer of the writer's own and handed to the response in one
// write when the caller flushes (or when a burst of them passes
// maxPending): a client cannot tell the difference, since nothing reaches
// it before a flush anyway, and a burst of events read from one upstream
// read costs one trip through the response's layers instead of one each.
type Writer struct {
	w        io.Writer
	rc       http.ResponseController
	pending  *[]byte // framed events not yet written; nil when none
	timeout  time.Duration
	deadline time.Time // the write deadline last set
}

// maxPending is how many bytes of events the writer keeps before it writes
// them to the response without waiting for a flush.
const maxPending = 32 << 10

// pendingPool recycles the event buffers: a stream holds one only between
// an event and the next flush, never while it waits for the upstream.
var pendingPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// NewWriter writes to an HTTP response, flushing through its controller.
func NewWriter(w http.ResponseWriter) *Writer {
	return &Writer{w: w, rc: *http.NewResponseController(w)}
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

// buf returns the pending events, to append one to.
func (w *Writer) buf() []byte {
	if w.pending == nil {
		w.pending = pendingPool.Get().(*[]byte)
	}
	return *w.pending
}

// queue keeps b, the pending events with one more appended; past
// maxPending it writes them out.
func (w *Writer) queue(b []byte) error {
	*w.pending = b
	if len(b) < maxPending {
		return nil
	}
	return w.write()
}

// write hands the pending events to the response in one write.
func (w *Writer) write() error {
	if w.pending == nil {
		return nil
	}
	p := w.pending
	w.pending = nil
	var err error
	if len(*p) > 0 {
		w.arm()
		_, err = w.w.Write(*p)
	}
	if cap(*p) <= 4*maxPending { // do not keep one huge event's buffer
		*p = (*p)[:0]
		pendingPool.Put(p)
	}
	return err
}

// Data queues one event whose data is payload (which must not contain a
// newline; JSON from json.Marshal never does). Nothing is sent before
// Flush, except bursts past maxPending.
func (w *Writer) Data(payload []byte) error {
	b := append(w.buf(), "data: "...)
	b = append(b, payload...)
	return w.queue(append(b, '\n', '\n'))
}

// Done queues the terminating "data: [DONE]" event.
func (w *Writer) Done() error {
	return w.queue(append(w.buf(), "data: [DONE]\n\n"...))
}

// End hands the events queued so far to the response without flushing
// it, for the last events of a stream: the server sends them together with
// the end of the response (the final chunk and any trailers) in one write
// when the handler returns. A client that stops reading at the last event
// (openai-go closes the body at [DONE]) then finds the body complete and
// keeps its connection, where after a flush the end would come in a later
// write that it does not wait for, and its connection would be dropped.
func (w *Writer) End() error { return w.write() }

// Flush sends the events queued so far to the client.
func (w *Writer) Flush() error {
	if err := w.write(); err != nil {
		return err
	}
	w.arm()
	return w.rc.Flush()
}
