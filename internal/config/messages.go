package config

import (
	"net/http"
	"strings"
)

// Messages configures the Anthropic Messages API door (/v1/messages).
type Messages struct {
	// ForwardHeaders are client headers passed to Anthropic providers
	// besides anthropic-version and anthropic-beta (none by default).
	ForwardHeaders []string `yaml:"forward_headers"`
}

// neverForwarded are headers that carry the gateway key or describe the
// connection: listing one is a mistake.
var neverForwarded = []string{"X-Api-Key", "Authorization", "Host", "Content-Length", "Content-Type", "Connection",
	"Transfer-Encoding", "Cookie"}

// messagesSettings checks messages.forward_headers.
func (v *validator) messagesSettings() {
	c := v.c
	line := c.line("messages.forward_headers", c.line("messages", 0))
	for _, h := range c.Messages.ForwardHeaders {
		name := http.CanonicalHeaderKey(strings.TrimSpace(h))
		if name == "" || strings.ContainsAny(name, " :\t\r\n") {
			v.errorf(line, "messages.forward_headers: %q is not a header name", h)
			continue
		}
		for _, n := range neverForwarded {
			if name == n {
				v.errorf(line, "messages.forward_headers: %s is never forwarded (it carries the gateway key or belongs to the connection)", n)
			}
		}
	}
}
