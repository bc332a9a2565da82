package main

// What modelgate is started with and what every client sends: the config
// (the mock's providers, the models' prices, the default group, the
// backend), and the chat request of a 1.1 KB support conversation.

import (
	"encoding/json"
	"fmt"
)

// modelgateConfig is the config file modelgate is started with, its state
// where be says; usage, when not empty, is its usage section and group its
// default group (YAML flow mappings); extra is appended as it is.
func modelgateConfig(listen, upstream string, be *backend, logRequests bool, usage, group, extra string) string {
	if usage != "" {
		usage = "usage: " + usage + "\n"
	}
	if group == "" {
		group = `{models: ["*"]}`
	}
	if extra != "" {
		usage += extra + "\n"
	}
	return fmt.Sprintf(`listen: %s
%slog: {level: warn, requests: %t}
providers:
  - name: mock
    type: openai
    base_url: http://%s/v1
    api_key: ${MOCK_KEY:-none}
    models: [%s]
  - name: anthropic
    type: anthropic
    base_url: http://%s
    api_key: ${MOCK_KEY:-none}
    models: [%s]
  - name: paced
    type: openai
    base_url: http://%s/paced/v1
    api_key: ${MOCK_KEY:-none}
    models: [%s]
models:
  - {id: %s, owned_by: anthropic, input: 3, output: 15}
  - {id: %s, owned_by: openai, input: 0.15, output: 0.6}
groups:
  default: %s
%s`, listen, be.configLines(), logRequests, upstream, model, upstream, claudeModel, upstream, pacedModel,
		claudeModel, pacedModel, group, usage)
}

const (
	systemPrompt = "You are a support assistant for an online hardware store. Answer in the customer's language, " +
		"be concise and friendly, quote order numbers exactly as given, never invent tracking data or delivery dates, " +
		"and hand the conversation to a human agent when the customer asks for a refund above 200 EUR or is upset."
	userPrompt = "Hello, I ordered a cordless drill (order 4471-2290-18) eleven days ago and the tracking page has said " +
		"\"label created\" since the day after I paid. I need the drill for a renovation that starts next Monday, so I am " +
		"getting a bit nervous. Could you check whether the parcel has actually left your warehouse, and if it has not, " +
		"whether you can send it by express at no extra cost? If that is impossible, I would like to know how a " +
		"cancellation works and how long the refund takes to reach my card. I also bought a set of drill bits in a " +
		"separate order (4471-2291-02) that arrived fine, so please do not cancel that one. Finally, the invoice lists " +
		"my old address in the billing section; can it be corrected, or do I need to send you something? Thanks a lot " +
		"for your help, and sorry for the long message. Best regards, Jana"
)

func promptBytes() int { return len(systemPrompt) + len(userPrompt) }

// requestBody is the chat request every client sends.
func requestBody(stream bool) []byte { return chatBody(model, stream) }

// chatBody is the chat request of the benchmark's prompt for model.
func chatBody(model string, stream bool) []byte {
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	b, err := json.Marshal(struct {
		Model       string  `json:"model"`
		Messages    []msg   `json:"messages"`
		Temperature float64 `json:"temperature"`
		MaxTokens   int     `json:"max_tokens"`
		Stream      bool    `json:"stream,omitempty"`
	}{model, []msg{{"system", systemPrompt}, {"user", userPrompt}}, 0.7, 256, stream})
	if err != nil {
		panic(err)
	}
	return b
}
