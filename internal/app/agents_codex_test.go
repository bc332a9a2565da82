//go:build unix

package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codexConfig is a CODEX_HOME/config.toml that points Codex at the gateway
// as a custom model provider speaking the Responses API, runs commands
// without asking, makes one try per request, and sends nothing elsewhere.
// Without all its tools, Codex offers function tools only (no web_search,
// no multi_agent_v1 namespace of subagent tools).
func codexConfig(gatewayURL, model string, allTools bool) string {
	top, tables := "", ""
	if !allTools {
		top, tables = "web_search = \"disabled\"\n", "\n[agents]\nenabled = false\n"
	}
	return fmt.Sprintf(`model = %q
model_provider = "modelgate"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
%s
[analytics]
enabled = false

[model_providers.modelgate]
name = "modelgate"
base_url = "%s/v1"
env_key = "MODELGATE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
%s`, model, top, gatewayURL, tables)
}

// TestAgentsCodex runs `codex exec` against the gateway: the scripted
// vendor's turn 1 calls Codex's shell tool (exec_command), Codex runs the
// command, and turn 2 answers with what it printed, which must be Codex's
// final output. Each request is billed on the responses endpoint.
func TestAgentsCodex(t *testing.T) {
	bin := codexBinary(t)
	for _, tc := range []struct {
		name, providerType, vendorPath string
		allTools                       bool
	}{
		// The vendor serves the Responses API: requests pass through.
		{"passthrough", "openai", "/v1/responses", true},
		// Anthropic's Messages API: the gateway translates, Codex's
		// namespace and web_search tools included.
		{"translated-anthropic", "anthropic", "/v1/messages", true},
		// The same with Codex's function tools only.
		{"translated-anthropic-function-tools", "anthropic", "/v1/messages", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := newAgentScript(t)
			v := newAgentVendor(t, script)
			const model, upstream = "codex-agent-model", "vendor-codex-model"
			g := startAgentGateway(t, v, tc.providerType, model, upstream)
			home, work := t.TempDir(), t.TempDir()
			codexHome := filepath.Join(home, ".codex")
			if err := os.MkdirAll(codexHome, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(codexConfig(g.URL, model, tc.allTools)), 0o600); err != nil {
				t.Fatal(err)
			}
			env := agentEnv(home, "CODEX_HOME="+codexHome, "MODELGATE_API_KEY="+g.keys["default"])
			run := runAgent(t, bin, work, env, "exec", "--skip-git-repo-check", "--color", "never",
				"Run the shell command `"+script.Command+"` and tell me exactly what it printed.")
			if run.Err != nil {
				t.Fatalf("codex exec failed: %v", run.Err)
			}
			if !strings.Contains(run.Stdout, script.Marker) {
				t.Errorf("codex's final output lacks %q: %q", script.Marker, run.Stdout)
			}
			checkAgentTurns(t, v, tc.vendorPath, upstream)
			checkAgentUsage(t, g, v, "responses", model, 2)
		})
	}
}
