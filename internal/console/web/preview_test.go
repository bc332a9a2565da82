package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/modelgate/modelgate/internal/browsertest"
)

const csp = "default-src 'self'; frame-ancestors 'none'"

// previewServer serves every sample page at /preview/{slug} and the
// assets, under the console's real CSP.
func previewServer(t *testing.T) *httptest.Server {
	p := mustPages(t)
	mux := http.NewServeMux()
	mux.Handle("/console/static/", Static())
	for _, sp := range samplePages() {
		mux.HandleFunc("/preview/"+sp.Slug, func(w http.ResponseWriter, r *http.Request) {
			p.Render(w, http.StatusOK, sp.Name, sp.Data)
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// recordViolations runs in every document before its own scripts: the CDP
// script is not subject to the page's CSP.
const recordViolations = `window.__mgViolations = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__mgViolations.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline') + ' ' + e.sourceFile + ':' + e.lineNumber);
});`

// pageCheck runs after each load: what the page must look like in a browser.
const pageCheck = `(function () {
  var out = [];
  (window.__mgViolations || []).forEach(function (v) { out.push('CSP violation: ' + v); });
  if (getComputedStyle(document.body).backgroundColor !== 'rgb(246, 247, 249)' && !document.body.classList.contains('bare')) {
    out.push('stylesheet not applied');
  }
  var over = document.documentElement.scrollWidth - window.innerWidth;
  if (over > 0) {
    var wide = [];
    document.querySelectorAll('body *').forEach(function (el) {
      var r = el.getBoundingClientRect();
      if (r.right > window.innerWidth + 1 && !el.closest('.table-wrap, .nav, .tabs') && wide.length < 5) {
        wide.push(el.tagName.toLowerCase() + '.' + el.className);
      }
    });
    out.push('page overflows horizontally by ' + over + 'px: ' + wide.join(', '));
  }
  // The usage and ledger tables fit their card at every width: wide, every
  // column shows; narrow, each row is a stack of labelled cells.
  document.querySelectorAll('.table-wrap').forEach(function (w) {
    if (w.querySelector('.usage-table, .ledger-table') && w.scrollWidth > w.clientWidth + 1) {
      out.push('table wider than its card by ' + (w.scrollWidth - w.clientWidth) + 'px');
    }
  });
  return out;
})()`

type consoleLog struct {
	mu   sync.Mutex
	msgs []string
}

func (c *consoleLog) add(s string) {
	c.mu.Lock()
	c.msgs = append(c.msgs, s)
	c.mu.Unlock()
}

func (c *consoleLog) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.msgs
	c.msgs = nil
	return m
}

func TestPreviewInBrowser(t *testing.T) {
	srv := previewServer(t)
	for _, size := range []struct {
		name          string
		width, height int
	}{{"narrow", 390, 844}, {"wide", 1280, 900}} {
		t.Run(size.name, func(t *testing.T) {
			ctx := browsertest.New(t, size.width, size.height)
			if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recordViolations}); err != nil {
				t.Fatal(err)
			}
			var logs consoleLog
			msgs := chromedp.Console(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for m, err := range msgs {
					if err != nil {
						return
					}
					if m.IsException() || m.Type == chromedp.ConsoleError || strings.Contains(m.Text, "Content Security Policy") {
						logs.add(m.String() + " (" + m.URL + ")")
					}
				}
			}()
			for _, sp := range samplePages() {
				if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/preview/"+sp.Slug)); err != nil {
					t.Fatalf("%s: %v", sp.Slug, err)
				}
				problems, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](pageCheck))
				if err != nil {
					t.Fatalf("%s: %v", sp.Slug, err)
				}
				for _, p := range problems {
					t.Errorf("%s %s: %s", sp.Slug, size.name, p)
				}
				if sp.Slug == "keys" {
					checkCopy(t, ctx)
				}
				if sp.Slug == "overview" {
					checkSkipLink(t, ctx)
				}
				// Console events arrive asynchronously; give them a moment.
				time.Sleep(50 * time.Millisecond)
				for _, m := range logs.take() {
					t.Errorf("%s %s: console: %s", sp.Slug, size.name, m)
				}
				browsertest.Screenshot(t, ctx, "web-"+sp.Slug+"-"+size.name)
			}
		})
	}
}

// checkCopy clicks the Copy button of the new key. The clipboard may be
// denied to a headless browser: the button must then fall back without
// throwing (exceptions fail the test through the console log).
func checkCopy(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-copy="new-key-secret"]`))); err != nil {
		t.Fatalf("click Copy: %v", err)
	}
	var label string
	for range 40 {
		l, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-copy="new-key-secret"]`)))
		if err != nil {
			t.Fatal(err)
		}
		if label = strings.TrimSpace(l); label != "Copy" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if label != "Copied" && label != "Press Ctrl+C" {
		t.Errorf("Copy button says %q after a click", label)
	}
	// Let the label reset, so the screenshot shows the resting state.
	time.Sleep(2100 * time.Millisecond)
}

// checkSkipLink tabs once: the skip link must take the focus and show.
func checkSkipLink(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\t")); err != nil {
		t.Fatal(err)
	}
	top, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.activeElement.className === 'skip' ? document.activeElement.getBoundingClientRect().top : -1`))
	if err != nil {
		t.Fatal(err)
	}
	if top < 0 {
		t.Errorf("the first Tab does not focus a visible skip link (top %v)", top)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`document.activeElement.blur()`)); err != nil {
		t.Fatal(err)
	}
}
