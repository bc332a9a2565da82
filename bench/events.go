package main

// The load generator's checks of Anthropic-shaped answers: a Message, and
// a Messages event stream, whose events come as `event: NAME` and
// `data: {"type":"NAME",…}` frames and which ends at message_stop (there
// is no [DONE]).

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

var (
	eventField   = []byte("event:")
	typeKey      = []byte(`"type"`)
	messageName  = []byte("message")
	contentField = []byte(`"content"`)
)

// checkMessage is a cheap sanity check of a non-stream Message body: an
// object with "type": "message" and content.
func checkMessage(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' || !hasType(b, messageName) || !bytes.Contains(b, contentField) {
		return fmt.Errorf("malformed Message: %.200q", b)
	}
	return nil
}

// readMessagesSSE reads a Messages event stream to its end. Every event
// must be a JSON object whose type is the frame's event name; the first
// must be message_start and the last message_stop, an error event fails
// the stream, and when want > 0 exactly want events (pings included) must
// arrive. It returns the time from t0 to the first data line.
func readMessagesSSE(br *bufio.Reader, t0 time.Time, want int) (time.Duration, error) {
	var ttfb time.Duration
	var name []byte // the pending frame's event name, nil when none
	events, seen, stopped := 0, false, false
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return ttfb, errors.New("stream: line longer than the read buffer")
		}
		line = bytes.TrimRight(line, "\r\n")
		if v, ok := bytes.CutPrefix(line, eventField); ok {
			name = append(name[:0], bytes.TrimPrefix(v, []byte{' '})...)
		} else if data, ok := bytes.CutPrefix(line, dataField); ok {
			data = bytes.TrimPrefix(data, []byte{' '})
			if !seen {
				ttfb, seen = time.Since(t0), true
			}
			events++
			if e := checkEvent(name, data, events, stopped); e != nil {
				return ttfb, e
			}
			stopped = string(name) == "message_stop"
			name = name[:0]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return ttfb, fmt.Errorf("stream: after %d events: %w", events, err)
		}
	}
	if !stopped {
		return ttfb, fmt.Errorf("stream: ended after %d events without message_stop", events)
	}
	if want > 0 && events != want {
		return ttfb, fmt.Errorf("stream: %d events up to message_stop, want %d", events, want)
	}
	return ttfb, nil
}

// checkEvent checks the n-th event of a Messages stream, named name, with
// data; stopped says whether message_stop came before it.
func checkEvent(name, data []byte, n int, stopped bool) error {
	switch {
	case stopped:
		return fmt.Errorf("stream: event after message_stop: %.200q", data)
	case len(name) == 0:
		return fmt.Errorf("stream: event %d has no event: line: %.200q", n, data)
	case string(name) == "error":
		return fmt.Errorf("stream: error event: %.300s", data)
	case len(data) < 2 || data[0] != '{' || data[len(data)-1] != '}':
		return fmt.Errorf("stream: malformed event %d (%s): %.200q", n, name, data)
	case !hasType(data, name):
		return fmt.Errorf("stream: event %d is named %s but its data is %.200q", n, name, data)
	case n == 1 && string(name) != "message_start":
		return fmt.Errorf("stream: first event is %s, want message_start", name)
	}
	return nil
}

// hasType reports whether the JSON object data has a "type" member equal
// to name, with or without spaces around the colon (Anthropic writes
// `{"type": "ping"}`).
func hasType(data, name []byte) bool {
	for rest := data; ; {
		i := bytes.Index(rest, typeKey)
		if i < 0 {
			return false
		}
		v := bytes.TrimLeft(rest[i+len(typeKey):], " \t")
		if c, ok := bytes.CutPrefix(v, []byte{':'}); ok {
			c = bytes.TrimLeft(c, " \t")
			if len(c) > len(name)+1 && c[0] == '"' && bytes.Equal(c[1:1+len(name)], name) && c[1+len(name)] == '"' {
				return true
			}
		}
		rest = rest[i+len(typeKey):]
	}
}
