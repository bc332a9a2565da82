//go:build unix

package app_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// claudeEnv points Claude Code at the gateway's Messages door with the
// gateway key, every model alias (the main loop's and the small fast one's)
// on model, and everything that would reach Anthropic's own services
// (updates, telemetry, error reports, feature flags) off.
func claudeEnv(home, gatewayURL, key, model string) []string {
	return agentEnv(home,
		"ANTHROPIC_BASE_URL="+gatewayURL,
		"ANTHROPIC_API_KEY="+key,
		"ANTHROPIC_MODEL="+model,
		"ANTHROPIC_SMALL_FAST_MODEL="+model,
		"ANTHROPIC_DEFAULT_HAIKU_MODEL="+model,
		"ANTHROPIC_DEFAULT_SONNET_MODEL="+model,
		"ANTHROPIC_DEFAULT_OPUS_MODEL="+model,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
	)
}

// claudeResult is the last line of `claude -p --output-format json`.
type claudeResult struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	IsError bool   `json:"is_error"`
	Result  string `json:"result"`
}

// TestAgentsClaudeCode runs `claude -p` against the gateway's /v1/messages:
// the scripted vendor's turn 1 calls Claude Code's Bash tool, Claude Code
// runs the command, and turn 2 answers with what it printed, which must be
// the result Claude Code reports. Each request is billed on the messages
// endpoint.
func TestAgentsClaudeCode(t *testing.T) {
	bin := claudeBinary(t)
	for _, tc := range []struct {
		name, providerType, vendorPath string
	}{
		// An Anthropic provider: the body passes through.
		{"passthrough", "anthropic", "/v1/messages"},
		// An OpenAI-compatible provider: translated to chat completions.
		{"translated-chat", "openai", "/v1/chat/completions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := newAgentScript(t)
			v := newAgentVendor(t, script)
			const model, upstream = "claude-agent-model", "vendor-claude-model"
			g := startAgentGateway(t, v, tc.providerType, model, upstream)
			home, work := t.TempDir(), t.TempDir()
			run := runAgent(t, bin, work, claudeEnv(home, g.URL, g.keys["default"], model),
				"-p", "Run the shell command `"+script.Command+"` and tell me exactly what it printed.",
				"--output-format", "json", "--allowedTools", "Bash", "--max-turns", "4")
			if run.Err != nil {
				t.Fatalf("claude -p failed: %v", run.Err)
			}
			var res claudeResult
			lines := strings.Split(strings.TrimSpace(run.Stdout), "\n")
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
				t.Fatalf("claude's output is not its JSON result: %v", err)
			}
			if res.Type != "result" || res.Subtype != "success" || res.IsError || !strings.Contains(res.Result, script.Marker) {
				t.Errorf("claude's result %+v lacks %q", res, script.Marker)
			}
			checkAgentTurns(t, v, tc.vendorPath, upstream)
			checkAgentUsage(t, g, v, "messages", model, 2)
		})
	}
}
