package config

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// envOf turns a map into the getenv function Load takes.
func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// testEnv is the environment most cases load with.
var testEnv = map[string]string{"KEY": "sk-test", "OPENAI_API_KEY": "sk-openai-test"}

func mustLoad(t *testing.T, file string, env map[string]string) (*Config, []Problem) {
	t.Helper()
	c, ps, err := Load(filepath.Join("testdata", file), envOf(env))
	if err != nil {
		t.Fatalf("Load(%s): %v", file, err)
	}
	if c == nil {
		t.Fatalf("Load(%s): nil config without error", file)
	}
	return c, ps
}

func TestLoadFullSample(t *testing.T) {
	c, ps := mustLoad(t, "good/full.yaml", testEnv)
	if len(ps) != 0 {
		t.Fatalf("want no problems, got %q", ps)
	}
	if c.Path != filepath.Join("testdata", "good/full.yaml") {
		t.Errorf("Path = %q", c.Path)
	}
	if c.Listen != "127.0.0.1:8080" || c.Database != "sqlite:./modelgate-data/modelgate.db" || c.MaxRequestBytes != 20971520 {
		t.Errorf("server settings = %q %q %d", c.Listen, c.Database, c.MaxRequestBytes)
	}
	if c.ShutdownTimeout != Duration(30*time.Second) || c.AuthCacheTTL != Duration(5*time.Second) {
		t.Errorf("durations = %v %v", c.ShutdownTimeout, c.AuthCacheTTL)
	}
	if c.Log.Level != "info" || c.Log.Format != "text" || !c.Log.RequestsEnabled() {
		t.Errorf("log = %+v", c.Log)
	}
	if c.Usage.BatchSize != 256 || c.Usage.FlushInterval != Duration(200*time.Millisecond) {
		t.Errorf("usage = %+v", c.Usage)
	}
	if len(c.Providers) != 1 {
		t.Fatalf("providers = %d", len(c.Providers))
	}
	p := c.Providers[0]
	if p.Name != "openai-main" || p.Type != "openai" || p.BaseURL != "https://api.openai.com/v1" || p.OwnedBy != "openai" {
		t.Errorf("provider = %+v", p)
	}
	if p.APIKey != "sk-openai-test" {
		t.Errorf("api_key not expanded: %q", p.APIKey)
	}
	if p.Line != 15 || p.Priority != 0 || p.Weight != 1 {
		t.Errorf("line/priority/weight = %d/%d/%d", p.Line, p.Priority, p.Weight)
	}
	wantModels := []ModelRef{
		{ID: "gpt-4o-mini", Upstream: "gpt-4o-mini", Line: 20},
		{ID: "deepseek-chat", Upstream: "deepseek-chat-v3", Line: 21},
	}
	if !slices.Equal(p.Models, wantModels) {
		t.Errorf("models = %+v, want %+v", p.Models, wantModels)
	}
	if p.Headers["X-Title"] != "modelgate" || len(p.Headers) != 1 {
		t.Errorf("headers = %v", p.Headers)
	}
	if p.Timeout != Duration(10*time.Minute) || p.IdleTimeout != Duration(2*time.Minute) {
		t.Errorf("timeouts = %v %v", p.Timeout, p.IdleTimeout)
	}
	if len(c.Groups) != 2 {
		t.Fatalf("groups = %v", c.Groups)
	}
	if g := c.Groups["default"]; !slices.Equal(g.Models, []string{"*"}) || g.Line != 29 {
		t.Errorf("default group = %+v", g)
	}
	if g := c.Groups["basic"]; !slices.Equal(g.Models, []string{"gpt-4o-mini", "deepseek-*"}) || g.Line != 30 {
		t.Errorf("basic group = %+v", g)
	}
}

