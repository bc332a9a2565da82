package fetch

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// errBlocked is the cause recorded when the guard refuses an address; the
// client only ever sees the URL's host.
var errBlocked = errors.New("fetch: address is blocked by the SSRF guard")

// blockedHosts are names refused before any lookup: cloud metadata services
// reachable by name from inside a VM.
var blockedHosts = map[string]bool{
	"metadata.google.internal": true,
	"metadata":                 true,
}

// blockedPrefixes are the ranges blocked refuses by prefix. Several repeat
// what the netip.Addr predicates already catch, on purpose: the list is the
// readable statement of policy, the predicates a second net.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // CGNAT shared address space
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, incl. broadcast
	netip.MustParsePrefix("::/96"),          // IPv4-compatible (deprecated), :: and ::1
	netip.MustParsePrefix("fec0::/10"),      // site-local (deprecated)
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("ff00::/8"),       // multicast (also IsMulticast)
	netip.MustParsePrefix("169.254.0.0/16"), // link-local incl. 169.254.169.254
	netip.MustParsePrefix("fe80::/10"),      // link-local
	netip.MustParsePrefix("fc00::/7"),       // unique local
	netip.MustParsePrefix("127.0.0.0/8"),    // loopback
	netip.MustParsePrefix("10.0.0.0/8"),     // RFC 1918
	netip.MustParsePrefix("172.16.0.0/12"),  // RFC 1918
	netip.MustParsePrefix("192.168.0.0/16"), // RFC 1918
	netip.MustParsePrefix("224.0.0.0/4"),    // multicast
	netip.MustParsePrefix("255.255.255.255/32"),
}

// Translation prefixes whose low bits embed an IPv4 address that is checked
// in its own right.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// blocked reports whether ip must not be connected to: loopback, private,
// link-local, unspecified, multicast, CGNAT, reserved ranges, and
// IPv4-mapped or -translated IPv6 forms of any of them. Invalid addresses are
// blocked (fail closed).
func blocked(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	ip = ip.WithZone("").Unmap()
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsMulticast() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64Prefix.Contains(ip):
			return blocked(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixToFour.Contains(ip):
			return blocked(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	return false
}

// blockedHost reports whether a URL hostname is refused before resolution:
// a metadata service name or an IP literal that blocked refuses. Names that
// resolve to blocked addresses are caught at dial time instead.
func blockedHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if blockedHosts[h] {
		return true
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		return blocked(ip)
	}
	return false
}

// checkURL validates a URL the fetcher is about to request (the first one
// or a redirect target): http or https, a host, and no blocked host name or
// literal. The returned error is the client-facing message's cause.
func (f *Fetcher) checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return errScheme
	}
	if u.Hostname() == "" {
		return errNoHost
	}
	if !f.allowPrivate && blockedHost(u.Hostname()) {
		return errBlocked
	}
	return nil
}

// control is the net.Dialer.Control hook: it runs after name resolution
// with the exact address about to be connected to, so DNS rebinding and
// every redirect hop pass through it.
func (f *Fetcher) control(_, address string, _ syscall.RawConn) error {
	if f.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil || f.dialBlocked(ap) {
		return errBlocked
	}
	return nil
}
