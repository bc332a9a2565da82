package config

import (
	"net"
	"net/netip"
)

// Metrics configures the Prometheus /metrics endpoint. It is served on a
// listener of its own, never on the public one, so that scraping needs
// no key and the public port shows nothing of the gateway's traffic.
type Metrics struct {
	// Listen is the metrics listener's host:port (like 127.0.0.1:9464);
	// "" (or no metrics section): no metrics listener at all.
	Listen string `yaml:"listen"`
}

// metrics checks the metrics section: a bad address is an error, the
// public listen address too (the two listeners cannot share a port), and a
// host that is not loopback a warning: the endpoint has no authentication,
// which is fine behind a firewall or on a private network the scraper is on,
// but worth saying.
func (v *validator) metrics() {
	c := v.c
	if c.Metrics == nil || c.Metrics.Listen == "" {
		return
	}
	line := c.line("metrics.listen", c.line("metrics", 0))
	addr := c.Metrics.Listen
	if err := checkListen(addr); err != nil {
		v.errorf(line, "metrics.listen: %v", err)
		return
	}
	if addr == c.Listen {
		v.errorf(line, "metrics.listen %q is the public listen address; metrics need a listener of their own", addr)
		return
	}
	if host, _, _ := net.SplitHostPort(addr); !loopback(host) {
		v.warnf(line, "metrics.listen %q is not a loopback address: /metrics has no authentication, so anyone who can reach it reads the gateway's traffic figures (firewall it, or use 127.0.0.1)", addr)
	}
}

// loopback reports whether host (from a listen address) binds loopback
// only: localhost or a loopback IP. "" binds every interface.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
