package main

// The passes: what each target is sent in each kind of measurement, and
// which of them a run selects.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

const (
	// claudeModel is the model modelgate serves from its anthropic
	// provider (the mock's /v1/messages), priced in its config.
	claudeModel = "claude-bench"
	// anthropicVersion is the anthropic-version header Messages clients send.
	anthropicVersion = "2023-06-01"
	chatPath         = "/v1/chat/completions"
	messagesPath     = "/v1/messages"
)

// request is what one target is sent during a pass.
type request struct {
	path     string // appended to the target's base URL
	messages bool   // Anthropic's Messages API (x-api-key, a Message or its events) instead of chat completions
	stream   bool
	body     []byte
	events   int    // events a stream must carry (see loadSpec.Events); 0 accepts any number
	label    string // how the report names the target when it is sent something else than the pass's request
}

// spec is the load of r against base.
func (r request) spec(base string, keys []string) loadSpec {
	return loadSpec{URL: base + r.path, Keys: keys, Body: r.body, Messages: r.messages, Stream: r.stream, Events: r.events}
}

// pass is one kind of request, sent to both targets.
type pass struct {
	name   string
	stream bool
	req    request  // what modelgate is sent, and the proxy unless proxy is set
	proxy  *request // what the proxy is sent instead: for translation, which it cannot do
	// like is the chat pass this one is compared with (modelgate's CPU per
	// request here ÷ there, round by round); "" for the chat passes.
	like string
}

// requestFor is what target t is sent in p.
func (p *pass) requestFor(t target) request {
	if t.name == "proxy" && p.proxy != nil {
		return *p.proxy
	}
	return p.req
}

// allPasses returns every pass, in the order a run measures them.
//
//   - non-stream, stream: chat completions of gpt-4o-mini, passed through
//     to the mock's OpenAI endpoint.
//   - messages, messages-stream: the same prompt as a Messages request of
//     claude-bench, passed through to the mock's Anthropic endpoint (the
//     proxy forwards it as it is).
//   - translated, translated-stream: the same Messages request of
//     gpt-4o-mini, which modelgate translates to chat completions
//     upstream and back. The proxy cannot translate: it is sent the chat
//     pass's request, so its figures are its chat figures, measured in
//     the same rounds.
func allPasses() []pass {
	chat := func(stream bool) request {
		return request{path: chatPath, stream: stream, body: requestBody(stream), events: streamEvents}
	}
	msgs := func(m string, stream bool, events int) request {
		return request{path: messagesPath, messages: true, stream: stream, body: messagesBody(m, stream), events: events}
	}
	proxyChat := func(stream bool) *request {
		r := chat(stream)
		r.label = "proxy (chat)"
		return &r
	}
	return []pass{
		{name: "non-stream", req: chat(false)},
		{name: "stream", stream: true, req: chat(true)},
		{name: "messages", req: msgs(claudeModel, false, 0), like: "non-stream"},
		{name: "messages-stream", stream: true, req: msgs(claudeModel, true, messagesStreamEvents), like: "stream"},
		// The translated stream's events are modelgate's own; any number will do.
		{name: "translated", req: msgs(model, false, 0), proxy: proxyChat(false), like: "non-stream"},
		{name: "translated-stream", stream: true, req: msgs(model, true, 0), proxy: proxyChat(true), like: "stream"},
	}
}

// pacedPass is the many-streams pass's request, unstreamed, for the
// preflight: bench-paced, which modelgate routes to the mock's paced
// endpoint and the proxy is sent there directly.
func pacedPass() pass {
	mg := request{path: chatPath, body: chatBody(pacedModel, false)}
	px := mg
	px.path = pacedPath
	return pass{name: manyStreams, req: mg, proxy: &px}
}

// defaultPasses are the passes a run without -only measures.
var defaultPasses = []string{"non-stream", "stream"}

// manyStreams is the name of the many-streams pass (manystreams.go),
// which -only may name beside the closed-loop passes; "all" leaves it out,
// since it holds thousands of connections for a while.
const manyStreams = "many-streams"

// selectPasses returns the closed-loop passes -only names (a
// comma-separated list of pass names, "all" for every closed-loop pass, or
// "" for the default two) and whether it names the many-streams pass.
func selectPasses(only string) ([]pass, bool, error) {
	all := allPasses()
	names := defaultPasses
	switch only = strings.TrimSpace(only); only {
	case "":
	case "all":
		return all, false, nil
	default:
		names = strings.Split(only, ",")
	}
	known := []string{manyStreams}
	for _, p := range all {
		known = append(known, p.name)
	}
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if !slices.Contains(known, n) {
			return nil, false, fmt.Errorf("-only %q: unknown pass %q; want all or a comma-separated list of %s", only, n, strings.Join(known, ", "))
		}
		want[n] = true
	}
	var out []pass
	for _, p := range all {
		if want[p.name] {
			out = append(out, p)
		}
	}
	return out, want[manyStreams], nil
}

// messagesBody is the Messages request of the chat pass's prompt: the
// system prompt, one user message, max_tokens 256.
func messagesBody(model string, stream bool) []byte {
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	b, err := json.Marshal(struct {
		Model       string  `json:"model"`
		MaxTokens   int     `json:"max_tokens"`
		System      string  `json:"system"`
		Messages    []msg   `json:"messages"`
		Temperature float64 `json:"temperature"`
		Stream      bool    `json:"stream,omitempty"`
	}{model, 256, systemPrompt, []msg{{"user", userPrompt}}, 0.7, stream})
	if err != nil {
		panic(err)
	}
	return b
}
