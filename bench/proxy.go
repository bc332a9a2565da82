package main

// The bare proxy: the standard library's reverse proxy with a pool big
// enough for the load and no buffering. It does no authentication, body
// validation, routing or usage accounting, so its throughput is what a Go
// proxy can reach on this machine; modelgate is compared against it.

import (
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"time"
)

func newBareProxy(upstreamURL string) (http.Handler, error) {
	target, err := url.Parse(upstreamURL)
	if err != nil {
		return nil, err
	}
	p := httputil.NewSingleHostReverseProxy(target)
	p.Transport = &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
	}
	p.FlushInterval = -1 // flush every write, as a streaming gateway must
	p.ErrorLog = log.New(os.Stderr, "proxy: ", log.LstdFlags)
	// Without full duplex, the HTTP/1 server closes the inbound body when
	// the response headers go out, while the transport may still make its
	// final read of that body to check its length; the read fails, the
	// transport closes the upstream connection and the stream is cut
	// ("read error during body copy: use of closed network connection",
	// golang/go#40747). Seen here on a few streams in every run.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		p.ServeHTTP(w, r)
	}), nil
}
