package provider

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"
)

// Call is one upstream exchange bounded by two timers: the whole exchange
// (streams included) and the longest quiet spell (waiting for the answer's
// first bytes, RequestSent.FirstByte when set, or for the next ones; on a stream only while the consumer waits for
// them, see StreamReader). When one fires, Ctx is cancelled with
// ErrTotalTimeout or ErrIdleTimeout as its cause, which FromTransport turns
// into the client's 504. Every adapter runs its requests in one.
type Call struct {
	Ctx    context.Context
	cancel context.CancelCauseFunc
	total  *time.Timer
	idle   *time.Timer
	d      time.Duration
}

// StartCall starts the timers of an exchange under ctx. When ctx tracks
// whether the vendor has the request (RequestSent), the exchange reports it.
func StartCall(ctx context.Context, total, idle time.Duration) *Call {
	first := idle
	if s, ok := sentIn(ctx); ok {
		if s.FirstByte > 0 {
			first = s.FirstByte
		}
		if !s.Until.IsZero() {
			first = max(min(first, time.Until(s.Until)), time.Millisecond)
		}
	}
	ctx, cancel := context.WithCancelCause(traced(ctx))
	k := &Call{Ctx: ctx, cancel: cancel, d: idle}
	k.total = time.AfterFunc(total, func() { cancel(ErrTotalTimeout) })
	k.idle = time.AfterFunc(first, func() { cancel(ErrIdleTimeout) })
	return k
}

// Touch restarts the idle timer: the upstream just said something.
func (k *Call) Touch() { k.idle.Reset(k.d) }

// Release stops the timers and cancels Ctx; call it once the exchange is
// over (the body closed).
func (k *Call) Release() {
	k.total.Stop()
	k.idle.Stop()
	k.cancel(context.Canceled)
}

// Reader wraps an upstream body so that every read that brings bytes
// restarts the idle timer.
func (k *Call) Reader(r io.Reader) io.Reader { return idleReader{r, k} }

// StreamReader wraps an upstream event stream so that the idle timer runs
// only while a read waits for the upstream: it is restarted when a read
// begins and stopped when the read returns. Between reads the consumer holds
// an event (a relay may be blocked writing it to a slow client) and the
// upstream is not being asked for anything, so that time is never its
// silence; a client too slow to take what it is sent is the relay's to end
// (its write timeout), not the upstream's idle timeout.
func (k *Call) StreamReader(r io.Reader) io.Reader { return streamReader{r, k} }

type streamReader struct {
	r io.Reader
	k *Call
}

func (r streamReader) Read(p []byte) (int, error) {
	r.k.idle.Reset(r.k.d)
	n, err := r.r.Read(p)
	r.k.idle.Stop()
	return n, err
}

type idleReader struct {
	r io.Reader
	k *Call
}

func (r idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.k.Touch()
	}
	return n, err
}

// ReadBody reads a whole upstream answer of declared length n (-1 when
// unknown) and fails when it is longer than limit, without reading more
// than limit+1 bytes.
func ReadBody(r io.Reader, n, limit int64) ([]byte, error) {
	if n > limit {
		return nil, fmt.Errorf("response of %d bytes exceeds %d", n, limit)
	}
	buf := bytes.NewBuffer(make([]byte, 0, max(n, 512)+1))
	m, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if m > limit {
		return nil, fmt.Errorf("response exceeds %d bytes", limit)
	}
	return buf.Bytes(), nil
}
