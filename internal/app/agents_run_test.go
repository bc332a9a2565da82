//go:build unix

package app_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
)

// The agent tests run the real agent CLIs that `npm ci --prefix agents`
// installs (versions pinned in agents/package-lock.json). Without them the
// tests skip, unless MODELGATE_REQUIRE_AGENTS=1 (CI) makes that a failure.
const (
	agentModules    = "../../agents/node_modules" // from this package's directory
	requireAgentEnv = "MODELGATE_REQUIRE_AGENTS"
	agentRunTimeout = 90 * time.Second // one CLI run, start to exit
)

// agentPlatform is the npm platform packages' name for this machine
// (linux-x64, darwin-arm64, ...).
func agentPlatform() string {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	return runtime.GOOS + "-" + arch
}

// agentBinary finds an agent CLI's native binary among the platform
// packages npm installed, trying each glob in turn; it skips the test (or
// fails it under MODELGATE_REQUIRE_AGENTS=1) when there is none.
func agentBinary(t *testing.T, cli string, globs ...string) string {
	t.Helper()
	for _, g := range globs {
		matches, err := filepath.Glob(filepath.Join(agentModules, g))
		if err != nil {
			t.Fatalf("glob %s: %v", g, err)
		}
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				abs, err := filepath.Abs(m)
				if err != nil {
					t.Fatal(err)
				}
				return abs
			}
		}
	}
	if os.Getenv(requireAgentEnv) == "1" {
		t.Fatalf("%s not installed under agents/node_modules (run npm ci --prefix agents)", cli)
	}
	t.Skipf("%s not installed: run npm ci --prefix agents to run this test", cli)
	return ""
}

// claudeBinary is Claude Code's native binary: the platform package's, or
// the one its postinstall copied over the wrapper's placeholder.
func claudeBinary(t *testing.T) string {
	t.Helper()
	return agentBinary(t, "Claude Code",
		"@anthropic-ai/claude-code-"+agentPlatform()+"/claude",
		"@anthropic-ai/claude-code-"+agentPlatform()+"-musl/claude",
		"@anthropic-ai/claude-code/bin/claude.exe")
}

// codexBinary is Codex's native binary from its platform package.
func codexBinary(t *testing.T) string {
	t.Helper()
	return agentBinary(t, "Codex CLI", "@openai/codex-"+agentPlatform()+"/vendor/*/bin/codex")
}

// agentEnv is a CLI's whole environment: nothing of this machine's but
// PATH, a fresh HOME (so no user config is read) and the given variables.
func agentEnv(home string, vars ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
	}, vars...)
}

// agentRun is one finished CLI run.
type agentRun struct {
	Stdout, Stderr string
	Err            error
}

// runAgent runs bin in dir with env and no stdin, bounded by
// agentRunTimeout; its whole process group (the shell commands it started
// included) is killed on timeout and when it exits.
func runAgent(t *testing.T, bin, dir string, env []string, args ...string) agentRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers; ESRCH when none
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = errors.Join(err, errors.New("killed after "+agentRunTimeout.String()))
	}
	run := agentRun{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
	if testing.Verbose() || err != nil {
		t.Logf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), args, err, tail(run.Stdout), tail(run.Stderr))
	}
	return run
}

// tail is the end of a CLI's output, enough to see why it failed.
func tail(s string) string {
	const n = 4000
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// agentProvider is the provider the agent tests route their model to.
const agentProvider = "agent-vendor"

// startAgentGateway runs the gateway with one more provider, of type typ,
// in front of the scripted vendor, serving public model id model (the
// vendor knows it as upstream), priced $1 in and $2 out per million tokens.
func startAgentGateway(t *testing.T, v *agentVendor, typ, model, upstream string) *gateway {
	t.Helper()
	base := v.URL
	if typ == "openai" {
		base += "/v1"
	}
	return startGateway(t, func(c *config.Config) {
		c.Providers = append(c.Providers, config.Provider{Name: agentProvider, Type: typ, BaseURL: base,
			APIKey: "sk-agent-upstream", Models: []config.ModelRef{{ID: model, Upstream: upstream}},
			Timeout: config.Duration(30 * time.Second), IdleTimeout: config.Duration(30 * time.Second)})
		in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
		// What OpenAI charges for a web search: Codex offers the tool on
		// every request, and the gateway passes on only what it can bill.
		c.Models = append(c.Models, config.ModelConfig{ID: model, Input: &in, Output: &out,
			ToolCalls: map[string]config.Amount{"web_search": config.Amount(money.Unit / 100)}})
	})
}

// checkAgentTurns asserts the vendor played the script: one call of the
// shell tool, then an answer that quotes the marker, each at path and for
// upstream.
func checkAgentTurns(t *testing.T, v *agentVendor, path, upstream string) {
	t.Helper()
	var called, answered int
	for i, turn := range v.Turns() {
		if turn.Path != path || turn.Model != upstream {
			t.Errorf("vendor request %d went to %s for %q, want %s for %q", i, turn.Path, turn.Model, path, upstream)
		}
		if turn.Tool != "" {
			called++
		}
		if turn.Answered {
			answered++
		}
	}
	if called != 1 || answered != 1 {
		t.Errorf("vendor called the shell tool %d times and saw its output %d times, want 1 and 1 (%d requests)",
			called, answered, len(v.Turns()))
	}
}

// checkAgentUsage stops the gateway and asserts one usage record per
// vendor request (and at least least), each a success on endpoint for
// model with the tokens the vendor reported and a charge.
func checkAgentUsage(t *testing.T, g *gateway, v *agentVendor, endpoint, model string, least int) {
	t.Helper()
	n := 0
	for _, rec := range g.usage() {
		if rec.Model != model {
			continue
		}
		n++
		if rec.Endpoint != endpoint || rec.Provider != agentProvider || rec.Status != 200 || rec.ErrorCode != "" ||
			rec.PromptTokens != agentInputTokens || rec.CachedTokens != agentCachedTokens ||
			rec.CompletionTokens != agentOutputTokens || rec.Cost <= 0 {
			t.Errorf("usage record: endpoint %q provider %q status %d error %q tokens %d (%d cached) + %d cost %d",
				rec.Endpoint, rec.Provider, rec.Status, rec.ErrorCode, rec.PromptTokens, rec.CachedTokens,
				rec.CompletionTokens, rec.Cost)
		}
	}
	if want := len(v.Turns()); n != want || n < least {
		t.Errorf("%d usage records for %s, want one for each of the vendor's %d requests (at least %d)", n, model, want, least)
	}
}
