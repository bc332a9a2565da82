package web

import (
	"strings"
	"testing"
)

// samplePlayground is the playground page with keys of two groups, empty
// (no active key) or off.
func samplePlayground(state string) Playground {
	p := Playground{Layout: sampleLayout("Playground", "playground"), BaseURL: "https://api.example.com/v1"}
	switch state {
	case "off":
		p.Off = true
		return p
	case "empty":
		return p
	}
	p.Keys = []PlaygroundKey{
		{ID: "k1", Name: "production backend", Prefix: "sk-mg-9f8e", Group: "default"},
		{ID: "k2", Name: xssName, Prefix: "sk-mg-1a2b", Group: "premium"},
	}
	p.Models = []PlaygroundModel{{ID: "gpt-4o-mini", MaxOutput: 16384}, {ID: "claude-3-5-haiku", MaxOutput: 8192}}
	p.ModelsJSON = `{"default":[{"id":"gpt-4o-mini","max_output":16384},{"id":"claude-3-5-haiku","max_output":8192}],` +
		`"premium":[{"id":"gpt-4o","max_output":16384},{"id":"o3","max_output":100000},{"id":"` + xssName + `"}]}`
	return p
}

// The playground's script reads everything it says and needs from the
// page: each text in the page's language, the API paths, the CSRF token,
// the models as JSON (escaped into the attribute) and the base URL.
func TestRenderPlayground(t *testing.T) {
	p := mustPages(t)
	body, _ := render(t, p, "playground", samplePlayground(""))
	for _, attr := range []string{"data-t-you", "data-t-assistant", "data-t-tokens", "data-t-cost", "data-t-cost-wait",
		"data-t-cost-later", "data-t-waiting", "data-t-stopped", "data-t-empty-answer", "data-t-failed", "data-t-network",
		"data-t-key-refused", "data-t-send", "data-t-stop", "data-t-copied", "data-t-copy", "data-t-copy-failed",
		"data-t-no-models", "data-t-max-range", "data-t-code-empty"} {
		if !strings.Contains(body, attr+`="`) || strings.Contains(body, attr+`=""`) {
			t.Errorf("no text for %s", attr)
		}
	}
	if strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("a key or model name is not escaped")
	}
	if !strings.Contains(body, `data-models="{&#34;default&#34;:[{&#34;id&#34;:&#34;gpt-4o-mini&#34;`) {
		t.Errorf("models JSON not in its attribute: %.2000s", body)
	}
	zh, _ := render(t, p, "playground", withLang(samplePlayground(""), Zh))
	for _, want := range []string{`data-t-send="发送"`, `data-t-you="你"`, "<span>操练场</span>", "复制为 curl / Python / Node 代码"} {
		if !strings.Contains(zh, want) {
			t.Errorf("Chinese page lacks %s", want)
		}
	}
}
