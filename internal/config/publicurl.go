package config

import (
	"fmt"
	"net/url"

	"github.com/modelgate/modelgate/internal/server"
)

// The gateway's external origin. Every absolute URL it makes (the
// console's OAuth redirect URIs, Stripe's return URLs, image and video
// links) starts with it, and none is ever built from a request's Host
// header, which any client can forge:
//
//   - public_url (top level) is the origin; console.public_url and
//     images.public_url default to it and may still override it (images
//     with a path prefix);
//   - without it, the origin is the listen address, which is only right
//     for a loopback listener, so a console or payments section on any
//     other listener needs public_url (an error otherwise);
//   - trusted_proxies lists the peers (IPs or CIDR prefixes) whose
//     X-Forwarded-Proto and X-Forwarded-Host are believed when no
//     public_url applies; from any other peer they are ignored.

func (c *Config) applyPublicURLDefaults() {
	if !originURL(c.PublicURL) {
		return // unset, or an error Validate reports once, at its own line
	}
	if s := c.Console; s != nil && s.PublicURL == "" {
		s.PublicURL = c.PublicURL
	}
	if c.Images.PublicURL == "" {
		c.Images.PublicURL = c.PublicURL
	}
}

// publicURL checks public_url and trusted_proxies, and that the console
// has an origin it can trust.
func (v *validator) publicURL() {
	c := v.c
	if p := c.PublicURL; p != "" {
		if !originURL(p) {
			v.errorf(c.line("public_url", 0), "public_url must be an http(s) URL like https://gateway.example.com (no path), got %q", p)
		}
	}
	for i, p := range c.TrustedProxies {
		if _, err := server.ParseProxy(p); err != nil {
			v.errorf(c.line(fmt.Sprintf("trusted_proxies.%d", i), c.line("trusted_proxies", 0)), "trusted_proxies: %v", err)
		}
	}
	if err := c.CheckOrigin(); err != nil {
		line := c.line("console", 0)
		if c.Console == nil {
			line = c.line("payments", 0)
		}
		v.errorf(line, "%v", err)
	}
}

// CheckOrigin reports a console or payments section that would make links
// from the listen address of a listener that is not loopback-only:
// behind it, that address is not what browsers and Stripe reach. serve
// checks it again after --listen overrides the file.
func (c *Config) CheckOrigin() error {
	if c.Console == nil && c.Payments == nil {
		return nil
	}
	if c.PublicURL != "" || (c.Console != nil && c.Console.PublicURL != "") || server.Loopback(c.Listen) {
		return nil
	}
	section := "console"
	if c.Console == nil {
		section = "payments"
	}
	return fmt.Errorf("%s: listen %s is not a loopback address, so set public_url to the URL browsers reach the gateway at "+
		"(like https://gateway.example.com): OAuth redirect URIs and payment return URLs are made from it, never from the request's Host header",
		section, c.Listen)
}

// originURL reports whether p is scheme://host[:port] with an optional
// trailing slash.
func originURL(p string) bool {
	u, err := url.Parse(p)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil &&
		u.RawQuery == "" && u.Fragment == "" && (u.Path == "" || u.Path == "/")
}
