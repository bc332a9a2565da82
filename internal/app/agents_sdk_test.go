//go:build unix

package app_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// agentsSDKScript runs the OpenAI Agents SDK (JavaScript) against the
// gateway; node resolves its packages from agents/node_modules.
const agentsSDKScript = "../../agents/openai-agents.mjs"

// nodeForAgentsSDK is node, when the Agents SDK is installed; else the
// test skips (or fails under MODELGATE_REQUIRE_AGENTS=1).
func nodeForAgentsSDK(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(agentModules, "@openai", "agents", "package.json")); err != nil || serr != nil {
		if os.Getenv(requireAgentEnv) == "1" {
			t.Fatalf("node or @openai/agents missing (run npm ci --prefix agents): %v %v", err, serr)
		}
		t.Skip("OpenAI Agents SDK not installed: run npm ci --prefix agents to run this test")
	}
	script, err = filepath.Abs(agentsSDKScript)
	if err != nil {
		t.Fatal(err)
	}
	return node, script
}

// TestAgentsOpenAIAgentsSDK runs an OpenAI Agents SDK agent with a shell
// function tool, streamed over /v1/responses: the scripted vendor's turn 1
// calls the tool, the SDK runs it, and turn 2 answers with what it printed,
// which must be the run's final output. Each request is billed.
func TestAgentsOpenAIAgentsSDK(t *testing.T) {
	node, script := nodeForAgentsSDK(t)
	for _, tc := range []struct {
		name, providerType, vendorPath string
	}{
		{"passthrough", "openai", "/v1/responses"},
		{"translated-anthropic", "anthropic", "/v1/messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newAgentScript(t)
			v := newAgentVendor(t, s)
			const model, upstream = "sdk-agent-model", "vendor-sdk-model"
			g := startAgentGateway(t, v, tc.providerType, model, upstream)
			env := agentEnv(t.TempDir(), "MODELGATE_BASE_URL="+g.URL, "MODELGATE_API_KEY="+g.keys["default"],
				"MODELGATE_MODEL="+model, "MODELGATE_PROMPT=Run the shell command `"+s.Command+"` and tell me exactly what it printed.")
			run := runAgent(t, node, t.TempDir(), env, script)
			if run.Err != nil {
				t.Fatalf("agent run failed: %v", run.Err)
			}
			if !strings.Contains(run.Stdout, s.Marker) {
				t.Errorf("the agent's final output lacks %q: %q", s.Marker, run.Stdout)
			}
			checkAgentTurns(t, v, tc.vendorPath, upstream)
			checkAgentUsage(t, g, v, "responses", model, 2)
		})
	}
}
