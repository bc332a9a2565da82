package web

import (
	"strings"
	"testing"
)

func TestRenderModelsPublic(t *testing.T) {
	body, _ := render(t, mustPages(t), "models", sampleModels("public"))
	for _, no := range []string{`action="/console/logout"`, `href="/console/keys"`, `href="/console/usage"`, `name="group"`, "Balance"} {
		if strings.Contains(body, no) {
			t.Errorf("public page shows %q", no)
		}
	}
	for _, want := range []string{`class="account account-out"`, `href="/console/models" aria-current="page"`, "Sign in"} {
		if !strings.Contains(body, want) {
			t.Errorf("public page lacks %q", want)
		}
	}
}

func TestRenderModelsChinese(t *testing.T) {
	body, _ := render(t, mustPages(t), "models", withLang(sampleModels(""), Zh))
	for _, want := range []string{"premium 分组的价格", "每百万 tokens", "联网搜索", "$0.0504 / 张", "$0.12 / 秒", "全部厂商", "输入价格，从低到高", `<html lang="zh-CN">`} {
		if !strings.Contains(body, want) {
			t.Errorf("Chinese page lacks %q", want)
		}
	}
	if strings.Contains(body, "Per image or second") || strings.Contains(body, "All vendors") {
		t.Error("English text on the Chinese page")
	}
}

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "—"}, {-1, "—"}, {4096, "4,096"}, {8191, "8,191"}, {128_000, "128K"}, {131_072, "131,072"}, {200_000, "200K"},
		{1_000_000, "1M"}, {1_048_576, "1.05M"}, {2_000_000, "2M"}} {
		if got := Tokens(tc.n); got != tc.want {
			t.Errorf("Tokens(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
