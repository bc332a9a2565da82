package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
)

// These tests hold every streaming endpoint to one rule: the upstream's idle
// timer measures the upstream only; a client too slow to take what it is
// sent is ended by write_timeout as a client-side ending (499
// client_too_slow), never as upstream_timeout; and whatever the ending, the
// client pays for what it was sent. Timing is never asserted, only
// outcomes, with generous margins: the idle timeout is 1s and the pauses
// are several times that.

// fastUpstream is a fake vendor that streams as fast as the gateway takes
// it, in large events, in four dialects: OpenAI chat completions, OpenAI
// Responses, and Anthropic Messages (legacy completions reach it as chat).
// The upstream model id picks the scenario:
//
//	big      bigEvents events of eventSize bytes of text (256 KiB), then usage and the end
//	huge     2 events of 192 KiB, then usage and the end
//	stall    3 events, then silence until the request is cancelled
//	silent   the stream's opening (no text), then silence
//	endless  events until the request is cancelled
//	trickle  a short event every 50ms until the request is cancelled
//
// Each request is told apart by the "tag-…" word in its body, so parallel
// tests can wait for the cancellation of their own request.
type fastUpstream struct {
	*httptest.Server
	mu        sync.Mutex
	cancelled map[string]bool // tag → the gateway abandoned the request
}

const (
	eventSize = 8 << 10
	bigEvents = 32
)

var tagRE = regexp.MustCompile(`tag-[0-9]+`)

func newFastUpstream(t *testing.T) *fastUpstream {
	u := &fastUpstream{cancelled: map[string]bool{}}
	u.Server = httptest.NewServer(u)
	t.Cleanup(u.Close)
	return u
}

func (u *fastUpstream) wasCancelled(tag string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.cancelled[tag]
}

// waitCancelled waits until the gateway has abandoned the request tagged
// tag (it may be called from any goroutine).
func (u *fastUpstream) waitCancelled(t *testing.T, tag string) {
	deadline := time.Now().Add(60 * time.Second)
	for !u.wasCancelled(tag) {
		if time.Now().After(deadline) {
			t.Errorf("%s: the upstream request was never cancelled", tag)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dialect writes one vendor's stream framing.
type dialect struct {
	head  func(model string) []string // events before the text
	delta func(seq int, text string) string
	tail  func(seq, completion int) []string
}

func chatEvent(choices string, extra string) string {
	return `data: {"id":"chatcmpl-fast","object":"chat.completion.chunk","created":1,"model":"m","choices":` + choices + extra + "}\n\n"
}

var dialects = map[string]dialect{
	"/v1/chat/completions": {
		head: func(string) []string {
			return []string{chatEvent(`[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`, "")}
		},
		delta: func(_ int, text string) string {
			return chatEvent(`[{"index":0,"delta":{"content":"`+text+`"},"finish_reason":null}]`, "")
		},
		tail: func(_ int, n int) []string {
			return []string{
				chatEvent(`[{"index":0,"delta":{},"finish_reason":"stop"}]`, ""),
				chatEvent(`[]`, fmt.Sprintf(`,"usage":{"prompt_tokens":9,"completion_tokens":%d,"total_tokens":%d}`, n, n+9)),
				"data: [DONE]\n\n",
			}
		},
	},
	"/v1/responses": {
		head: func(string) []string {
			return []string{"event: response.created\n" + `data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_fast","object":"response","created_at":1,"status":"in_progress","model":"m","output":[],"usage":null}}` + "\n\n"}
		},
		delta: func(seq int, text string) string {
			return "event: response.output_text.delta\n" + fmt.Sprintf(`data: {"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_fast","output_index":0,"content_index":0,"delta":"%s"}`, seq, text) + "\n\n"
		},
		tail: func(seq, n int) []string {
			return []string{"event: response.completed\n" + fmt.Sprintf(`data: {"type":"response.completed","sequence_number":%d,"response":{"id":"resp_fast","object":"response","created_at":1,"status":"completed","model":"m","output":[{"id":"msg_fast","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"(long)","annotations":[]}]}],"usage":{"input_tokens":9,"output_tokens":%d,"total_tokens":%d}}}`, seq, n, n+9) + "\n\n"}
		},
	},
	"/v1/messages": {
		head: func(string) []string {
			return []string{
				"event: message_start\n" + `data: {"type":"message_start","message":{"id":"msg_fast","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1}}}` + "\n\n",
				"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n",
			}
		},
		delta: func(_ int, text string) string {
			return "event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + text + `"}}` + "\n\n"
		},
		tail: func(_ int, n int) []string {
			return []string{
				"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n",
				"event: message_delta\n" + fmt.Sprintf(`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, n) + "\n\n",
				"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n",
			}
		},
	},
}

