//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGHUPReloads runs `serve`, rewrites its config file and sends
// SIGHUP: the new providers are applied; then a broken file is refused
// with the running config kept, and SIGTERM still stops the server cleanly.
func TestSIGHUPReloads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildModelgate(t, dir)
	cfg := filepath.Join(dir, "modelgate.yaml")
	head := "listen: 127.0.0.1:0\ndatabase: sqlite:" + filepath.Join(dir, "mg.db") + "\nlog: {format: json}\n"
	write := func(providers string) {
		if err := os.WriteFile(cfg, []byte(head+providers), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("providers:\n  - {name: demo, type: demo, models: [demo-chat]}\n")
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	await := func(what string) string {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the server exited before %q", what)
				}
				if strings.Contains(l, what) {
					return l
				}
			case <-deadline:
				t.Fatalf("no log line with %q", what)
			}
		}
	}
	await(`"msg":"modelgate listening"`)

	write("providers:\n  - {name: demo, type: demo, models: [demo-chat, demo-echo]}\n  - {name: demo2, type: demo, models: [demo-chat]}\n")
	_ = cmd.Process.Signal(syscall.SIGHUP)
	if l := await(`"msg":"config reloaded"`); !strings.Contains(l, `"providers":2`) || !strings.Contains(l, `"models":2`) {
		t.Errorf("reload line %s: want 2 providers, 2 models", l)
	}

	write("providers:\n  - {name: demo, type: nope}\n")
	_ = cmd.Process.Signal(syscall.SIGHUP)
	await("config reload failed")

	_ = cmd.Process.Signal(syscall.SIGTERM)
	await(`"msg":"stopped cleanly"`)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}
