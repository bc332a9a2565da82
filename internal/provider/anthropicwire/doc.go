// Package anthropicwire holds the Anthropic Messages API wire types shared by
// the Anthropic adapter and the Anthropic front door: the request
// (MessagesRequest and its messages, content blocks and tools), the response
// and its stream events, and the error body.
//
// The request types serve validation and translation: a Messages request
// that goes to an Anthropic upstream is forwarded as the client's bytes,
// and the adapter marshals one only for a chat request it translated (with
// the few members a chat request maps to), so nothing here has to model
// every member: the types that clients extend most (MessagesRequest, Block,
// Tool) keep the members they do not name in Extra, and write them back
// when marshalled. Field names follow anthropic-sdk-go
// (message.go and betamessage.go, v1.84.0).
package anthropicwire
