package browsertest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
}

func TestNewAndScreenshot(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>t</title><h1 id="h">Hello</h1>`))
	}))
	defer srv.Close()
	ctx := New(t, 390, 300)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("h")))
	if err != nil {
		t.Fatal(err)
	}
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if text != "Hello" || width != 390 {
		t.Fatalf("text %q, width %d", text, width)
	}
	Screenshot(t, ctx, "browsertest-selftest")
	root, _ := ModuleRoot()
	file := filepath.Join(root, "artifacts", "screenshots", "browsertest-selftest.png")
	b, err := os.ReadFile(file)
	if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Fatalf("screenshot %s: %v", file, err)
	}
	_ = os.Remove(file)
}
