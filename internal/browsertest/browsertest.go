// Package browsertest drives a headless Chromium from tests, through
// chromedp, to load pages and take screenshots.
//
//	ctx := browsertest.New(t, 1280, 900)
//	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil { … }
//	browsertest.Screenshot(t, ctx, "console-keys-wide")
//
// New looks for chromium on PATH, then at /usr/bin/chromium. When there is
// none the test is skipped, unless MODELGATE_REQUIRE_CHROMIUM=1, in which
// case it fails. The browser is closed by t.Cleanup. Screenshots are
// full-page PNGs written to <module root>/artifacts/screenshots/<name>.png.
//
// It is an ordinary package (not a _test file) so tests of any package can
// import it; it imports testing only for testing.TB.
package browsertest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
)

// RequireEnv, set to "1", turns a missing Chromium into a test failure.
const RequireEnv = "MODELGATE_REQUIRE_CHROMIUM"

// candidates are the browsers tried, in order.
var candidates = []string{"chromium", "/usr/bin/chromium", "chromium-browser", "/usr/bin/chromium-browser"}

// ExecPath is the Chromium New would launch, or "" when there is none.
func ExecPath() string {
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// New launches a headless Chromium with a width×height viewport and returns
// a chromedp context for a tab in it. The browser is shut down when the test
// ends.
func New(t testing.TB, width, height int) context.Context {
	t.Helper()
	path := ExecPath()
	if path == "" {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("browsertest: no chromium on PATH or at /usr/bin/chromium, and %s=1", RequireEnv)
		}
		t.Skip("browsertest: no chromium on PATH or at /usr/bin/chromium; skipping")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", "new"),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.WindowSize(width, height),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	// Start the browser now so a launch failure is reported here, and pin
	// the viewport: a window may not shrink below the platform's minimum.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("browsertest: start %s: %v", path, err)
	}
	return ctx
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// Screenshot saves a full-page PNG of the tab's current page to
// <module root>/artifacts/screenshots/<name>.png.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	if !safeName.MatchString(name) {
		t.Fatalf("browsertest: screenshot name %q: use letters, digits, '.', '_' and '-'", name)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("browsertest: screenshot %s: %v", name, err)
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	dir := filepath.Join(root, "artifacts", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	file := filepath.Join(dir, name+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	t.Logf("screenshot %s", file)
}

// ModuleRoot is the nearest directory at or above the working directory
// that holds a go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}
