package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Origin is the gateway's external scheme://host[:port], from which it
// makes every absolute URL it hands out (OAuth redirect URIs, payment
// return URLs, image and video links). It never reads the request's Host
// header: a client that forges Host would otherwise put its own origin in
// links the gateway signs or sends to an identity provider. The zero
// Origin is safe: links point at the address of the listener the request
// came in on.
type Origin struct {
	// PublicURL is the configured external base URL
	// ("https://gw.example.com"); when set, it is the origin, whatever
	// the request says.
	PublicURL string
	// Listen is the configured listen address ("127.0.0.1:8080",
	// "localhost:8080"). Without a PublicURL, its host names the origin
	// (the connection's local address stands in for an unspecified one,
	// ":8080" or "0.0.0.0:8080") and the connection's local port is its
	// port (so ":0" works).
	Listen string
	// TrustedProxies are the peers whose X-Forwarded-Proto and
	// X-Forwarded-Host headers are believed when there is no PublicURL;
	// from any other peer both are ignored.
	TrustedProxies []netip.Prefix
}

// ParseProxies parses a trusted_proxies list: IP addresses ("10.0.0.1",
// "::1") and CIDR prefixes ("10.0.0.0/8").
func ParseProxies(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		p, err := ParseProxy(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// ParseProxy parses one IP address or CIDR prefix.
func ParseProxy(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR prefix (like 10.0.0.0/8)", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR prefix (like 10.0.0.0/8)", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Base is the origin for r, without a trailing slash: the PublicURL when
// there is one; else, for a request from a trusted proxy, the scheme and
// host it forwarded (X-Forwarded-Proto: http or https; X-Forwarded-Host:
// a plain host[:port]; the first value of each list), each falling back
// to the listener's; else http:// and the listener's address.
func (o Origin) Base(r *http.Request) string {
	if o.PublicURL != "" {
		return strings.TrimRight(o.PublicURL, "/")
	}
	scheme, host := "http", o.listenHost(r)
	if r.TLS != nil {
		scheme = "https"
	}
	if o.trusted(r.RemoteAddr) {
		proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
		switch p := strings.ToLower(strings.TrimSpace(proto)); p {
		case "http", "https":
			scheme = p
		}
		fwd, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Host"), ",")
		if h := strings.TrimSpace(fwd); plainHost(h) {
			host = h
		}
	}
	return scheme + "://" + host
}

// listenHost is host:port of the listener r came in on.
func (o Origin) listenHost(r *http.Request) string {
	host, port, err := net.SplitHostPort(o.Listen)
	if err != nil {
		host, port = "", ""
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host = ""
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(la.String()); err == nil {
			port = fmt.Sprint(ap.Port())
			if host == "" {
				host = ap.Addr().Unmap().WithZone("").String()
			}
		}
	}
	if host == "" {
		host = "localhost"
	}
	if port == "" || port == "0" {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, port)
}

// trusted reports whether the peer at remoteAddr (ip:port) is one of the
// trusted proxies.
func (o Origin) trusted(remoteAddr string) bool {
	if len(o.TrustedProxies) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return false
	}
	ip := ap.Addr().Unmap()
	for _, p := range o.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// plainHost reports whether h is a bare host[:port] (no scheme, user,
// path, query or space), so a forwarded value cannot smuggle more into a
// URL than a host.
func plainHost(h string) bool {
	if h == "" || strings.ContainsAny(h, "/\\@?#%\x00\t\r\n ") {
		return false
	}
	u, err := url.Parse("http://" + h)
	return err == nil && u.Host == h && u.Path == "" && u.User == nil
}

// Loopback reports whether the listen address addr only accepts
// connections from this machine: a loopback IP or "localhost". An empty
// or unspecified host (":8080", "0.0.0.0:8080") listens on every
// interface; any other name may resolve to anything.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
