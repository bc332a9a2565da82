package server

import (
	"net/http"
	"strings"
)

// PublicBase is scheme://host as the client reached the gateway: the Host
// header, and X-Forwarded-Proto from a TLS-terminating proxy. A client
// that forges them only breaks its own links; operators behind other
// proxies configure a public URL instead (images.public_url,
// console.public_url).
func PublicBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	switch p := strings.ToLower(strings.TrimSpace(proto)); p {
	case "http", "https":
		scheme = p
	}
	return scheme + "://" + r.Host
}
