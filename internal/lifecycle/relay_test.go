package lifecycle

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// rawEncoder relays whole SSE events as they are (a pass-through door).
type rawEncoder struct{}

func (rawEncoder) Chunk(sw *sse.Writer, chunk []byte) error             { return sw.Raw(chunk) }
func (rawEncoder) End(*sse.Writer, provider.Usage) error                { return nil }
func (rawEncoder) Broken(sw *sse.Writer, e *apierr.Error) error         { return sw.Event("error", e.JSON()) }
func (rawEncoder) Answer(body []byte, _ *Outcome) ([]byte, error)       { return body, nil }
func (rawEncoder) Fail(w http.ResponseWriter, _ *reqinfo.Info, _ error) { w.WriteHeader(500) }

// deltaText is a door's way to read the text of its events: the
// "text" member of a content_block_delta's delta.
func deltaText(s *tokenize.Stream, event []byte) {
	_, data, ok := cutData(event)
	if !ok {
		return
	}
	if d, ok := jsonx.Field(data, "delta"); ok {
		if v, ok := jsonx.Field(d, "text"); ok {
			WriteString(s, v)
		}
	}
}

// cutData is the data line of one whole SSE event.
func cutData(event []byte) (name, data []byte, ok bool) {
	const prefix = "\ndata: "
	for i := 0; i+len(prefix) <= len(event); i++ {
		if string(event[i:i+len(prefix)]) == prefix {
			end := len(event)
			for end > 0 && event[end-1] == '\n' {
				end--
			}
			return event[:i], event[i+len(prefix) : end], true
		}
	}
	return nil, nil, false
}

// A pass-through stream's events reach the client byte for byte, and when
// the vendor sends no usage the charge counts the delivered text with the
// door's reader of its events, and the prompt with AdmitBody's count.
func TestRelayRawEventsCountsDoorText(t *testing.T) {
	events := []string{
		"event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\" hello hello\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\" hello\"}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	}
	price := billing.TokenPrice{Input: money.Unit, Output: money.Unit}
	h := billedCore(billing.ModelPrice{Priced: true, Price: price}, true, 10*money.Unit)
	c, err := h.AdmitBody(context.Background(), &reqinfo.Info{}, gate.Principal{AccountID: "a", KeyID: "k"}, "m", "m",
		[]byte(`{}`), 100, func() (int64, error) { return 9, nil })
	if err != nil {
		t.Fatal(err)
	}
	var out Outcome
	info := &reqinfo.Info{}
	w := httptest.NewRecorder()
	st := &fakeStream{chunks: events}
	upErr, done := h.Relay(w, httptest.NewRequest(http.MethodPost, "/", nil), info, st, st.Next(),
		StreamBill{Charge: c, Delivered: c.Delivered(deltaText), Out: &out}, rawEncoder{})
	if upErr != nil || done {
		t.Fatalf("ended with %v, done %v", upErr, done)
	}
	var want string
	for _, e := range events {
		want += e
	}
	if got := w.Body.String(); got != want {
		t.Errorf("relayed %q, want %q", got, want)
	}
	tok := tokenize.NewSet().For("")
	text := int64(tok.Count([]byte(" hello hello hello")))
	if out.Usage.PromptTokens != 9 || out.Usage.CompletionTokens != text || !out.Estimated {
		t.Errorf("usage %+v (estimated %v), want 9 prompt and %d completion tokens", out.Usage, out.Estimated, text)
	}
	if cost, _ := billing.Cost(price, billing.Tokens{Prompt: 9, Completion: text}, money.PPM); out.Cost != cost {
		t.Errorf("cost %v, want %v", out.Cost, cost)
	}
	if w.Header().Get(CostHeader) != out.Charged().String() {
		t.Errorf("cost header %q, want %q", w.Header().Get(CostHeader), out.Charged().String())
	}
}
