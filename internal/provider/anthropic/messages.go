package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/redact"
	"github.com/modelgate/modelgate/internal/sse"
)

// The pass-through: a Messages request from the gateway's Anthropic door
// goes to the vendor as the client wrote it (only model patched, and stream
// when it disagrees with the method called), under the adapter's own key,
// and the answer comes back as the vendor wrote it (only model patched).

var _ provider.Messenger = (*Client)(nil)

// Messages passes a non-streamed Messages request through.
func (c *Client) Messages(ctx context.Context, req *provider.MessagesRequest) (*provider.MessagesResponse, error) {
	body, err := c.messagesBody(req, false)
	if err != nil {
		return nil, err
	}
	k := c.start(ctx)
	defer k.Release()
	resp, err := c.sendHeader(k, body, false, c.messagesHeader(req.Header))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		return nil, c.transportError(k, err)
	}
	var m struct {
		Type  string              `json:"type"`
		ID    string              `json:"id"`
		Usage anthropicwire.Usage `json:"usage"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, provider.BadResponse(c.name, fmt.Errorf("response body: %w", err))
	}
	if m.Type == "error" {
		var e anthropicwire.ErrorBody
		_ = json.Unmarshal(b, &e)
		return nil, eventError(c.name, c.secrets, e)
	}
	if m.ID == "" {
		return nil, provider.BadResponse(c.name, errors.New("response has no message id"))
	}
	out, err := jsonx.Set(b, "model", anthropicwire.AppendString(nil, req.PublicModel))
	if err != nil {
		return nil, provider.BadResponse(c.name, fmt.Errorf("response body: %w", err))
	}
	return &provider.MessagesResponse{Body: out, Usage: messagesUsage(m.Usage)}, nil
}

// MessagesStream passes a streamed Messages request through and relays its
// events as they arrive.
func (c *Client) MessagesStream(ctx context.Context, req *provider.MessagesRequest) (provider.MessagesStream, error) {
	body, err := c.messagesBody(req, true)
	if err != nil {
		return nil, err
	}
	k := c.start(ctx)
	resp, err := c.sendHeader(k, body, true, c.messagesHeader(req.Header))
	if err != nil {
		k.Release()
		return nil, err
	}
	if !provider.IsEventStream(resp.Header.Get("Content-Type")) {
		defer k.Release()
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		if e, ok := errorIn(b); ok {
			return nil, eventError(c.name, c.secrets, e)
		}
		return nil, provider.BadResponse(c.name, fmt.Errorf("stream answered with Content-Type %q", resp.Header.Get("Content-Type")))
	}
	return &messagesStream{SSEBody: provider.NewSSEBody(k, resp.Body), name: c.name, secrets: c.secrets,
		model: anthropicwire.AppendString(nil, req.PublicModel)}, nil
}

// transportError maps a failure to read an answer; a client that left
// gets the client-closed error rather than none.
func (c *Client) transportError(k *provider.Call, err error) error {
	if e := provider.FromTransport(k.Ctx, c.name, err); e != nil {
		return e
	}
	return fmt.Errorf("anthropic %s: read response: %w", c.name, err)
}

// messagesBody is the client's body with model set to the upstream id and
// stream to what the method serves (a body whose stream already agrees is
// left as it is there). The door validated the body.
func (c *Client) messagesBody(req *provider.MessagesRequest, stream bool) ([]byte, error) {
	b, err := jsonx.Set(req.Body, "model", anthropicwire.AppendString(nil, req.UpstreamModel))
	if err != nil {
		return nil, fmt.Errorf("anthropic %s: messages body: %w", c.name, err)
	}
	v, ok := jsonx.Field(b, "stream")
	switch {
	case stream && !bytes.Equal(v, []byte("true")):
		b, err = jsonx.Set(b, "stream", []byte("true"))
	case !stream && ok && bytes.Equal(v, []byte("true")):
		b, err = jsonx.Set(b, "stream", []byte("false"))
	}
	if err != nil {
		return nil, fmt.Errorf("anthropic %s: messages body: %w", c.name, err)
	}
	return b, nil
}

// notForwarded are the client headers a pass-through never sends on: the
// client's credentials (the adapter's key goes instead), what the
// transport sets, and hop-by-hop headers.
var notForwarded = map[string]bool{
	"X-Api-Key": true, "Authorization": true, "Proxy-Authorization": true, "Cookie": true,
	"Content-Type": true, "Content-Length": true, "Accept": true, "Accept-Encoding": true, "Host": true,
	"Connection": true, "Keep-Alive": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

// messagesHeader is the adapter's headers (its key, default version,
// operator headers) with the client's h laid over them: the client's
// anthropic-version replaces the default, its anthropic-beta values are
// added after the operator's (once each), and any other header replaces
// the adapter's of that name, except those in notForwarded.
func (c *Client) messagesHeader(h http.Header) http.Header {
	out := c.header.Clone()
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		if notForwarded[ck] || len(vs) == 0 {
			continue
		}
		if ck == "Anthropic-Beta" {
			out.Set(ck, mergeBetas(c.header.Values(ck), vs))
			continue
		}
		out[ck] = append([]string(nil), vs...)
	}
	return out
}

// mergeBetas joins beta names from header values (each a comma-separated
// list) in order, each once.
func mergeBetas(lists ...[]string) string {
	var names []string
	for _, vs := range lists {
		for _, v := range vs {
			for n := range strings.SplitSeq(v, ",") {
				if n = strings.TrimSpace(n); n != "" && !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	return strings.Join(names, ",")
}

// messagesUsage converts a Message's usage as toUsage does: the prompt is
// every input token, cached or not; reasoning is output_tokens_details'
// thinking_tokens when the vendor sends it.
func messagesUsage(u anthropicwire.Usage) provider.Usage {
	cr := u.CacheReadInputTokens
	in := u.InputTokens + cr + u.CacheCreationInputTokens
	out := u.OutputTokens
	pu := provider.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out, CachedTokens: cr}
	if d := u.OutputTokensDetails; d != nil {
		pu.ReasoningTokens = min(max(d.ThinkingTokens, 0), out)
	}
	return pu
}

// messagesStream relays an Anthropic event stream event by event. It
// parses only message_start (usage, and where model is), message_delta
// (usage, stop reason) and error; every other event is relayed unread.
type messagesStream struct {
	provider.SSEBody
	name     string
	secrets  *redact.Redactor
	model    []byte // the public id as a JSON string
	event    []byte // the current event; reused
	usage    anthropicwire.Usage
	started  bool // message_start arrived
	finished bool // message_delta with a stop_reason arrived
	stopped  bool // message_stop was relayed
	err      error
}

var (
	_ provider.MessagesStream = (*messagesStream)(nil)
	_ provider.Buffered       = (*messagesStream)(nil)
)

// Next reads the next upstream event and makes it the current one.
func (s *messagesStream) Next() bool {
	if s.err != nil || s.Closed() {
		return false
	}
	if s.stopped {
		s.Finish()
		return false
	}
	ev, err := s.R.Next()
	if err != nil {
		return s.fail(err)
	}
	name := ev.Type
	if name == "" || name == "message" {
		if t, ok := jsonx.Field(ev.Data, "type"); ok && len(t) > 1 && t[0] == '"' {
			name = string(t[1 : len(t)-1])
		}
	}
	data := ev.Data
	switch name {
	case anthropicwire.EventMessageStart:
		return s.start(data)
	case anthropicwire.EventMessageDelta:
		var e anthropicwire.StreamEvent
		if err := json.Unmarshal(data, &e); err != nil {
			return s.bad(name, err)
		}
		s.usage.Merge(e.Usage)
		if e.Delta != nil && e.Delta.StopReason != "" {
			s.finished = true
		}
	case anthropicwire.EventMessageStop:
		s.stopped = true
	case anthropicwire.EventError:
		var e anthropicwire.ErrorBody
		if err := json.Unmarshal(data, &e); err != nil {
			return s.bad(name, err)
		}
		s.err = eventError(s.name, s.secrets, e)
		return false
	}
	s.event = appendRawEvent(s.event[:0], name, data, nil, 0, 0)
	return true
}

// start relays message_start with message.model replaced by the public id
// and records its usage; only message's usage is decoded.
func (s *messagesStream) start(data []byte) bool {
	msg, ok := jsonx.Field(data, "message")
	if !ok || len(msg) == 0 || msg[0] != '{' {
		return s.bad(anthropicwire.EventMessageStart, errors.New("no message"))
	}
	if u, ok := jsonx.Field(msg, "usage"); ok {
		if err := json.Unmarshal(u, &s.usage); err != nil {
			return s.bad(anthropicwire.EventMessageStart, err)
		}
	}
	s.started = true
	from, to := 0, 0
	if m, ok := jsonx.Field(msg, "model"); ok {
		from = cap(data) - cap(m) // m is a slice of data
		to = from + len(m)
	}
	s.event = appendRawEvent(s.event[:0], anthropicwire.EventMessageStart, data, s.model, from, to)
	return true
}

// appendRawEvent appends "event: NAME" and data as data lines (one per
// line of data), with data[from:to] replaced by with when to > 0.
func appendRawEvent(dst []byte, name string, data, with []byte, from, to int) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	dst = append(dst, "\ndata: "...)
	if to > 0 {
		dst = appendLines(dst, data[:from])
		dst = append(dst, with...)
		data = data[to:]
	}
	dst = appendLines(dst, data)
	return append(dst, '\n', '\n')
}

// appendLines appends b with a "data: " after each of its newlines.
func appendLines(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(dst, b...)
		}
		dst = append(dst, b[:i+1]...)
		dst = append(dst, "data: "...)
		b = b[i+1:]
	}
}

func (s *messagesStream) bad(name string, err error) bool {
	s.err = provider.BadResponse(s.name, fmt.Errorf("stream event %q: %w", name, err))
	return false
}

// fail records why reading stopped. A stream that ends after its stop
// reason but without message_stop is accepted; one that ends before was
// cut off.
func (s *messagesStream) fail(err error) bool {
	switch {
	case errors.Is(err, io.EOF) && s.finished:
		s.Finish()
	case errors.Is(err, io.EOF):
		s.err = provider.BadResponse(s.name, errors.New("stream ended before it finished"))
	case errors.Is(err, sse.ErrEventTooLarge):
		s.err = provider.BadResponse(s.name, err)
	default:
		if e := provider.FromTransport(s.K.Ctx, s.name, err); e != nil {
			s.err = e
		} else {
			s.err = fmt.Errorf("anthropic %s: read stream: %w", s.name, err)
		}
	}
	return false
}

func (s *messagesStream) Event() []byte { return s.event }
func (s *messagesStream) Err() error    { return s.err }

// Usage is message_start's usage merged with message_delta's, once a
// message_delta with a stop reason arrived.
func (s *messagesStream) Usage() (provider.Usage, bool) {
	if !s.started || !s.finished {
		return provider.Usage{}, false
	}
	return messagesUsage(s.usage), true
}
