// Package sse reads and writes Server-Sent Events streams, the framing every
// streaming vendor API uses. The reader keeps only the unfinished tail of the
// stream in memory, handles events far larger than bufio.Scanner's 64 KiB
// default, and bounds a single event so an endless line cannot exhaust memory.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxEvent bounds one event's size when the caller gives no limit.
const DefaultMaxEvent = 16 << 20

// ErrEventTooLarge is returned when one event exceeds the reader's limit.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one dispatched event. Data is only valid until the next call to
// Reader.Next.
type Event struct {
	Type string // the "event:" field; empty means "message"
	ID   string
	Data []byte // "data:" lines joined with "\n"
}

// Reader decodes events from a stream.
type Reader struct {
	br       *bufio.Reader
	maxEvent int
	line     []byte // reassembly buffer for lines longer than br's buffer
	data     []byte
	typ, id  string
	hasData  bool
}

// readers recycles readers and their buffers: a gateway opens thousands of
// streams a second, and a fresh 16 KiB buffer for each is pure GC work.
var readers = sync.Pool{New: func() any {
	return &Reader{br: bufio.NewReaderSize(nil, 16<<10)}
}}

// NewReader reads events from r; maxEvent <= 0 means DefaultMaxEvent. Call
// Release when done with it.
func NewReader(r io.Reader, maxEvent int) *Reader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEvent
	}
	rd := readers.Get().(*Reader)
	rd.br.Reset(r)
	rd.maxEvent = maxEvent
	return rd
}

// Release returns the reader to the pool; neither it nor any Event.Data it
// returned may be used afterwards.
func (r *Reader) Release() {
	r.br.Reset(nil)
	if cap(r.line) > 64<<10 {
		r.line = nil // do not keep one huge event's buffer forever
	}
	if cap(r.data) > 64<<10 {
		r.data = nil
	}
	r.line, r.data = r.line[:0], r.data[:0]
	r.typ, r.id, r.hasData = "", "", false
	readers.Put(r)
}

// Buffered reports whether the next event is already complete in memory,
// so a writer can delay a flush it would otherwise do after each event
// without delaying any event: bytes of an unfinished event (an upstream
// write split across reads) do not count, since Next would wait for the
// rest. It looks at the buffered bytes' end first: upstreams write whole
// events, so the buffer almost always ends with one.
func (r *Reader) Buffered() bool {
	n := r.br.Buffered()
	if n == 0 {
		return false
	}
	b, _ := r.br.Peek(n) // what is buffered: no read
	if endsEvent(b) {
		return true
	}
	return bytes.Contains(b, []byte("\n\n")) || bytes.Contains(b, []byte("\n\r\n"))
}

// endsEvent reports whether b ends with a blank line.
func endsEvent(b []byte) bool {
	n := len(b)
	return n >= 2 && b[n-1] == '\n' && (b[n-2] == '\n' || (n >= 3 && b[n-2] == '\r' && b[n-3] == '\n'))
}

// Next returns the next event. It returns io.EOF after the last one; an
// event still open when the stream ends is dispatched if it has data, since
// several vendors omit the final blank line.
func (r *Reader) Next() (Event, error) {
	r.data = r.data[:0]
	r.typ, r.id, r.hasData = "", "", false
	for {
		line, err := r.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && r.hasData {
				return r.event(), nil
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if r.hasData {
				return r.event(), nil
			}
			r.typ, r.id = "", "" // an event without data is not dispatched
			continue
		}
		if !r.hasData {
			// The usual event is one data line and a blank line already
			// buffered: its data is returned in place, not copied (it
			// stays valid until the next read, in the next call).
			if v, ok := dataValue(line); ok && len(v) <= r.maxEvent {
				if r.blankNext() {
					return Event{Type: r.typ, ID: r.id, Data: v}, nil
				}
			}
		}
		if err := r.field(line); err != nil {
			return Event{}, err
		}
	}
}

// dataValue returns the value of a "data:" line.
func dataValue(line []byte) ([]byte, bool) {
	if len(line) < 5 || string(line[:5]) != "data:" {
		return nil, false
	}
	v := line[5:]
	if len(v) > 0 && v[0] == ' ' {
		v = v[1:]
	}
	return v, true
}

// blankNext consumes the next line if it is blank and already buffered,
// without reading (which could move the buffer's contents and so the line
// just returned by readLine).
func (r *Reader) blankNext() bool {
	b, _ := r.br.Peek(min(r.br.Buffered(), 2))
	switch {
	case len(b) >= 1 && b[0] == '\n':
		_, _ = r.br.Discard(1)
		return true
	case len(b) == 2 && b[0] == '\r' && b[1] == '\n':
		_, _ = r.br.Discard(2)
		return true
	}
	return false
}

func (r *Reader) event() Event {
	return Event{Type: r.typ, ID: r.id, Data: r.data}
}

func (r *Reader) field(line []byte) error {
	name, value, found := bytes.Cut(line, []byte{':'})
	if found && len(name) == 0 {
		return nil // comment, e.g. ": ping" keep-alives
	}
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(name) {
	case "data":
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		if len(r.data)+len(value) > r.maxEvent {
			return fmt.Errorf("%w: more than %d bytes", ErrEventTooLarge, r.maxEvent)
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		r.typ = string(value)
	case "id":
		r.id = string(value)
	}
	return nil // "retry" and unknown fields are ignored, as the spec says
}

// readLine returns the next line without its "\n" or "\r\n". The slice is
// valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == nil {
		return trimEOL(line), nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			return trimEOL(line), nil // last line without a newline
		}
		return nil, err
	}
	r.line = append(r.line[:0], line...)
	for {
		if len(r.line) > r.maxEvent {
			return nil, fmt.Errorf("%w: line longer than %d bytes", ErrEventTooLarge, r.maxEvent)
		}
		line, err = r.br.ReadSlice('\n')
		r.line = append(r.line, line...)
		switch {
		case err == nil:
			return trimEOL(r.line), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return trimEOL(r.line), nil
		default:
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
