package web

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/modelgate/modelgate/internal/browsertest"
)

// TestREADMEScreenshots makes the README's pictures of the console from the
// sample pages, with the sample's markup-injection strings replaced by
// ordinary words: MODELGATE_README_SHOTS=1 go test -run TestREADMEScreenshots
// ./internal/console/web/ writes docs/img/console-*.png.
func TestREADMEScreenshots(t *testing.T) {
	if os.Getenv("MODELGATE_README_SHOTS") != "1" {
		t.Skip("set MODELGATE_README_SHOTS=1 to remake docs/img/console-*.png")
	}
	p := mustPages(t)
	clean := strings.NewReplacer(
		"demo-&lt;script&gt;alert(1)&lt;/script&gt;", "demo-chat",
		"&lt;script&gt;alert(1)&lt;/script&gt;", "(ticket 4182)",
	)
	pages := map[string]samplePage{}
	for _, sp := range samplePages() {
		pages[sp.Slug] = sp
	}
	mux := http.NewServeMux()
	mux.Handle("/console/static/", Static())
	mux.HandleFunc("/shot/{slug}", func(w http.ResponseWriter, r *http.Request) {
		sp := pages[r.PathValue("slug")]
		rec := httptest.NewRecorder()
		p.Render(rec, http.StatusOK, sp.Name, sp.Data)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(clean.Replace(rec.Body.String())))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ctx := browsertest.New(t, 1280, 900)
	root, err := browsertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for slug, file := range map[string]string{"models": "console-models.png", "overview": "console-overview.png"} {
		if _, ok := pages[slug]; !ok {
			t.Fatalf("no sample page %q", slug)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/shot/"+slug)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Fatalf("%s: not a PNG", slug)
		}
		if err := os.WriteFile(filepath.Join(root, "docs", "img", file), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
