// Package sse reads and writes Server-Sent Events streams, the framing every
// streaming vendor API uses. The reader keeps only the unfinished tail of the
// stream in memory (and no buffer at all while it waits for the next event),
// handles events far larger than bufio.Scanner's 64 KiB default, and bounds a
// single event so an endless line cannot exhaust memory.
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
//
// It holds a read buffer only while bytes of the stream are in it: when
// everything read has been consumed, the next read waits for one byte
// without a buffer, and only then takes one from a pool. A gateway holding
// thousands of streams, each waiting most of its life for the vendor's
// next token, so keeps a buffer for none of the waiting ones (16 KiB each:
// held all along, they were more than a third of a held stream's heap).
type Reader struct {
	br       *bufio.Reader // nil while nothing is buffered
	src      source
	maxEvent int
	line     []byte // reassembly buffer for lines longer than br's buffer
	data     []byte
	typ, id  string
	hasData  bool
}

// bufferSize is the read buffer's: an upstream read that brings a burst of
// events (a fast vendor, or a slow client that let them queue) takes them
// in one pass through the HTTP body's layers.
const bufferSize = 16 << 10

// readers recycles readers, and buffers their read buffers: a gateway opens
// thousands of streams a second, and a fresh 16 KiB buffer for each is pure
// GC work.
var (
	readers = sync.Pool{New: func() any { return new(Reader) }}
	buffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, bufferSize) }}
)

// source is what the read buffer reads: the byte a wait brought, if any
// (and the error that came with it), then the stream.
type source struct {
	r   io.Reader
	one [1]byte // a field, not a local: a local passed to Read would escape
	has bool
	err error
}

func (s *source) Read(p []byte) (int, error) {
	switch {
	case len(p) == 0:
		return 0, nil
	case s.has:
		p[0], s.has = s.one[0], false
		return 1, nil
	case s.err != nil:
		err := s.err
		s.err = nil
		return 0, err
	}
	return s.r.Read(p)
}

// NewReader reads events from r; maxEvent <= 0 means DefaultMaxEvent. Call
// Release when done with it.
func NewReader(r io.Reader, maxEvent int) *Reader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEvent
	}
	rd := readers.Get().(*Reader)
	rd.src = source{r: r}
	rd.maxEvent = maxEvent
	return rd
}

// buffer makes sure a read buffer holds bytes of the stream before a read
// from it: with nothing buffered, it gives the buffer back, waits for the
// stream's next byte without one, and then takes one.
func (r *Reader) buffer() error {
	if r.br != nil {
		if r.br.Buffered() > 0 {
			return nil
		}
		r.dropBuffer()
	}
	for range 100 { // as bufio gives up on a reader that returns nothing
		n, err := r.src.r.Read(r.src.one[:])
		if n > 0 {
			r.src.has, r.src.err = true, err
			r.br = buffers.Get().(*bufio.Reader)
			r.br.Reset(&r.src)
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// dropBuffer gives the read buffer back to the pool.
func (r *Reader) dropBuffer() {
	if r.br != nil {
		r.br.Reset(nil)
		buffers.Put(r.br)
		r.br = nil
	}
}

// Release returns the reader to the pool; neither it nor any Event.Data it
// returned may be used afterwards.
func (r *Reader) Release() {
	r.dropBuffer()
	r.src = source{}
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
	if r.br == nil {
		return false
	}
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
		err := r.buffer() // a line is read from a buffer holding bytes of it
		var line []byte
		if err == nil {
			line, err = r.readLine()
		}
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
	if r.br == nil {
		return false
	}
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
// valid until the next call. A buffer holds bytes of the stream (buffer).
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
