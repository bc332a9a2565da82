package console

import (
	"strings"
	"testing"
)

// The language of a page: ?lang= wins and is remembered; then the cookie;
// then Accept-Language; an unknown ?lang= changes nothing and sets nothing.
func TestLanguagePicked(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	lang := func(path, accept string) (string, string) {
		t.Helper()
		r := b.do("GET", path, "", map[string]string{"Accept-Language": accept})
		if r.status != 200 {
			t.Fatalf("GET %s: %d", path, r.status)
		}
		set := ""
		for _, c := range r.header.Values("Set-Cookie") {
			if strings.HasPrefix(c, LangCookie+"=") {
				set = c
			}
		}
		return r.header.Get("Content-Language"), set
	}
	steps := []struct {
		path, accept string
		want         string
		sets         bool
	}{
		{"/console/", "en-US,en;q=0.9", "en", false},
		{"/console/", "zh-CN,zh;q=0.9", "zh-CN", false},
		{"/console/?lang=xx", "zh-CN", "zh-CN", false},     // unknown: the page keeps its language
		{"/console/?lang=%3Cscript%3E", "en", "en", false}, // markup: the same
		{"/console/?lang=zh-CN", "en", "zh-CN", true},      // picked and remembered
		{"/console/", "en", "zh-CN", false},                // the cookie wins over Accept-Language
		{"/console/?lang=xx", "en", "zh-CN", false},        // an unknown value keeps the cookie's
		{"/console/?lang=en", "zh-CN", "en", true},         // switched back
	}
	for _, s := range steps {
		got, set := lang(s.path, s.accept)
		if got != s.want || (set != "") != s.sets {
			t.Errorf("GET %s (Accept-Language %s): Content-Language %q, cookie %q; want %q, set %v", s.path, s.accept, got, set, s.want, s.sets)
		}
		if set != "" && (!strings.Contains(set, "HttpOnly") || !strings.Contains(set, "Path=/console/")) {
			t.Errorf("language cookie %q", set)
		}
	}
}
