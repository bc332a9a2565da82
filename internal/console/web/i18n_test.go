package web

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestCataloguesComplete fails when a key is in one language's catalogue
// and not the other's, when a template or the console's Go code names a
// key neither has, or when a text is empty.
func TestCataloguesComplete(t *testing.T) {
	c, err := LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Missing(); len(m) > 0 {
		t.Fatalf("keys missing: %v", m)
	}
	for _, l := range Langs {
		for k, v := range c.msgs[l] {
			if strings.TrimSpace(v) == "" {
				t.Errorf("%s: %q is empty", l, k)
			}
			if l != En && strings.Count(v, "%") != strings.Count(c.msgs[En][k], "%") {
				t.Errorf("%s: %q has other verbs than English: %q", l, k, v)
			}
		}
	}
	used := map[string]string{} // key → where
	tmplKey := regexp.MustCompile(`\bt "([^"]+)"`)
	files, _ := filepath.Glob("templates/*.html")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tmplKey.FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = f
		}
	}
	// The console's Go code names keys as string literals with a known prefix.
	goKey := regexp.MustCompile(`"((?:title|page|done|flash|err|form)\.[a-z0-9_.-]+)"`)
	goFiles, _ := filepath.Glob("../*.go")
	for _, f := range goFiles {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goKey.FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = f
		}
	}
	if len(used) < 50 {
		t.Fatalf("found only %d keys in use: the scan is broken", len(used))
	}
	for k, where := range used {
		if !c.Has(k) {
			t.Errorf("%s names %q, which the catalogues lack", where, k)
		}
	}
}

// TestRenderEveryPageInChinese renders every sample page in Chinese: no
// key is missing (a missing key fails the render) and the page says so.
func TestRenderEveryPageInChinese(t *testing.T) {
	p := mustPages(t)
	for _, sp := range samplePages() {
		t.Run(sp.Slug, func(t *testing.T) {
			data := withLang(sp.Data, Zh)
			w := httptest.NewRecorder()
			p.Render(w, 200, sp.Name, data)
			body := w.Body.String()
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, body)
			}
			if !strings.Contains(body, `<html lang="zh-CN">`) {
				t.Errorf("not in Chinese: %.300s", body)
			}
			if w.Header().Get("Content-Language") != "zh-CN" {
				t.Errorf("Content-Language %q", w.Header().Get("Content-Language"))
			}
		})
	}
}

func TestParseLang(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Lang
		ok   bool
	}{
		{"en", En, true}, {"EN-us", En, true}, {"zh", Zh, true}, {"zh-CN", Zh, true}, {"zh-Hans-CN", Zh, true},
		{"xx", "", false}, {"", "", false}, {"<script>", "", false},
	} {
		got, ok := ParseLang(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseLang(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		header string
		want   Lang
	}{
		{"", En}, {"fr-FR,fr;q=0.9", En}, {"zh-CN,zh;q=0.9,en;q=0.8", Zh}, {"en-US,en;q=0.9,zh;q=0.8", En},
		{"fr;q=1, zh-TW;q=0.5", Zh}, {"zh;q=0.2, en;q=0.7", En}, {"zh;q=bad", En},
	} {
		if got := FromAcceptLanguage(tc.header); got != tc.want {
			t.Errorf("FromAcceptLanguage(%q) = %q, want %q", tc.header, got, tc.want)
		}
	}
}

// withLang is a copy of a view model (a struct embedding Layout) in l.
func withLang(data any, l Lang) any {
	v := reflect.New(reflect.TypeOf(data)).Elem()
	v.Set(reflect.ValueOf(data))
	v.FieldByName("Lang").Set(reflect.ValueOf(l))
	return v.Interface()
}
