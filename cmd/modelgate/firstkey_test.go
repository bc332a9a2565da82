package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var secretRe = regexp.MustCompile(`sk-mg-[0-9A-Za-z]{32}`)

// runFirstStart starts `serve` on a fresh database with JSON logs, stops it
// with SIGTERM once it listens, and returns what it wrote to stdout and
// stderr; with merged, both go to one pipe (as with 2>&1 or a container's
// log) and the whole output is returned as stdout.
func runFirstStart(t *testing.T, bin string, merged bool) (stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "modelgate.yaml")
	conf := "listen: 127.0.0.1:0\ndatabase: sqlite:" + filepath.Join(dir, "mg.db") +
		"\nlog: {format: json}\nproviders:\n  - {name: demo, type: demo}\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Dir = dir
	outR, outW, _ := os.Pipe()
	errR, errW := outR, outW
	if !merged {
		errR, errW, _ = os.Pipe()
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	outW.Close()
	if !merged {
		errW.Close()
	}

	// Read the log stream until the listening line, then stop the server.
	var errBuf strings.Builder
	listening := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		rd := bufio.NewReader(errR)
		signalled := false
		for {
			line, err := rd.ReadString('\n')
			errBuf.WriteString(line)
			if !signalled && strings.Contains(line, `"msg":"modelgate listening"`) {
				signalled = true
				close(listening)
			}
			if err != nil {
				return
			}
		}
	}()
	var outBuf []byte
	outDone := make(chan struct{})
	if !merged {
		go func() { outBuf, _ = io.ReadAll(outR); close(outDone) }()
	} else {
		close(outDone)
	}
	select {
	case <-listening:
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not report listening:\n%s", errBuf.String())
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	<-done
	<-outDone
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if merged {
		return errBuf.String(), ""
	}
	return string(outBuf), errBuf.String()
}

// splitBlock separates the first-start block (from its opening rule line
// to its closing one) from the other lines.
func splitBlock(t *testing.T, out string) (block string, others []string) {
	t.Helper()
	var b strings.Builder
	in, blocks := false, 0
	for _, line := range strings.SplitAfter(out, "\n") {
		if line == "" {
			continue
		}
		switch {
		case !in && strings.HasPrefix(line, "=====") && strings.Contains(line, "first start"):
			in, blocks = true, blocks+1
			b.WriteString(line)
		case in:
			b.WriteString(line)
			if strings.HasPrefix(line, "=====") && strings.Trim(line, "=\n") == "" {
				in = false
			}
		default:
			others = append(others, line)
		}
	}
	if blocks != 1 || in {
		t.Fatalf("want one closed first-start block, found %d (open %v) in:\n%s", blocks, in, out)
	}
	return b.String(), others
}

// TestFirstStartKeyJSONLogs: with log.format json the first-start key is
// printed once, on stdout, as one framed block and never in a log record;
// stderr holds only JSON lines; and on a merged stream every line outside
// the block is still a JSON log line.
func TestFirstStartKeyJSONLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildModelgate(t, t.TempDir())
	checkJSONLines := func(what string, lines []string) {
		t.Helper()
		for _, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Errorf("%s: not a JSON log line: %q", what, l)
			}
			if strings.Contains(l, "sk-mg-") {
				t.Errorf("%s: a log line holds the key: %q", what, l)
			}
		}
	}

	stdout, stderr := runFirstStart(t, bin, false)
	block, rest := splitBlock(t, stdout)
	if len(rest) != 0 {
		t.Errorf("stdout holds more than the block: %q", rest)
	}
	if keys := secretRe.FindAllString(block, -1); len(keys) != 2 || keys[0] != keys[1] {
		t.Errorf("the block should show one key (twice: alone and in the curl example):\n%s", block)
	}
	logLines := strings.SplitAfter(strings.TrimSuffix(stderr, "\n"), "\n")
	checkJSONLines("stderr", logLines)
	if !strings.Contains(stderr, `"msg":"first start: created account and API key`) {
		t.Errorf("no first-start log record:\n%s", stderr)
	}

	merged, _ := runFirstStart(t, bin, true)
	block, rest = splitBlock(t, merged)
	if !secretRe.MatchString(block) {
		t.Errorf("merged: no key in the block:\n%s", block)
	}
	checkJSONLines("merged stream", rest)
}