func TestLoadMinimalAppliesDefaults(t *testing.T) {
	c, ps := mustLoad(t, "good/minimal.yaml", nil)
	if len(ps) != 0 {
		t.Fatalf("want no problems, got %q", ps)
	}
	want := Default()
	want.Path, want.src = c.Path, c.src
	want.Providers[0].Line = 3
	if c.Log.Requests != nil || !c.Log.RequestsEnabled() {
		t.Errorf("Requests = %v, want nil meaning true", c.Log.Requests)
	}
	if c.Listen != want.Listen || c.Database != want.Database || c.MaxRequestBytes != want.MaxRequestBytes ||
		c.ShutdownTimeout != want.ShutdownTimeout || c.AuthCacheTTL != want.AuthCacheTTL ||
		c.Log != want.Log || c.Usage != want.Usage {
		t.Errorf("settings = %+v, want %+v", c, want)
	}
	p := c.Providers[0]
	if p.Name != "demo" || p.Type != "demo" || p.Weight != 1 || p.Timeout != Duration(10*time.Minute) ||
		p.IdleTimeout != Duration(2*time.Minute) || p.Models != nil || p.Line != 3 {
		t.Errorf("provider = %+v", p)
	}
	if g, ok := c.Groups["default"]; !ok || len(c.Groups) != 1 || !slices.Equal(g.Models, []string{"*"}) {
		t.Errorf("groups = %+v", c.Groups)
	}
}

func TestLoadAnchorsAndMerges(t *testing.T) {
	c, ps := mustLoad(t, "good/anchors.yaml", testEnv)
	if len(ps) != 0 {
		t.Fatalf("want no problems, got %q", ps)
	}
	if len(c.Providers) != 2 {
		t.Fatalf("providers = %+v", c.Providers)
	}
	one, two := c.Providers[0], c.Providers[1]
	if one.Type != "openai" || one.APIKey != "sk-test" || one.Timeout != Duration(5*time.Minute) || one.Line != 7 {
		t.Errorf("one = %+v", one)
	}
	// A defaulted idle timeout is capped at the request timeout.
	if two.Timeout != Duration(time.Minute) || two.IdleTimeout != Duration(time.Minute) || two.APIKey != "sk-test" || two.Line != 11 {
		t.Errorf("two = %+v", two)
	}
}

// want is one expected problem: its exact line, whether it is a warning,
// and a substring of its message.
type want struct {
	line    int
	warning bool
	text    string
}

