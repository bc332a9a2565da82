// Package anthropic serves the gateway's second front door, Anthropic's
// Messages API (POST /v1/messages and /v1/messages/count_tokens, and the
// Anthropic shape of GET /v1/models), for Claude Code and the Anthropic
// SDKs. It decodes, validates and encodes the Anthropic wire format; the
// request itself runs through the same lifecycle as the OpenAI door
// (internal/lifecycle): the same keys, limits, reservations, failover,
// settlement and usage records.
//
// A model served by an Anthropic provider is passed through: the client's
// body goes upstream with only its model patched and the answer comes back
// byte for byte. Any other model is translated: the request becomes a chat
// completion (tochat.go), and the chat answer or stream becomes a Message
// or Message events (answer.go, events.go).
package anthropic
