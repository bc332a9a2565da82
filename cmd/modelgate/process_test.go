package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var addrLine = regexp.MustCompile(`addr=http://([0-9.:]+)/v1`)

// serveProcess starts `modelgate serve` in dir (with zero configuration,
// which keeps its data in ./modelgate-data, unless args say otherwise) and
// returns its stdout and base URL once it listens.
func serveProcess(t *testing.T, bin, dir string, args ...string) (*exec.Cmd, io.Reader, string) {
	t.Helper()
	if len(args) == 0 {
		args = []string{"--listen", "127.0.0.1:0"}
	}
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MODELGATE_CONFIG=")
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := addrLine.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return cmd, stdout, "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not report its address")
		return nil, nil, ""
	}
}

func chatPost(secret, base, body string) (*http.Response, error) {
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// TestServeProcess runs the real binary with zero configuration: the first
// start prints a key, SIGTERM exits 0, the second start prints nothing, the
// key works, a stream in flight during SIGTERM completes, and every request
// is in `modelgate usage` afterwards.
func TestServeProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildModelgate(t, dir)

	cmd, stdout, _ := serveProcess(t, bin, dir)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	first, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	secret := regexp.MustCompile(`sk-mg-[0-9A-Za-z]+`).FindString(string(first))
	if secret == "" {
		t.Fatalf("first start printed no key:\n%s", first)
	}

	cmd, stdout, base := serveProcess(t, bin, dir)
	resp, err := chatPost(secret, base, `{"model":"demo-chat","messages":[{"role":"user","content":"Hello!"}]}`)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("chat with the first-start key: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = chatPost(secret, base, `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"Hello!"}]}`)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", resp, err)
	}
	rd := bufio.NewReader(resp.Body)
	line, _ := rd.ReadString('\n')
	_ = cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(rd)
	resp.Body.Close()
	if !strings.HasPrefix(line, "data: ") || !strings.HasSuffix(string(rest), "data: [DONE]\n\n") {
		t.Errorf("stream across SIGTERM: %q ... %q", line, rest)
	}
	second, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("second exit: %v", err)
	}
	if strings.Contains(string(second), "sk-mg-") {
		t.Error("the second start printed a key again")
	}

	usage := exec.Command(bin, "usage", "--json", "--account", "default")
	usage.Dir = dir
	usage.Env = cmd.Env
	out, err := usage.Output()
	if err != nil {
		t.Fatalf("usage: %v", err)
	}
	var recs []usageJSON
	if err := json.Unmarshal(out, &recs); err != nil || len(recs) != 2 {
		t.Fatalf("usage records: %v %s", err, out)
	}
	for _, r := range recs {
		if r.Status != 200 || r.Model != "demo-chat" || r.CompletionTokens == 0 || r.Cost != "0.000000" {
			t.Errorf("record %+v", r)
		}
	}
}

// buildModelgate builds the binary into dir for a test that runs it.
func buildModelgate(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "modelgate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