// lorem is n bytes of plain words, safe inside a JSON string.
func lorem(n int) string {
	const words = "lorem ipsum dolor sit amet consectetur adipiscing elit "
	return strings.Repeat(words, n/len(words)+1)[:n]
}

func (u *fastUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	d, ok := dialects[r.URL.Path]
	if !ok {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	tag := tagRE.FindString(string(body))
	abandoned := func() {
		u.mu.Lock()
		u.cancelled[tag] = true
		u.mu.Unlock()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(ev string) bool {
		if _, err := io.WriteString(w, ev); err != nil || rc.Flush() != nil {
			abandoned()
			return false
		}
		return true
	}
	for _, ev := range d.head(req.Model) {
		if !send(ev) {
			return
		}
	}
	text := lorem(eventSize)
	events := -1 // until cancelled
	pace := time.Duration(0)
	switch req.Model {
	case "big":
		events = bigEvents
	case "huge":
		events, text = 2, lorem(192<<10)
	case "stall":
		events = 3
	case "silent":
		events = 0
	case "trickle":
		text, pace = "tick tock ", 50*time.Millisecond
	}
	seq := 1
	for i := 0; events < 0 || i < events; i++ {
		if pace > 0 {
			select {
			case <-r.Context().Done():
				abandoned()
				return
			case <-time.After(pace):
			}
		}
		if !send(d.delta(seq, text)) {
			return
		}
		seq++
	}
	if req.Model == "stall" || req.Model == "silent" {
		<-r.Context().Done()
		abandoned()
		return
	}
	for _, ev := range d.tail(seq, 1000) {
		if !send(ev) {
			return
		}
	}
}

// fastScenarios are served by the fast upstream, prefixed fast- through an
// OpenAI-compatible provider (Responses passed through) and claude- through
// an Anthropic provider (Responses translated to chat).
var fastScenarios = []string{"big", "huge", "stall", "silent", "endless", "trickle"}

// startFastGateway runs the gateway in front of the fast upstream with
// small socket buffers (SO_SNDBUF on its listener), so that a client that
// does not read blocks the gateway's writes after tens of kilobytes rather
// than megabytes; the behaviour is the same with the kernel's defaults,
// only slower to reach.
func startFastGateway(t *testing.T, mutate func(*config.Config)) (*gateway, *fastUpstream) {
	t.Helper()
	fast := newFastUpstream(t)
	up := providertest.NewOpenAI(t)
	cfg := testConfig(t, up.URL)
	var oai, claude []config.ModelRef
	in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
	for _, s := range fastScenarios {
		oai = append(oai, config.ModelRef{ID: "fast-" + s, Upstream: s})
		claude = append(claude, config.ModelRef{ID: "claude-" + s, Upstream: s})
		cfg.Models = append(cfg.Models, config.ModelConfig{ID: "fast-" + s, Input: &in, Output: &out},
			config.ModelConfig{ID: "claude-" + s, Input: &in, Output: &out})
	}
	cfg.Providers = append(cfg.Providers,
		config.Provider{Name: "fast-openai", Type: "openai", BaseURL: fast.URL + "/v1", APIKey: "x", Models: oai,
			Timeout: config.Duration(time.Minute), IdleTimeout: config.Duration(time.Second)},
		config.Provider{Name: "fast-anthropic", Type: "anthropic", BaseURL: fast.URL, APIKey: "x", Models: claude,
			Timeout: config.Duration(time.Minute), IdleTimeout: config.Duration(time.Second)})
	if mutate != nil {
		mutate(cfg)
	}
	cfg.ApplyDefaults()
	if ps := cfg.Validate(); config.HasErrors(ps) {
		t.Fatalf("test config: %v", ps)
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return setBuffer(c, syscall.SO_SNDBUF, 16<<10)
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := serveAppOn(t, cfg, app.Options{Logger: testLogger(t), Version: "test"}, ln)
	g.upstream = up
	return g, fast
}

func setBuffer(c syscall.RawConn, opt, size int) error {
	var serr error
	err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, size) })
	if err != nil {
		return err
	}
	return serr
}

