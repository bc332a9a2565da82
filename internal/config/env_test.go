package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "x", "B": "y", "EMPTY": "", "REF": "${B}", "YAMLISH": "a: b # c"}
	tests := []struct {
		in, out string
		err     string // substring of the only error, "" for none
	}{
		{in: "plain", out: "plain"},
		{in: "${A}", out: "x"},
		{in: "pre-${A}-${B}-post", out: "pre-x-y-post"},
		{in: "${UNSET:-def}", out: "def"},
		{in: "${EMPTY:-def}", out: "def"},
		{in: "${A:-def}", out: "x"},
		{in: "${EMPTY}", out: ""},
		{in: "${UNSET:-}", out: ""},
		{in: "${UNSET:-${B}}", out: "y"},
		{in: "${UNSET:-a:-b}", out: "a:-b"},
		{in: "${UNSET:-x}}", out: "x}"},
		{in: "${REF}", out: "${B}"}, // values are never expanded again
		{in: "${YAMLISH}", out: "a: b # c"},
		{in: "$$", out: "$$"},
		{in: "pa$$word", out: "pa$$word"},
		{in: "$${A}", out: "$${A}"},
		{in: "costs $5", out: "costs $5"},
		{in: "$HOME", out: "$HOME"},
		{in: "trailing $", out: "trailing $"},
		{in: "${UNSET}", out: "", err: "environment variable UNSET is not set"},
		{in: "k=${UNSET:-${ALSO_UNSET}}", out: "k=", err: "environment variable ALSO_UNSET is not set"},
		{in: "${}", out: "${}", err: `invalid reference "${}"`},
		{in: "${A B}", out: "${A B}", err: "invalid reference"},
		{in: "${1A}", out: "${1A}", err: "invalid reference"},
		{in: "${A:?required}", out: "${A:?required}", err: "invalid reference"},
		{in: "x${A", out: "x${A", err: `unterminated "${A"`},
		{in: strings.Repeat("${U:-", 10) + "v" + strings.Repeat("}", 10), out: "${U:-v}", err: "nested more than 8 deep"},
	}
	for _, tt := range tests {
		e := newEnvExpander(envOf(env), nil)
		out, errs := e.expand(tt.in)
		if out != tt.out {
			t.Errorf("expand(%q) = %q, want %q", tt.in, out, tt.out)
		}
		switch {
		case tt.err == "" && len(errs) != 0:
			t.Errorf("expand(%q): unexpected errors %q", tt.in, errs)
		case tt.err != "" && (len(errs) != 1 || !strings.Contains(errs[0], tt.err)):
			t.Errorf("expand(%q): errors %q, want one containing %q", tt.in, errs, tt.err)
		}
	}
}

func TestLoadEnvValues(t *testing.T) {
	tricky := `sk-abc: def # not a comment, {x: [y]} "q" 'q'`
	env := map[string]string{
		"BASE_URL":     "http://localhost:11434/v1",
		"TRICKY_KEY":   tricky,
		"MODEL_ALIAS":  "local-llama",
		"QUOTED":       "123",
		"EMPTY_VAR":    "",
		"LOG_REQUESTS": "",
		"HOME":         "/root",
	}
	c, ps := mustLoad(t, "env/values.yaml", env)
	if len(ps) != 0 {
		t.Fatalf("want no problems, got %q", ps)
	}
	if c.Listen != "127.0.0.1:9999" {
		t.Errorf("listen = %q", c.Listen)
	}
	p := c.Providers[0]
	if p.BaseURL != env["BASE_URL"] {
		t.Errorf("base_url = %q", p.BaseURL)
	}
	if p.APIKey != tricky {
		t.Errorf("api_key = %q, want the value unchanged as one string", p.APIKey)
	}
	wantModels := []ModelRef{
		{ID: "llama3.2", Upstream: "llama3.2", Line: 9},
		{ID: "local-llama", Upstream: "llama3.2", Line: 10},
	}
	if !slices.Equal(p.Models, wantModels) {
		t.Errorf("models = %+v, want %+v", p.Models, wantModels)
	}
	if p.Weight != 3 || p.Timeout != Duration(90*time.Second) {
		t.Errorf("weight %d, timeout %v: unquoted numbers from the environment should decode as numbers", p.Weight, p.Timeout)
	}
	wantHeaders := map[string]string{"X-Price": "$$5 and $HOME and a lone $", "X-Quoted": "123", "X-Empty": ""}
	for k, v := range wantHeaders {
		if got, ok := p.Headers[k]; !ok || got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if c.Log.RequestsEnabled() {
		t.Error("requests: ${LOG_REQUESTS:-false} should give false")
	}
}

func TestLoadEnvNotInKeys(t *testing.T) {
	_, ps := mustLoad(t, "env/keys.yaml", map[string]string{"TOPKEY": "listen"})
	checkProblems(t, ps, []want{{1, false, `unknown top-level key "${TOPKEY}"`}})
}

func TestLoadEnvSecretsNotPrinted(t *testing.T) {
	secret := "sk-verysecret-value"
	_, ps := mustLoad(t, "env/secret_in_number.yaml", map[string]string{"SECRET": secret})
	checkProblems(t, ps, []want{{4, false, "expected an integer, got a string (value from the environment)"}})
	for _, p := range ps {
		if strings.Contains(p.Message, secret[:7]) {
			t.Errorf("problem leaks the secret: %s", p)
		}
	}
}

func TestLoadEnvBadReferences(t *testing.T) {
	_, ps := mustLoad(t, "env/bad_refs.yaml", map[string]string{"OPENAI_API_KEY": "sk-x"})
	checkProblems(t, ps, []want{
		{5, false, `invalid reference "${OPENAI_API_KEY:?required}"`},
		{7, false, `unterminated "${UNTERMINATED"`},
	})
}

// Unresolved leaves the references of the named settings as written, an
// unset variable there being no problem, and expands every other one.
func TestUnresolvedSecrets(t *testing.T) {
	const yaml = `console:
  oauth:
    - {name: github, type: github, client_id: "${GH_ID}", client_secret: "${GH_SECRET}"}
payments:
  stripe: {secret_key: "${STRIPE_KEY}", webhook_secret: "${STRIPE_HOOK}"}
providers:
  - {name: oa, type: openai, api_key: "${OPENAI_KEY}", models: [gpt-4o-mini]}
`
	c, ps, err := parse([]byte(yaml), envOf(map[string]string{"GH_ID": "id-1"}), Unresolved(Secrets()...))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || !strings.Contains(ps[0].Message, "OPENAI_KEY is not set") {
		t.Errorf("problems %v, want only OPENAI_KEY's", ps)
	}
	if got := c.Payments.Stripe.SecretKey; got != "${STRIPE_KEY}" {
		t.Errorf("secret_key %q", got)
	}
	if got := c.Console.OAuth[0].ClientID; got != "${GH_ID}" {
		t.Errorf("client_id %q: a skipped setting is not read even when set", got)
	}
	for _, p := range ps {
		if p.Warning && strings.Contains(p.Message, "literally") {
			t.Errorf("a reference left as written is taken for a literal secret: %v", p)
		}
	}
	// Without the option the same file needs every variable.
	if _, ps, _ := parse([]byte(yaml), envOf(nil)); len(ps) != 5 {
		t.Errorf("without Unresolved: %d problems %v, want 5", len(ps), ps)
	}
}
