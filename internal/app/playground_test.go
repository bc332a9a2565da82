package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/console"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// playResp is an answer of POST /console/api/playground, read whole.
type playResp struct {
	status  int
	header  http.Header
	trailer http.Header
	body    []byte
}

// play sends a playground turn with the browser's cookies and CSRF token.
func (b *conUser) play(body any) playResp {
	b.t.Helper()
	raw, ok := body.(string)
	if !ok {
		j, err := json.Marshal(body)
		if err != nil {
			b.t.Fatal(err)
		}
		raw = string(j)
	}
	req, err := http.NewRequest(http.MethodPost, b.e.g.URL+"/console/api/playground", strings.NewReader(raw))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(console.CSRFHeader, b.csrf)
	resp, err := b.nf.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return playResp{status: resp.StatusCode, header: resp.Header, trailer: resp.Trailer, body: data}
}

// fundedPlayer is a signed-in user with $11 and a key of group basic.
func fundedPlayer(t *testing.T, e *consoleEnv, login string, id int64) (*conUser, conKey) {
	t.Helper()
	u := e.signIn(ghUser{ID: id, Login: login, Email: login + "@example.com"})
	k := u.createKey("playground key", "basic")
	e.payAt(u.topUp("10", "card").CheckoutURL)
	return u, k
}

