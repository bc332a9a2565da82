package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// CheckRedisURL reports why u is not a Redis URL the gateway can use:
// redis://[user:password@]host:port[/db] or rediss:// (TLS); "" (no
// Redis) is fine. Errors never repeat the URL, which may hold a password.
func CheckRedisURL(u string) error {
	if u == "" {
		return nil
	}
	p, err := url.Parse(u)
	if err != nil {
		return errors.New("not a URL (want redis://host:port/db, e.g. redis://127.0.0.1:6379/0)")
	}
	if p.Scheme != "redis" && p.Scheme != "rediss" {
		if isScheme(p.Scheme) {
			return fmt.Errorf("scheme %q: want redis:// or rediss:// (e.g. redis://127.0.0.1:6379/0)", p.Scheme)
		}
		return errors.New("want redis://host:port/db (e.g. redis://127.0.0.1:6379/0)")
	}
	if p.Host == "" {
		return errors.New("no host (want redis://host:port/db)")
	}
	if _, port, err := net.SplitHostPort(p.Host); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return errors.New("the port must be a number from 0 to 65535")
		}
	} else if strings.Contains(p.Host, ":") && !strings.HasPrefix(p.Host, "[") {
		return errors.New("the host is not host:port")
	}
	if db := strings.TrimPrefix(p.Path, "/"); db != "" {
		if n, err := strconv.ParseUint(db, 10, 31); err != nil || strings.Contains(db, "/") {
			return errors.New("the path must be the database number (redis://host:port/0)")
		} else if n > 1<<20 {
			return errors.New("the database number is too large")
		}
	}
	return nil
}
