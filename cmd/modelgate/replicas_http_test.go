//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// chatProviders is the YAML of one provider at a fake OpenAI upstream
// (providertest.OpenAI): gpt-4o-mini answers at once, paced-model streams
// its answer over about half a second. paced-model costs $1,000 per
// million tokens in and out: the fake's 19 + 10 tokens cost 0.029.
func chatProviders(upstream string) string {
	return fmt.Sprintf(`providers:
  - name: fake
    type: openai
    base_url: %s/v1
    api_key: sk-fake
    models:
      - {id: gpt-4o-mini, upstream: gpt-4o-mini-2024-07-18}
      - {id: paced-model, upstream: paced}
models:
  - {id: paced-model, input: 1000, output: 1000}
`, upstream)
}

// Request bodies the replica tests send.
const (
	quickChat = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`
	pacedChat = `{"model":"paced-model","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"Hi"}]}`
)

// newClient is an HTTP client for many requests at once to a few replicas.
func newClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
}

// answer is what one request to a replica got.
type answer struct {
	replica  int
	status   int
	header   http.Header
	body     []byte
	complete bool  // a 200 read to its end: a JSON object, or a stream up to [DONE]
	err      error // the request or the body's read failed
	sent     time.Time
}

// post sends body to base's /v1/chat/completions with secret and reads
// the whole answer.
func post(c *http.Client, base, secret, body string) answer {
	a := answer{sent: time.Now()}
	req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		a.err = err
		return a
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		a.err = err
		return a
	}
	defer resp.Body.Close()
	a.status, a.header = resp.StatusCode, resp.Header
	a.body, a.err = io.ReadAll(resp.Body)
	if a.err == nil && a.status == http.StatusOK {
		if strings.Contains(resp.Header.Get("Content-Type"), "text/event-stream") {
			a.complete = strings.HasSuffix(string(a.body), "data: [DONE]\n\n")
		} else {
			a.complete = json.Valid(a.body)
		}
	}
	return a
}

// fire sends n requests at once, request i to replica i%len(bases), and
// returns their answers in order.
func fire(c *http.Client, bases []string, secret, body string, n int) []answer {
	out := make([]answer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			out[i] = post(c, bases[i%len(bases)], secret, body)
			out[i].replica = i % len(bases)
		})
	}
	close(start)
	wg.Wait()
	return out
}

// bases are the running replicas' base URLs.
func (c *cluster) bases() []string {
	var out []string
	for _, n := range c.nodes {
		if n.base != "" {
			out = append(out, n.base)
		}
	}
	return out
}

// checkOpenAIError fails the test unless a is an OpenAI error body with
// status, type and code: {"error":{"message","type","param","code"}}.
func checkOpenAIError(t *testing.T, a answer, status int, typ, code string) {
	t.Helper()
	var body struct {
		Error map[string]any `json:"error"`
	}
	if a.status != status || json.Unmarshal(a.body, &body) != nil || body.Error == nil {
		t.Errorf("replica %d: %d %s, want a %d OpenAI error", a.replica, a.status, a.body, status)
		return
	}
	e := body.Error
	msg, _ := e["message"].(string)
	_, hasParam := e["param"]
	if msg == "" || e["type"] != typ || e["code"] != code || !hasParam || len(e) != 4 {
		t.Errorf("replica %d: error %s, want message, type %q, param and code %q", a.replica, a.body, typ, code)
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("replica %d: error with Content-Type %q", a.replica, ct)
	}
}

// tally counts answers by status; -1 counts requests that got none.
func tally(as []answer) map[int]int {
	m := map[int]int{}
	for _, a := range as {
		if a.err != nil && a.status == 0 {
			m[-1]++
			continue
		}
		m[a.status]++
	}
	return m
}