func playTurn(keyID string) map[string]any {
	return map[string]any{"key_id": keyID, "model": "demo-chat", "max_tokens": 64,
		"messages": []map[string]string{{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello, playground"}}}
}

// A turn is the gateway's own answer to that key: the same completion a
// client holding the secret gets, the cost header, and a usage record of
// the key with endpoint chat.completions charged to the balance.
func TestPlaygroundTurn(t *testing.T) {
	e := startConsole(t)
	u, key := fundedPlayer(t, e, "player", 9101)
	before := e.balance(u.account)

	r := u.play(playTurn(key.ID))
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("turn: %d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	var got struct {
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct{ Role, Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil || got.Object != "chat.completion" || got.Model != "demo-chat" ||
		len(got.Choices) != 1 || got.Choices[0].Message.Content == "" || got.Usage.PromptTokens == 0 || got.Usage.CompletionTokens == 0 {
		t.Fatalf("completion %s (%v)", r.body, err)
	}
	cost := mustMoney(t, r.header.Get("X-Modelgate-Cost"))
	if cost <= 0 {
		t.Fatalf("X-Modelgate-Cost %q", r.header.Get("X-Modelgate-Cost"))
	}
	reqID := r.header.Get("X-Request-Id")
	var rec conUsage
	eventually(t, "the turn's usage record", func() bool {
		for _, x := range u.usage("") {
			if x.RequestID == reqID {
				rec = x
				return true
			}
		}
		return false
	})
	if rec.KeyID != key.ID || rec.Endpoint != "chat.completions" || rec.Model != "demo-chat" || rec.Status != 200 ||
		mustMoney(t, rec.Cost) != cost || rec.PromptTokens != got.Usage.PromptTokens || rec.CompletionTokens != got.Usage.CompletionTokens {
		t.Fatalf("usage record %+v, want key %s, cost %s, tokens %+v", rec, key.ID, cost, got.Usage)
	}
	eventually(t, "the charge", func() bool { return e.balance(u.account) == before-cost })

	// The same request sent with the key's secret gets the same answer.
	direct, _ := json.Marshal(map[string]any{"model": "demo-chat", "max_tokens": 64,
		"messages": []map[string]string{{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello, playground"}}})
	resp, body := e.g.post("/v1/chat/completions", "application/json", key.Key, bytes.NewReader(direct))
	var viaKey struct {
		Choices []struct {
			Message struct{ Role, Content string } `json:"message"`
		} `json:"choices"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &viaKey) != nil || len(viaKey.Choices) != 1 ||
		viaKey.Choices[0].Message != got.Choices[0].Message || resp.Header.Get("X-Modelgate-Cost") != r.header.Get("X-Modelgate-Cost") {
		t.Fatalf("direct answer %d %s (cost %s), playground %s (cost %s)", resp.StatusCode, body,
			resp.Header.Get("X-Modelgate-Cost"), r.body, r.header.Get("X-Modelgate-Cost"))
	}
}

// A streamed turn is SSE with a usage chunk (stream_options.include_usage
// is asked for), [DONE], and the cost as a trailer.
func TestPlaygroundStream(t *testing.T) {
	e := startConsole(t)
	u, key := fundedPlayer(t, e, "streamer", 9102)
	turn := playTurn(key.ID)
	turn["stream"] = true
	r := u.play(turn)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	var text strings.Builder
	var usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	}
	done := false
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		for _, c := range chunk.Choices {
			text.WriteString(c.Delta.Content)
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
	}
	if !done || text.Len() == 0 || usage == nil || usage.CompletionTokens == 0 {
		t.Fatalf("stream: done %v, text %q, usage %+v:\n%s", done, text.String(), usage, r.body)
	}
	cost := mustMoney(t, r.trailer.Get("X-Modelgate-Cost"))
	if cost <= 0 || r.header.Get("X-Modelgate-Cost") != "" {
		t.Fatalf("cost trailer %q, header %q", r.trailer.Get("X-Modelgate-Cost"), r.header.Get("X-Modelgate-Cost"))
	}
	reqID := r.header.Get("X-Request-Id")
	eventually(t, "the stream's usage record", func() bool {
		for _, x := range u.usage("") {
			if x.RequestID == reqID {
				return x.KeyID == key.ID && x.Endpoint == "chat.completions" && mustMoney(t, x.Cost) == cost
			}
		}
		return false
	})
}

// Refused turns: each gets its clear error and charges nothing.
func TestPlaygroundRefusals(t *testing.T) {
	e := startConsole(t)
	u, key := fundedPlayer(t, e, "careful", 9103)
	other, otherKey := fundedPlayer(t, e, "other", 9104)
	ctx := context.Background()
	st := e.g.app.Store()

	revoked := u.createKey("revoked", "basic")
	if code, body := u.api("DELETE", "/console/api/keys/"+revoked.ID, nil); code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("revoke: %d %s", code, body)
	}
	disabled := u.createKey("disabled", "basic")
	on := true
	if _, err := st.UpdateKey(ctx, u.id, disabled.ID, store.KeyUpdate{Disabled: &on}, time.Now()); err != nil {
		t.Fatal(err)
	}
	expired := u.createKey("expired", "basic")
	past := time.Now().Add(-time.Minute)
	if _, err := st.UpdateKey(ctx, u.id, expired.ID, store.KeyUpdate{ExpiresAt: &past}, time.Now()); err != nil {
		t.Fatal(err)
	}
	before, otherBefore := e.balance(u.account), e.balance(other.account)

	with := func(mut func(m map[string]any)) map[string]any {
		m := playTurn(key.ID)
		mut(m)
		return m
	}
	junk := strings.Repeat("\x00junk{", 10<<10/6)
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		param  string
	}{
		{"revoked key", playTurn(revoked.ID), 401, "invalid_api_key", ""},
		{"disabled key", playTurn(disabled.ID), 401, "invalid_api_key", ""},
		{"expired key", playTurn(expired.ID), 401, "invalid_api_key", ""},
		{"another user's key", playTurn(otherKey.ID), 404, "not_found", "key_id"},
		{"unknown key", playTurn("key_does_not_exist"), 404, "not_found", "key_id"},
		{"model outside the group", with(func(m map[string]any) { m["model"] = "err-400" }), 404, "model_not_found", "model"},
		{"unknown model", with(func(m map[string]any) { m["model"] = "no-such-model" }), 404, "model_not_found", "model"},
		{"empty conversation", with(func(m map[string]any) { m["messages"] = []any{} }), 400, "invalid_request_error", "messages"},
		{"no messages", with(func(m map[string]any) { delete(m, "messages") }), 400, "invalid_request_error", "messages"},
		{"blank message", with(func(m map[string]any) { m["messages"] = []map[string]string{{"role": "user", "content": "  "}} }),
			400, "invalid_request_error", "messages[0].content"},
		{"bad role", with(func(m map[string]any) { m["messages"] = []map[string]string{{"role": "tool", "content": "x"}} }),
			400, "invalid_request_error", "messages[0].role"},
		{"content not a string", with(func(m map[string]any) { m["messages"] = []map[string]any{{"role": "user", "content": []int{1}}} }),
			400, "invalid_request_error", "messages.content"},
		{"no key", with(func(m map[string]any) { delete(m, "key_id") }), 400, "missing_required_parameter", "key_id"},
		{"no model", with(func(m map[string]any) { delete(m, "model") }), 400, "missing_required_parameter", "model"},
		{"max_tokens 0", with(func(m map[string]any) { m["max_tokens"] = 0 }), 400, "invalid_request_error", "max_tokens"},
		{"max_tokens huge", with(func(m map[string]any) { m["max_tokens"] = 1 << 40 }), 400, "invalid_request_error", "max_tokens"},
		{"stream not a bool", with(func(m map[string]any) { m["stream"] = "yes" }), 400, "invalid_request_error", "stream"},
		{"unknown member", with(func(m map[string]any) { m["temperature"] = strings.Repeat("x", 10<<10) }), 400, "unknown_parameter", "temperature"},
		{"10 KB of junk", junk, 400, "invalid_request_error", ""},
		{"two objects", `{"key_id":"` + key.ID + `"} {}`, 400, "invalid_request_error", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := u.play(tc.body)
			var eb struct {
				Error struct{ Code, Param, Message string } `json:"error"`
			}
			if err := json.Unmarshal(r.body, &eb); err != nil || r.status != tc.status || eb.Error.Code != tc.code ||
				eb.Error.Param != tc.param || eb.Error.Message == "" {
				t.Fatalf("%d %s, want %d %s param %q", r.status, r.body, tc.status, tc.code, tc.param)
			}
		})
	}
	// No session, no CSRF token, a wrong one.
	if code, body := u.do("POST", "/console/api/playground", playTurn(key.ID), nil); code != 403 || errCode(body) != console.CodeCSRFFailed {
		t.Errorf("without CSRF: %d %s", code, body)
	}
	if code, body := u.do("POST", "/console/api/playground", playTurn(key.ID), map[string]string{console.CSRFHeader: other.csrf}); code != 403 {
		t.Errorf("another session's CSRF token: %d %s", code, body)
	}
	if code, body := e.newBrowser().do("POST", "/console/api/playground", playTurn(key.ID), map[string]string{console.CSRFHeader: u.csrf}); code != 401 {
		t.Errorf("signed out: %d %s", code, body)
	}
	// Nothing a client sends acts for a key by its id: the /v1 door wants
	// the secret.
	req, _ := http.NewRequest("POST", e.g.URL+"/v1/chat/completions?key_id="+key.ID,
		strings.NewReader(`{"model":"demo-chat","key_id":"`+key.ID+`","messages":[{"role":"user","content":"hi"}]}`))
	for _, h := range []string{"X-Key-Id", "Key-Id", "X-Modelgate-Key-Id", "Key_id"} {
		req.Header.Set(h, key.ID)
	}
	req.Header.Set("Authorization", "Bearer "+key.ID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || errCode(body) != "invalid_api_key" {
		t.Fatalf("/v1 with a key id instead of its secret: %d %s", resp.StatusCode, body)
	}

	// Nothing was charged and no request was recorded, for either user.
	time.Sleep(100 * time.Millisecond) // past the usage flush interval
	if got := e.balance(u.account); got != before {
		t.Errorf("balance %s after refusals, was %s", got, before)
	}
	if got := e.balance(other.account); got != otherBefore {
		t.Errorf("the other user's balance %s, was %s", got, otherBefore)
	}
	for _, b := range []*conUser{u, other} {
		if recs := b.usage(""); len(recs) != 0 {
			t.Errorf("%s has usage records after refusals: %+v", b.account, recs)
		}
	}
	if a := e.account(u.account); a.Spent != 0 || a.Held != money.Micros(0) {
		t.Errorf("spent %s, held %s after refusals", a.Spent, a.Held)
	}
}

// The page lists the active keys by name (never a secret) and the chat
// models of their groups, in both languages.
func TestPlaygroundPage(t *testing.T) {
	e := startConsole(t)
	u := e.signIn(ghUser{ID: 9105, Login: "pager", Email: "p@example.com"})
	if st, page, _ := u.get("/console/playground"); st != 200 || !strings.Contains(page, "No active API key") {
		t.Fatalf("no keys: %d %.400s", st, page)
	}
	k := u.createKey("my <b>laptop</b>", "basic")
	gone := u.createKey("gone key", "default")
	u.api("DELETE", "/console/api/keys/"+gone.ID, nil)
	st, page, _ := u.get("/console/playground")
	if st != 200 {
		t.Fatalf("page: %d", st)
	}
	for _, want := range []string{`value="` + k.ID + `"`, "my &lt;b&gt;laptop&lt;/b&gt;", `data-group="basic"`,
		`<option value="demo-chat">`, `data-base="` + e.g.URL + `/v1"`, `data-csrf="` + u.csrf + `"`, "<noscript>",
		`aria-current="page"><svg`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	for _, bad := range []string{k.Key, gone.ID, "gone key", `<option value="err-400">`, "demo-embed\""} {
		if strings.Contains(page, bad) {
			t.Errorf("page shows %q", bad)
		}
	}
	if _, zh, _ := u.get("/console/playground?lang=zh-CN"); !strings.Contains(zh, "操练场") || !strings.Contains(zh, "发送") {
		t.Errorf("the Chinese page is not Chinese: %.300s", zh)
	}
}
