package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/modelgate/modelgate/internal/browsertest"
)

// The playground in a real browser: a streamed turn and a whole one, each
// with its tokens and cost shown, the copied code naming the model and
// the key variable, at 1280 and 390 px, in English and Chinese, with no
// script error or CSP violation. Screenshots: artifacts/screenshots/e2e-playground-*.
func TestPlaygroundBrowser(t *testing.T) {
	ctx := browsertest.New(t, 1280, 900)
	e := startConsole(t)
	problems := watch(t, ctx)
	// The same account signed in from Go: a key and $11.
	who := ghUser{ID: 583231, Login: "octocat", Email: "octocat@example.com"}
	api := e.signIn(who)
	api.createKey("playground laptop", "basic")
	e.payAt(api.topUp("10", "card").CheckoutURL)

	fail := func(what string, err error) {
		t.Helper()
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
		t.Fatalf("%s: %v\n%s", what, err, body)
	}
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			fail(what, err)
		}
	}
	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			fail(js, err)
		}
		return s
	}
	check := func(step string) {
		t.Helper()
		l, _ := problems.take()
		for _, p := range l {
			t.Errorf("%s: browser reported %s", step, p)
		}
	}
	// waitMeta waits for the n-th answer's cost to be shown (n < 10).
	waitMeta := func(n int) string {
		t.Helper()
		js := `(function(){var m=document.querySelectorAll('.turn-assistant .turn-meta');return m.length>=` +
			string(rune('0'+n)) + `?m[m.length-1].textContent:''})()`
		for i := 0; i < 100; i++ {
			if s := eval(js); strings.Contains(s, "$") { // the cost, read from the header or the usage record
				return s
			}
			time.Sleep(100 * time.Millisecond)
		}
		fail("no cost shown", nil)
		return ""
	}

	base := consoleOrigin(t, e.g.URL)
	e.gh.as(who)
	run("sign in", chromedp.Navigate(base+"/console/login/github"), chromedp.WaitVisible(chromedp.CSS(`form[action="/console/topups"]`)))
	run("open the playground", chromedp.Navigate(base+"/console/playground"), chromedp.WaitVisible(chromedp.CSS(`#play-input`)))
	if got := eval(`document.querySelector('#play-key').selectedOptions[0].textContent`); got != "playground laptop" {
		t.Fatalf("key picked: %q", got)
	}
	if got := eval(`Array.from(document.querySelectorAll('#play-model option')).map(o=>o.value).join(',')`); !strings.Contains(got, "demo-chat") || strings.Contains(got, "err-400") {
		t.Fatalf("models offered: %s", got)
	}
	// A streamed turn (the default).
	run("stream a turn",
		chromedp.SendKeys(chromedp.CSS(`#play-system`), "Answer briefly."),
		chromedp.SendKeys(chromedp.CSS(`#play-input`), "Hello from the browser"),
		chromedp.Click(chromedp.CSS(`[data-play-send]`)))
	meta := waitMeta(1)
	if !strings.Contains(meta, "tokens in") || !strings.Contains(meta, "cost $") {
		t.Errorf("streamed turn's meta: %q", meta)
	}
	if got := eval(`document.querySelector('.turn-assistant .turn-text').textContent`); got == "" || strings.Contains(got, "Waiting") {
		t.Errorf("streamed answer: %q", got)
	}
	// A whole turn.
	run("a whole turn",
		chromedp.Click(chromedp.CSS(`#play-stream`)),
		chromedp.SendKeys(chromedp.CSS(`#play-input`), "And once more, not streamed"),
		chromedp.Click(chromedp.CSS(`[data-play-send]`)))
	meta = waitMeta(2)
	if !strings.Contains(meta, "cost $") {
		t.Errorf("whole turn's meta: %q", meta)
	}
	if n := eval(`String(document.querySelectorAll('.turn').length)`); n != "4" {
		t.Errorf("%s turns shown, want 4", n)
	}
	// The code: curl by default, then Python and Node.
	run("open the code", chromedp.Click(chromedp.CSS(`[data-play-code] summary`)))
	var curl string
	for i := 0; i < 50 && curl == ""; i++ { // the toggle event comes after the click
		time.Sleep(20 * time.Millisecond)
		curl = eval(`document.querySelector('[data-play-pre]').textContent`)
	}
	for _, want := range []string{"curl " + base + "/v1/chat/completions", "$MODELGATE_API_KEY", `"model": "demo-chat"`, "Hello from the browser", "Answer briefly."} {
		if !strings.Contains(curl, want) {
			t.Errorf("curl lacks %q:\n%s", want, curl)
		}
	}
	run("python", chromedp.Click(chromedp.CSS(`[data-play-lang="python"]`)))
	if py := eval(`document.querySelector('[data-play-pre]').textContent`); !strings.Contains(py, `os.environ["MODELGATE_API_KEY"]`) || !strings.Contains(py, `base_url="`+base+`/v1"`) {
		t.Errorf("python:\n%s", py)
	}
	run("node", chromedp.Click(chromedp.CSS(`[data-play-lang="node"]`)))
	if js := eval(`document.querySelector('[data-play-pre]').textContent`); !strings.Contains(js, "process.env.MODELGATE_API_KEY") {
		t.Errorf("node:\n%s", js)
	}
	run("back to curl", chromedp.Click(chromedp.CSS(`[data-play-lang="curl"]`)))
	layout := func(at string) {
		t.Helper()
		bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](layoutCheck))
		if err != nil {
			fail("layout check", err)
		}
		for _, b := range bad {
			t.Errorf("%s: %s", at, b)
		}
	}
	layout("a conversation at 1280 px")
	browsertest.Screenshot(t, ctx, "e2e-playground-wide")
	check("playground")
	// Each turn is in Usage.
	eventually(t, "two usage records", func() bool { return len(api.usage("")) == 2 })

	// A refused turn shows the gateway's message.
	if st, body := api.api("DELETE", "/console/api/keys/"+api.keys()[0].ID, nil); st >= 300 {
		t.Fatalf("revoke: %d %s", st, body)
	}
	run("a turn with the revoked key",
		chromedp.SendKeys(chromedp.CSS(`#play-input`), "Still there?"),
		chromedp.Click(chromedp.CSS(`[data-play-send]`)),
		chromedp.WaitVisible(chromedp.CSS(`.turn-error`)))
	if got := eval(`document.querySelector('.turn-error').textContent`); !strings.Contains(got, "401") || !strings.Contains(got, "invalid_api_key") || !strings.Contains(got, "pick another key") {
		t.Errorf("refused turn says %q", got)
	}
	// The refused fetch is logged by the browser as a failed resource: the
	// one problem expected here.
	l, _ := problems.take()
	for _, p := range l {
		if !strings.Contains(p, "status of 401") || !strings.Contains(p, "/console/api/playground") {
			t.Errorf("refused turn: browser reported %s", p)
		}
	}

	// Narrow, and in Chinese.
	run("narrow", chromedp.EmulateViewport(390, 844))
	layout("a conversation and an error at 390 px")
	browsertest.Screenshot(t, ctx, "e2e-playground-narrow")
	api.createKey("second", "basic")
	run("chinese", chromedp.Navigate(base+"/console/playground?lang=zh-CN"), chromedp.WaitVisible(chromedp.CSS(`#play-input`)),
		chromedp.SendKeys(chromedp.CSS(`#play-input`), "你好"),
		chromedp.Click(chromedp.CSS(`[data-play-send]`)))
	if meta := waitMeta(1); !strings.Contains(meta, "费用 $") || !strings.Contains(meta, "输入") {
		t.Errorf("Chinese meta: %q", meta)
	}
	layout("the Chinese conversation at 390 px")
	browsertest.Screenshot(t, ctx, "e2e-playground-narrow-zh")
	check("chinese")
}
