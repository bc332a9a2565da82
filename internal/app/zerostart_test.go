package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
)

var operatorLinkRe = regexp.MustCompile(`http://\S+/console/admin-link\?token=\S+`)

// The first start with no config file: the console is on (loopback), the
// first-start block prints a one-time sign-in link for the account that
// holds the printed key, which is an operator; GET / goes to the console
// (HEAD / still answers Claude Code's probe); the link signs a browser in
// as admin once, and a second use fails.
func TestZeroConfigFirstStartOperatorLink(t *testing.T) {
	cfg := config.ZeroConfig()
	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "mg.db")
	var out bytes.Buffer
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Out: &out})
	ctx := context.Background()
	if err := g.app.Bootstrap(ctx, strings.TrimPrefix(g.URL, "http://")); err != nil {
		t.Fatal(err)
	}
	block := out.String()
	link := operatorLinkRe.FindString(block)
	if link == "" || !strings.HasPrefix(link, g.URL+"/") || !strings.Contains(block, "sk-mg-") {
		t.Fatalf("no sign-in link on %s in the block:\n%s", g.URL, block)
	}
	if acct, err := g.app.Store().AccountByName(ctx, "default"); err != nil || !acct.Admin {
		t.Fatalf("the key's account is no operator: %+v, %v", acct, err)
	}

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	// HEAD / stays Claude Code's 200; GET / goes to the console.
	if resp, err := browser.Head(g.URL + "/"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD /: %v %v", resp, err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(g.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/" {
		t.Fatalf("GET /: %d to %q, want 303 to /console/", resp.StatusCode, resp.Header.Get("Location"))
	}

	// The link opens a confirmation page whose button posts the token.
	resp, err = browser.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(page, []byte(`action="/console/admin-link"`)) {
		t.Fatalf("link page: %d %s", resp.StatusCode, page)
	}
	token := link[strings.Index(link, "token=")+len("token="):]
	use := func(c *http.Client) *http.Response {
		resp, err := c.PostForm(g.URL+"/console/admin-link", url.Values{"token": {token}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp = use(browser)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Request.URL.Path, "/console/") {
		t.Fatalf("using the link: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	// Signed in, as the key's account, with the admin role.
	resp, err = browser.Get(g.URL + "/console/api/me")
	if err != nil {
		t.Fatal(err)
	}
	var me struct{ Account, Role string }
	err = json.NewDecoder(resp.Body).Decode(&me)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || me.Account != "default" || me.Role != "admin" {
		t.Fatalf("me: %d %+v %v", resp.StatusCode, me, err)
	}
	if resp, err = browser.Get(g.URL + "/"); err != nil || resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/console/" {
		t.Fatalf("GET / signed in: %v %v", resp, err)
	}
	resp.Body.Close()
	// The link works once.
	jar2, _ := cookiejar.New(nil)
	resp = use(&http.Client{Jar: jar2})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(b, []byte("used already")) {
		t.Fatalf("second use: %d %s", resp.StatusCode, b)
	}
}

// Without a config file on a listener that is not loopback, the console
// stays off (as before), and the first start prints no link.
func TestZeroConfigNotLoopbackNoConsole(t *testing.T) {
	cfg := config.ZeroConfig()
	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "mg.db")
	cfg.Listen = "0.0.0.0:8080"
	if off := cfg.ZeroConsole(); off == "" || cfg.Console != nil {
		t.Fatalf("console %v on 0.0.0.0 (reason %q)", cfg.Console, off)
	}
	var out bytes.Buffer
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Out: &out})
	if err := g.app.Bootstrap(context.Background(), "0.0.0.0:8080"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "sk-mg-") || strings.Contains(out.String(), "admin-link") {
		t.Fatalf("block:\n%s", out.String())
	}
	resp, err := http.Get(g.URL + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/console/ without a console: %d", resp.StatusCode)
	}
}
