package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// DatabaseKind splits the database DSN into the backend kind and what that
// backend opens, so the store layer can pick a driver without parsing DSNs
// itself: "sqlite:./x.db" → ("sqlite", "./x.db"), "sqlite:///abs/x.db" →
// ("sqlite", "/abs/x.db"), "postgres://..." or "postgresql://..." →
// ("postgres", the whole DSN). Errors never repeat the DSN, which may hold a
// password.
func (c *Config) DatabaseKind() (kind, target string, err error) {
	dsn := c.Database
	switch {
	case dsn == "":
		return "", "", errors.New("no database DSN given (e.g. sqlite:./modelgate-data/modelgate.db)")
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "postgres", dsn, nil
	case strings.HasPrefix(dsn, "sqlite://"):
		target = strings.TrimPrefix(dsn, "sqlite://")
		if !strings.HasPrefix(target, "/") {
			return "", "", errors.New("sqlite:// must be followed by an absolute path (sqlite:///var/lib/modelgate.db); use sqlite:PATH for a relative one")
		}
	case strings.HasPrefix(dsn, "sqlite:"):
		target = strings.TrimPrefix(dsn, "sqlite:")
		if target == "" {
			return "", "", errors.New("sqlite: needs a file path (e.g. sqlite:./modelgate-data/modelgate.db)")
		}
	default:
		if scheme, _, ok := strings.Cut(dsn, ":"); ok && isScheme(scheme) {
			return "", "", fmt.Errorf("unsupported database type %q; use sqlite:PATH or postgres://...", scheme)
		}
		return "", "", errors.New("not a supported DSN; use sqlite:PATH (e.g. sqlite:./modelgate-data/modelgate.db) or postgres://user@host:5432/db")
	}
	return "sqlite", target, nil
}

// isScheme reports whether s looks like a URL scheme, i.e. is safe and useful to show.
func isScheme(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i, r := range s {
		alpha := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !alpha && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return true
}

// checkListen reports why addr is not a host:port the server can listen on.
func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port (e.g. 127.0.0.1:8080 or :8080)", addr)
	}
	if strings.ContainsAny(host, " \t") {
		return fmt.Errorf("%q has spaces in its host", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port must be a number from 0 to 65535", addr)
	}
	return nil
}