// slowClient is an HTTP client whose sockets have a small receive buffer
// (SO_RCVBUF), so that not reading pushes back on the gateway quickly.
func slowClient() *http.Client {
	d := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return setBuffer(c, syscall.SO_RCVBUF, 16<<10)
	}}
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DialContext: d.DialContext, DisableCompression: true}}
}

// streamEndpoint is one streaming endpoint and how to ask it for a stream.
type streamEndpoint struct {
	name   string
	path   string
	prefix string // of the public model id: fast- goes through the OpenAI-compatible provider, claude- the Anthropic one
	body   string // %s: model, %s: tag
	end    string // what a complete stream ends with
	failed string // what a stream the upstream broke off ends with ("": the error's code)
}

var streamEndpoints = []streamEndpoint{
	{"chat", "/v1/chat/completions", "fast-", `{"model":%q,"stream":true,"messages":[{"role":"user","content":"Hello %s"}]}`, "data: [DONE]", ""},
	{"completions", "/v1/completions", "fast-", `{"model":%q,"stream":true,"prompt":"Hello %s"}`, "data: [DONE]", ""},
	{"responses-native", "/v1/responses", "fast-", `{"model":%q,"stream":true,"input":"Hello %s"}`, "event: response.completed", ""},
	{"responses-translated", "/v1/responses", "claude-", `{"model":%q,"stream":true,"input":"Hello %s"}`, "event: response.completed", "event: response.failed"},
}

var tags atomic.Int64

// slowStream is one streaming request of a test.
type slowStream struct {
	t     *testing.T
	tag   string
	model string
	payer payer
	resp  *http.Response
	got   bytes.Buffer
}

const slowCredit = 10 * money.Unit

// openStream sends the request for scenario on e with a fresh account.
func openStream(t *testing.T, g *gateway, hc *http.Client, e streamEndpoint, scenario string) *slowStream {
	t.Helper()
	s := &slowStream{t: t, tag: fmt.Sprintf("tag-%d", tags.Add(1)), model: e.prefix + scenario, payer: g.newPayer("default", slowCredit, 0, time.Time{})}
	req, _ := http.NewRequest(http.MethodPost, g.URL+e.path, strings.NewReader(fmt.Sprintf(e.body, s.model, s.tag)))
	req.Header.Set("Authorization", "Bearer "+s.payer.secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %d %s", e.name, s.model, resp.StatusCode, b)
	}
	s.resp = resp
	return s
}

// read reads n bytes (it may be called from any goroutine).
func (s *slowStream) read(n int) {
	if _, err := io.CopyN(&s.got, s.resp.Body, int64(n)); err != nil {
		s.t.Errorf("%s: reading the first %d bytes: %v", s.model, n, err)
	}
}

// readUntil reads until mark has arrived (from any goroutine).
func (s *slowStream) readUntil(mark string) {
	buf := make([]byte, 512)
	for !bytes.Contains(s.got.Bytes(), []byte(mark)) {
		n, err := s.resp.Body.Read(buf)
		s.got.Write(buf[:n])
		if err != nil {
			s.t.Errorf("%s: %q never came: %v", s.model, mark, err)
			return
		}
	}
}

// rest reads to the end of the body (or of the connection).
func (s *slowStream) rest() error {
	_, err := io.Copy(&s.got, s.resp.Body)
	return err
}

// record finds the request's usage record (after g.usage) and checks the
// account was charged exactly its cost.
func (s *slowStream) record(g *gateway, recs []store.UsageRecord) store.UsageRecord {
	s.t.Helper()
	var rec store.UsageRecord
	n := 0
	for _, r := range recs {
		if r.AccountID == s.payer.accountID {
			rec = r
			n++
		}
	}
	if n != 1 {
		s.t.Fatalf("%d usage records for the request, want 1", n)
	}
	if b := audit(s.t, g.app.Store(), s.payer.accountID); b != slowCredit-rec.Cost {
		s.t.Errorf("balance %v after a charge of %v from %v", b, rec.Cost, money.Micros(slowCredit))
	}
	return rec
}