func TestLoadProblems(t *testing.T) {
	tests := []struct {
		file string
		env  map[string]string // nil means testEnv
		want []want            // every problem the file produces, in order
	}{
		// YAML structure and types.
		{file: "type_priority.yaml", want: []want{{4, false, "expected an integer, got a string `high`"}}},
		{file: "type_models.yaml", want: []want{{6, false, "expected a list of models or all, got an integer `5`"}}},
		{file: "duration_invalid.yaml", want: []want{{2, false, "invalid duration `soon`"}}},
		{file: "duplicate_key.yaml", want: []want{{4, false, `mapping key "name" already defined at line 2`}}},
		{file: "two_documents.yaml", want: []want{{3, false, "more than one YAML document"}}},
		{file: "not_a_mapping.yaml", want: []want{{1, false, "must be a mapping of settings"}}},

		// Unknown keys, with hints.
		{file: "unknown_key_provider.yaml", want: []want{
			{2, false, "base_url is required"},
			{4, false, `unknown key "base_ur" in provider "openai-main" (did you mean base_url?)`},
		}},
		{file: "unknown_key_group.yaml", want: []want{
			{5, false, `group "basic" has no models`},
			{6, false, `unknown key "modles" in group "basic" (did you mean models?)`},
		}},
		{file: "unknown_key_model.yaml", want: []want{
			{8, false, `unknown key "upstrem" in model (did you mean upstream?)`},
		}},
		{file: "unknown_key_toplevel.yaml", want: []want{
			{2, false, `unknown top-level key "provider" (did you mean providers?)`},
			{9, false, `unknown key "levle" in log (did you mean level?)`},
		}},

		// Server settings.
		{file: "listen_bad.yaml", want: []want{{1, false, `listen: "localhost" is not host:port`}}},
		{file: "database_bad.yaml", want: []want{{1, false, `unsupported database type "mysql"`}}},
		{file: "max_request_bytes_small.yaml", want: []want{{1, false, "max_request_bytes must be at least 1024, got 100"}}},
		{file: "gc_percent_small.yaml", want: []want{{1, false, "gc_percent must be at least 10, got 5: below that the collector runs almost without pause"}}},
		{file: "memory_limit_small.yaml", want: []want{{2, false, "memory_limit must be 0 (none) or at least max_body_memory (134217728), got 1048576"}}},
		{file: "duration_zero.yaml", want: []want{{1, false, "shutdown_timeout must be a positive duration"}}},
		{file: "duration_negative.yaml", want: []want{{1, false, "auth_cache_ttl must be a positive duration (like 30s), got -5s"}}},
		{file: "drain_timeout_negative.yaml", want: []want{{2, false, "drain_timeout must be 0 (charge the reservation at once) or a positive duration (like 15s), got -1s"}}},
		{file: "log_level_bad.yaml", want: []want{
			{2, false, `log.level must be one of debug, info, warn, error; got "verbose"`},
			{3, false, `log.format must be text or json; got "yaml"`},
		}},
		{file: "usage_batch_zero.yaml", want: []want{{2, false, "usage.batch_size must be at least 1, got 0"}}},

		// Providers.
		{file: "no_providers.yaml", want: []want{{0, false, "no providers configured"}}},
		{file: "provider_no_name.yaml", want: []want{{2, false, "provider #1: name is required"}}},
		{file: "provider_bad_name.yaml", want: []want{{2, false, `name "My_Provider" must match [a-z0-9][a-z0-9._-]*`}}},
		{file: "provider_dup_name.yaml", want: []want{{4, false, `provider "demo": duplicate name (first defined at line 2)`}}},
		{file: "provider_unknown_type.yaml", want: []want{{3, false, `unknown type "bedrock" (known: anthropic, azure, demo, gemini, openai)`}}},
		{file: "provider_no_type.yaml", want: []want{{2, false, "type is required (one of: anthropic, azure, demo, gemini, openai)"}}},
		{file: "openai_no_base_url.yaml", want: []want{{2, false, "base_url is required for type openai"}}},
		{file: "openai_bad_base_url.yaml", want: []want{{4, false, "base_url must be an http:// or https:// URL"}}},
		{file: "demo_base_url.yaml", want: []want{{4, false, "type demo does not use base_url"}}},
		{file: "demo_api_key.yaml", want: []want{{4, false, "type demo does not use api_key"}}},
		{file: "openai_no_models.yaml", want: []want{{2, false, "type openai needs at least one model"}}},
		{file: "model_empty_id.yaml", want: []want{{8, false, "model #2 has an empty id"}}},
		{file: "model_dup_id.yaml", want: []want{{9, false, `duplicate model id "gpt-4o-mini" (first listed at line 7)`}}},
		{file: "priority_negative.yaml", want: []want{{4, false, "priority must be 0 or more"}}},
		{file: "weight_zero.yaml", want: []want{{4, false, "weight must be at least 1, got 0"}}},
		{file: "weight_negative.yaml", want: []want{{4, false, "weight must be at least 1, got -3"}}},
		{file: "header_bad_name.yaml", want: []want{{9, false, `header name "Bad Header" is not a valid HTTP header name`}}},
		{file: "base_url_gemini_openai.yaml", want: []want{{4, false, `provider "gemini": base_url is Gemini's OpenAI-compatible endpoint (/v1beta/openai); use it with type openai`}}},
		{file: "base_url_key_in_query.yaml", want: []want{
			{6, true, `provider "gemini-pasted": api_key is empty`},
			{8, false, `provider "gemini-pasted": base_url must not carry the API key (?key=...); put it in api_key`},
			{12, false, `provider "azure": base_url may carry only api-version in its query string`},
		}},
		{file: "base_url_wrong_path.yaml", want: []want{{4, true, `provider "groq": base_url path /v1 is not groq's documented /openai/v1 (https://api.groq.com/openai/v1)`}}},
		{file: "models_unknown_vendor.yaml", want: []want{{8, false, `provider "vllm": cannot tell whose catalog models "llama-*" means: the base_url host is not a vendor modelgate knows; set owned_by`}}},
		{file: "models_patterns.yaml", want: []want{
			{7, true, `provider "anthropic": pattern "gpt-*" matches no priced anthropic model in the catalog`},
			{8, false, `provider "anthropic": invalid model pattern "claude-[opus"`},
			{9, false, `provider "anthropic": pattern "claude-opus-*" cannot have an upstream`},
		}},
		{file: "idle_over_timeout.yaml", want: []want{{5, true, "idle_timeout (1m0s) is longer than timeout (30s)"}}},

		// API keys.
		{file: "apikey_unset.yaml", want: []want{{5, false, "environment variable MISSING_KEY is not set"}}},
		{file: "apikey_literal.yaml", want: []want{{5, true, "secrets should come from the environment"}}},
		{file: "apikey_empty.yaml", want: []want{{2, true, `provider "ollama": api_key is empty`}}},
		{file: "apikeys.yaml", want: []want{ // "rotated" has keys: no warning that it has none
			{11, false, `provider "both": give api_key or api_keys, not both`},
			{16, false, `provider "repeated": api_keys[1] repeats an earlier key`},
			{21, true, `provider "literal": api_keys[1] is written literally in the file`},
		}},

		// Groups.
		{file: "group_bad_name.yaml", want: []want{{4, false, `group "Basic": name must match [a-z0-9][a-z0-9_-]*`}}},
		{file: "group_empty_models.yaml", want: []want{{6, false, `group "empty" has no models`}}},
		{file: "group_bad_pattern.yaml", want: []want{{7, false, `invalid pattern "gpt-[4"`}}},
		{file: "group_responses.yaml", want: []want{
			{6, false, `group "open": responses.allow_unsized needs responses.reserve`},
			{9, true, `group "warned": responses.reserve is used only with responses.allow_unsized: true`},
			{12, false, `group "negative": responses.reserve must not be negative, got -1`},
			{12, false, `group "negative": responses.max_tool_calls must be 0 (the default, 10) or more, got -2`},
		}},
		{file: "group_limits.yaml", want: []want{
			{9, false, `group "negative": limits.rpm must be 0 (no limit) or more, got -1`},
			{10, false, `group "negative": limits.tpm must be 0 (no limit) or more, got -2`},
			{11, false, `group "negative": limits.concurrency must be 0 (no limit) or more, got -3`},
		}},
		{file: "model_surcharges.yaml", want: []want{
			{6, false, `model "my-model": audio_input must not be negative, got -1`},
			{8, false, `model "my-model": tiers: "default" is the model's own price`},
			{9, false, `model "my-model": tiers: priority needs an input or output price`},
			{10, false, `model "my-model": tiers: the prices of flex must not be negative`},
			{12, false, `model "my-model": tool_calls: the price of "web_search" must be 0 (free) or more, got -0.01`},
		}},
		{file: "group_no_match.yaml", want: []want{{9, true, `group "claude" matches no configured model (patterns: claude-*)`}}},

		// Billing, catalog models and price ratios.
		{file: "billing_bad.yaml", want: []want{
			{3, false, `billing.currency must be a 3-letter uppercase code like USD or EUR; got "usd"`},
			{4, false, "billing.demo_credit must be 0 or more, got -1"},
		}},
		{file: "amount_syntax.yaml", want: []want{
			{3, false, "invalid amount `0.0000001`: want a decimal number with at most 6 decimals"},
			{6, false, "invalid amount `1e-3`"},
			{7, false, "expected an amount like 0.15"},
			{8, false, "invalid amount `cheap`"},
		}},
		{file: "model_bad.yaml", want: []want{
			{4, false, `model "gpt-4o-mini": input must not be negative, got -0.15`},
			{6, false, `model "gpt-4o-mini": modality must be one of audio, chat, completion, embedding, image, video; got "hologram"`},
			{7, false, `model "gpt-4o-mini": context_window must be 0 (unknown) or more, got -1`},
			{8, false, "model #2: id is required"},
			{9, false, `model "gpt-4o-mini": duplicate id (first listed at line 3)`},
			{10, false, `unknown key "inptu" in model "gpt-4o-mini" (did you mean input?)`},
			{13, true, `model "img": max_output (200) is larger than context_window (100)`},
			{15, false, `model "img": image size "big" must look like 1024x1024`},
			{16, false, `model "img": image price must not be negative, got -1`},
			{17, false, `model "img": duplicate image price for size 1x1 quality ""`},
			{18, false, `model "img": image price #4 needs a size`},
		}},
		{file: "price_ratio_bad.yaml", want: []want{
			{3, false, `group "zero": price_ratio must be more than 0 and at most 100, got 0`},
			{4, false, `group "huge": price_ratio must be more than 0 and at most 100, got 100.5`},
			{5, false, "invalid ratio `-1`"},
			{6, false, "invalid ratio `0.1234567`"},
		}},

		// Many mistakes at once: all are reported, each on its own line.
		{file: "several.yaml", want: []want{
			{2, false, `listen: "8080" is not host:port`},
			{3, false, "max_request_bytes must be at least 1024, got 10"},
			{5, false, `provider "openai-main": type openai needs at least one model`},
			{8, false, "environment variable MISSING_KEY is not set"},
			{9, false, `unknown key "modles" in provider "openai-main" (did you mean models?)`},
			{10, false, "weight must be at least 1, got 0"},
			{11, false, `duplicate name (first defined at line 5)`},
			{12, false, `unknown type "opneai"`},
			{14, false, `group "basic": invalid pattern "gpt-[4"`},
		}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".yaml"), func(t *testing.T) {
			env := tt.env
			if env == nil {
				env = testEnv
			}
			_, ps := mustLoad(t, "bad/"+tt.file, env)
			checkProblems(t, ps, tt.want)
		})
	}
}

