package openaicompat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/redact"
	"github.com/modelgate/modelgate/internal/sse"
)

// eventStream relays a Responses API stream event by event. Events that
// carry the response object get its model set to the public id; the usage
// of the terminal event is kept for billing; an upstream "error" event ends
// the stream with Err, so the gateway answers it in its own words.
type eventStream struct {
	name    string
	secrets *redact.Redactor // redacts an error event (only)
	provider.SSEBody
	model []byte // quoted public model id

	typ      string
	data     []byte
	usage    provider.Usage
	hasUsage bool
	terminal bool // response.completed, .incomplete or .failed was seen
	err      error
}

var (
	_ provider.EventStream = (*eventStream)(nil)
	_ provider.Buffered    = (*eventStream)(nil)
)

func newEventStream(name string, secrets *redact.Redactor, k *provider.Call, body io.ReadCloser, model []byte) *eventStream {
	return &eventStream{name: name, secrets: secrets, SSEBody: provider.NewSSEBody(k, body), model: model}
}

// Next reads the next upstream event.
func (s *eventStream) Next() bool {
	if s.err != nil || s.Closed() {
		return false
	}
	for {
		ev, err := s.R.Next()
		if err != nil {
			s.fail(err)
			return false
		}
		data := ev.Data
		if bytes.Equal(data, []byte("[DONE]")) {
			s.Finish()
			return false
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		if err := jsonx.Check(data, 256); err != nil {
			s.err = provider.BadResponse(s.name, fmt.Errorf("stream event: %w", err))
			return false
		}
		typ := ev.Type
		if t, ok := jsonx.Field(data, "type"); ok && len(t) >= 2 && t[0] == '"' && (typ == "" || typ == "message") {
			typ = string(t[1 : len(t)-1])
		}
		if typ == "" {
			s.err = provider.BadResponse(s.name, errors.New("stream event without a type"))
			return false
		}
		if typ == "error" {
			s.err = provider.FromStatus(s.name, http.StatusBadGateway, nil, parseStreamError(data).Redact(s.secrets))
			return false
		}
		if resp, ok := jsonx.Field(data, "response"); ok && len(resp) > 0 && resp[0] == '{' {
			switch typ {
			case "response.completed", "response.incomplete", "response.failed":
				s.terminal = true
				if u, ok := jsonx.Field(resp, "usage"); ok && !jsonx.IsNull(u) {
					s.usage, s.hasUsage = parseResponsesUsage(u)
				}
			}
			if _, ok := jsonx.Field(resp, "model"); ok {
				patched, err := jsonx.Set(resp, "model", s.model)
				if err == nil {
					data, err = jsonx.Set(data, "response", patched)
				}
				if err != nil {
					s.err = provider.BadResponse(s.name, fmt.Errorf("stream event: %w", err))
					return false
				}
			}
		}
		s.typ, s.data = typ, data
		return true
	}
}

// parseStreamError reads an error event: {"type":"error","code","message","param"}.
func parseStreamError(data []byte) provider.VendorError {
	v := parseVendorError(data)
	if v.Code == "" {
		if c, ok := jsonx.Field(data, "code"); ok {
			v.Code = rawString(c)
		}
	}
	return v
}

// fail records why reading stopped: a stream that ends after its terminal
// event is complete; one that ends before was cut off.
func (s *eventStream) fail(err error) {
	switch {
	case errors.Is(err, io.EOF) && s.terminal:
		s.Finish()
	case errors.Is(err, io.EOF):
		s.err = provider.BadResponse(s.name, errors.New("stream ended before the response was complete"))
	case errors.Is(err, sse.ErrEventTooLarge):
		s.err = provider.BadResponse(s.name, err)
	default:
		if e := provider.FromTransport(s.K.Ctx, s.name, err); e != nil {
			s.err = e
			return
		}
		s.err = err
	}
}

func (s *eventStream) Event() (string, []byte)       { return s.typ, s.data }
func (s *eventStream) Usage() (provider.Usage, bool) { return s.usage, s.hasUsage }
func (s *eventStream) Err() error                    { return s.err }