// A client that stops reading for longer than idle_timeout, then reads on,
// gets its whole stream and pays for it: the time the gateway spent blocked
// writing to it is not the upstream's silence (it used to end as a 504
// upstream_timeout, released, after megabytes were delivered).
func TestSlowClientPauseLongerThanIdleTimeout(t *testing.T) {
	g, _ := startFastGateway(t, nil) // idle_timeout 1s, write_timeout 60s
	hc := slowClient()
	streams := make([]*slowStream, len(streamEndpoints))
	var wg sync.WaitGroup
	for i, e := range streamEndpoints {
		s := openStream(t, g, hc, e, "big")
		streams[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.read(1 << 10)
			time.Sleep(4 * time.Second) // four idle timeouts, all of them blocked writing to us
			if err := s.rest(); err != nil {
				t.Errorf("%s: reading after the pause: %v", e.name, err)
			}
		}()
	}
	wg.Wait()
	recs := g.usage()
	for i, e := range streamEndpoints {
		s := streams[i]
		if bytes.Contains(s.got.Bytes(), []byte("upstream_timeout")) || !bytes.Contains(s.got.Bytes(), []byte(e.end)) {
			t.Errorf("%s: the stream did not complete after the pause (%d bytes): …%s", e.name, s.got.Len(), tailOf(s.got.Bytes()))
		}
		if s.got.Len() < bigEvents*eventSize {
			t.Errorf("%s: got %d bytes, want the whole stream", e.name, s.got.Len())
		}
		rec := s.record(g, recs)
		if rec.Status != 200 || rec.ErrorCode != "" || rec.Cost <= 0 || rec.CompletionTokens != 1000 {
			t.Errorf("%s: record %+v, want a complete stream charged from the vendor's usage", e.name, rec)
		}
	}
}

// A client that takes nothing for longer than write_timeout is cut off as
// a client-side ending (499 client_too_slow, never upstream_timeout), the
// upstream request is cancelled, and the client pays for what it was sent.
func TestSlowClientStopsReading(t *testing.T) {
	g, fast := startFastGateway(t, func(c *config.Config) { c.WriteTimeout = config.Duration(time.Second) })
	hc := slowClient()
	streams := make([]*slowStream, len(streamEndpoints))
	var wg sync.WaitGroup
	for i, e := range streamEndpoints {
		s := openStream(t, g, hc, e, "endless")
		streams[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.read(1 << 10)
			fast.waitCancelled(t, s.tag) // we read nothing until the gateway gave up
			_ = s.rest()                 // what was already on its way, then the cut
		}()
	}
	wg.Wait()
	recs := g.usage()
	for i, e := range streamEndpoints {
		s := streams[i]
		if bytes.Contains(s.got.Bytes(), []byte("upstream_timeout")) || bytes.Contains(s.got.Bytes(), []byte(e.end)) {
			t.Errorf("%s: a client too slow was told: …%s", e.name, tailOf(s.got.Bytes()))
		}
		rec := s.record(g, recs)
		if rec.Status != 499 || rec.ErrorCode != "client_too_slow" || rec.Cost <= 0 || !rec.Estimated || rec.CompletionTokens <= 0 {
			t.Errorf("%s: record %+v, want 499 client_too_slow charged for what was sent", e.name, rec)
		}
	}
}