// checkProblems asserts that ps is exactly the wanted problems, in order.
func checkProblems(t *testing.T, ps []Problem, wants []want) {
	t.Helper()
	ok := len(ps) == len(wants)
	for i := 0; ok && i < len(ps); i++ {
		w := wants[i]
		ok = ps[i].Line == w.line && ps[i].Warning == w.warning && strings.Contains(ps[i].Message, w.text)
	}
	if !ok {
		t.Errorf("problems:\n%s\nwant:\n%s", formatProblems(ps), formatWants(wants))
	}
	wantErrors := slices.ContainsFunc(wants, func(w want) bool { return !w.warning })
	if HasErrors(ps) != wantErrors {
		t.Errorf("HasErrors = %v, want %v", HasErrors(ps), wantErrors)
	}
}

func formatProblems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}

func formatWants(ws []want) string {
	var ps []Problem
	for _, w := range ws {
		ps = append(ps, Problem{Line: w.line, Warning: w.warning, Message: "…" + w.text + "…"})
	}
	return formatProblems(ps)
}

func TestLoadFileErrors(t *testing.T) {
	_, _, err := Load(filepath.Join("testdata", "does-not-exist.yaml"), nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	c, ps, err := Load(filepath.Join("testdata", "invalid", "syntax_error.yaml"), nil)
	if err == nil || c != nil || ps != nil {
		t.Fatalf("syntax error: got %v, %v, %v", c, ps, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "line 1:") || !strings.Contains(msg, "syntax_error.yaml") {
		t.Errorf("syntax error message %q should name the file and the line", msg)
	}
}

func TestLoadFlowEnvHint(t *testing.T) {
	_, _, err := Load(filepath.Join("testdata", "invalid", "flow_env.yaml"), nil)
	if err == nil || !strings.Contains(err.Error(), `quote values that use ${VAR}`) {
		t.Errorf("err = %v, want a hint to quote ${VAR} inside {...}", err)
	}
}

func TestLoadEmptyFile(t *testing.T) {
	for _, body := range []string{"", "# only a comment\n", "~\n"} {
		c, ps, err := parse([]byte(body), nil)
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if c.Listen != defaultListen {
			t.Errorf("%q: defaults not applied: %+v", body, c)
		}
		checkProblems(t, ps, []want{{0, false, "no providers configured"}})
	}
}

func TestLoadPostgresDatabase(t *testing.T) {
	c, ps := mustLoad(t, "good/postgres.yaml", nil)
	if len(ps) != 0 {
		t.Fatalf("want no problems, got %q", ps)
	}
	kind, target, err := c.DatabaseKind()
	if err != nil || kind != "postgres" || target != "postgres://modelgate:hunter2@db:5432/modelgate" {
		t.Errorf("DatabaseKind = %q, %q, %v", kind, target, err)
	}
}