// A client that reads all the time, but slowly (a small receive buffer, a
// little at a time), so that one event takes the gateway longer than
// idle_timeout to write, still gets its whole stream and pays for it.
func TestSlowClientReadsContinuously(t *testing.T) {
	g, _ := startFastGateway(t, func(c *config.Config) { c.WriteTimeout = config.Duration(time.Minute) })
	hc := slowClient()
	// Legacy completions share chat's relay; the data is large enough that
	// counting it under the race detector is slow, so they are left out.
	endpoints := []streamEndpoint{streamEndpoints[0], streamEndpoints[2], streamEndpoints[3]}
	streams := make([]*slowStream, len(endpoints))
	var wg sync.WaitGroup
	for i, e := range endpoints {
		s := openStream(t, g, hc, e, "huge")
		streams[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			// 50 KB/s at most, a little at a time, for the first 150 KB:
			// the first 192 KiB event keeps the gateway writing for seconds.
			buf := make([]byte, 2<<10)
			start := time.Now()
			for s.got.Len() < 150e3 {
				allowed := int(time.Since(start).Seconds()*50e3) - s.got.Len()
				if allowed <= 0 {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				n, err := s.resp.Body.Read(buf[:min(allowed, len(buf))])
				s.got.Write(buf[:n])
				if err != nil {
					t.Errorf("%s: %v", e.name, err)
					return
				}
			}
			if err := s.rest(); err != nil {
				t.Errorf("%s: %v", e.name, err)
			}
		}()
	}
	wg.Wait()
	recs := g.usage()
	for i, e := range endpoints {
		s := streams[i]
		if bytes.Contains(s.got.Bytes(), []byte("upstream_timeout")) || !bytes.Contains(s.got.Bytes(), []byte(e.end)) {
			t.Errorf("%s: the stream did not complete (%d bytes): …%s", e.name, s.got.Len(), tailOf(s.got.Bytes()))
		}
		rec := s.record(g, recs)
		if rec.Status != 200 || rec.ErrorCode != "" || rec.Cost <= 0 {
			t.Errorf("%s: record %+v", e.name, rec)
		}
	}
}

// Every ending of every streaming endpoint, and what it costs: the client
// pays for what it was sent whoever ended the stream, and for the prompt
// alone when the gateway's timeout ended it before any text (the vendor
// had the prompt).
func TestStreamEndingsCharge(t *testing.T) {
	// The whole upstream request may last 3s: trickle ends by that timeout.
	g, fast := startFastGateway(t, func(c *config.Config) {
		for i := range c.Providers {
			if strings.HasPrefix(c.Providers[i].Name, "fast-") {
				c.Providers[i].Timeout = config.Duration(3 * time.Second)
			}
		}
	})
	hc := &http.Client{Timeout: time.Minute}
	type ending struct {
		scenario string
		gone     bool // the client leaves after the first bytes
		status   int
		code     string
		charged  bool // for text that reached the client; else for the prompt alone
	}
	endings := []ending{
		{"stall", false, 504, "upstream_timeout", true},       // upstream idle after text was sent
		{"trickle", false, 504, "upstream_timeout", true},     // total timeout after text was sent
		{"trickle", true, 499, "client_closed_request", true}, // the client left
		{"silent", false, 504, "upstream_timeout", false},     // no text was sent: the prompt
	}
	type run struct {
		e   streamEndpoint
		end ending
		s   *slowStream
	}
	var runs []*run
	var wg sync.WaitGroup
	for _, e := range streamEndpoints {
		for _, end := range endings {
			if end.scenario == "silent" && (e.name == "chat" || e.name == "completions") {
				// Chat's first chunk comes before the status, so a stream
				// that says nothing fails with a plain 504 (tested in
				// stream_test.go); Responses streams start with an event.
				continue
			}
			r := &run{e: e, end: end, s: openStream(t, g, hc, e, end.scenario)}
			runs = append(runs, r)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if end.gone {
					r.s.readUntil("tick") // some text reached us
					r.s.resp.Body.Close()
					fast.waitCancelled(t, r.s.tag)
					return
				}
				_ = r.s.rest()
			}()
		}
	}
	wg.Wait()
	recs := g.usage()
	for _, r := range runs {
		name := r.e.name + "/" + r.end.scenario
		if r.end.gone {
			name += "/client-gone"
		}
		rec := r.s.record(g, recs)
		if rec.Status != r.end.status || rec.ErrorCode != r.end.code {
			t.Errorf("%s: ended %d %s, want %d %s", name, rec.Status, rec.ErrorCode, r.end.status, r.end.code)
		}
		if r.end.charged && (rec.Cost <= 0 || !rec.Estimated || rec.CompletionTokens <= 0) {
			t.Errorf("%s: record %+v, want a charge for what was sent", name, rec)
		}
		if !r.end.charged && (rec.Cost <= 0 || !rec.Estimated || rec.PromptTokens <= 0 || rec.CompletionTokens != 0) {
			t.Errorf("%s: record %+v, want the prompt alone charged", name, rec)
		}
		mark := r.e.failed
		if mark == "" {
			mark = r.end.code
		}
		if !r.end.gone && !bytes.Contains(r.s.got.Bytes(), []byte(mark)) {
			t.Errorf("%s: the stream did not end with %q: …%s", name, mark, tailOf(r.s.got.Bytes()))
		}
	}
}

func tailOf(b []byte) []byte {
	if len(b) > 300 {
		return b[len(b)-300:]
	}
	return b
}
