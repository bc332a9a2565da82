package main

// Child processes: building modelgate, starting the roles and modelgate in
// process groups of their own, reading their memory and CPU from /proc, and
// stopping every one of them however the harness ends.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is one started process.
type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string        // its stderr; stdout, unless read, goes beside it in .stdout
	done    chan struct{} // closed when it has exited
	err     error         // Wait's result, valid after done
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// children remembers every started process so that all can be stopped.
type children struct {
	mu   sync.Mutex
	list []*child
}

// start runs name with args, and env added to the harness's environment,
// in a new process group that is killed if the harness dies, in the
// directory of its log (the temp dir: whatever a child makes of relative
// paths, such as modelgate's default data directory next to a PostgreSQL
// database, stays there). With readAddr, the child's first stdout line
// (its listen address) is returned.
func (cs *children) start(name, logPath string, readAddr bool, env []string, bin string, args ...string) (*child, string, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, "", err
	}
	defer logf.Close() // the child has its own copy
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(logPath)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stdout io.Reader
	if readAddr {
		if stdout, err = cmd.StdoutPipe(); err != nil {
			return nil, "", err
		}
	} else {
		outf, err := os.Create(logPath + ".stdout")
		if err != nil {
			return nil, "", err
		}
		defer outf.Close()
		cmd.Stdout = outf
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	cs.mu.Lock()
	cs.list = append(cs.list, c)
	cs.mu.Unlock()
	if !readAddr {
		go func() { c.err = cmd.Wait(); close(c.done) }()
		return c, "", nil
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
		_, _ = io.Copy(io.Discard, stdout) // keep reading until it exits
		c.err = cmd.Wait()
		close(c.done)
	}()
	select {
	case addr := <-line:
		if addr == "" {
			return c, "", fmt.Errorf("%s exited before listening%s", name, logTail(logPath))
		}
		return c, addr, nil
	case <-time.After(15 * time.Second):
		return c, "", fmt.Errorf("%s did not report its address within 15s%s", name, logTail(logPath))
	}
}

// stop sends SIGTERM to the child's process group, then SIGKILL after
// grace, and waits for it to exit.
func (c *child) stop(grace time.Duration) {
	if c.exited() {
		return
	}
	_ = syscall.Kill(-c.pid(), syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = syscall.Kill(-c.pid(), syscall.SIGKILL)
		<-c.done
	}
}

// stopAll stops every child, newest first. It is safe to call twice.
func (cs *children) stopAll() {
	cs.mu.Lock()
	list := cs.list
	cs.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		list[i].stop(10 * time.Second)
	}
}

// buildModelgate compiles ./cmd/modelgate of the module in src ("": the
// current directory) into dir, with go build's -overlay file when not "".
func buildModelgate(ctx context.Context, src, dir, overlay string) (string, error) {
	out := dir + "/modelgate"
	args := []string{"build", "-o", out}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/modelgate")...)
	cmd.Dir = src
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/modelgate (run the harness from the repository root): %w", err)
	}
	return out, nil
}

// createKeys makes n funded accounts with a key each and returns the keys'
// secrets: the account "bench" for n = 1, else "bench-000" and on.
func createKeys(ctx context.Context, bin, config string, n int) ([]string, error) {
	if n > 1 {
		progress(fmt.Sprintf("creating %d accounts and keys", n))
	}
	keys := make([]string, n)
	for i := range keys {
		account := "bench"
		if n > 1 {
			account = fmt.Sprintf("bench-%03d", i)
		}
		key, err := createKey(ctx, bin, config, account)
		if err != nil {
			return nil, err
		}
		keys[i] = key
	}
	return keys, nil
}

// createKey runs `modelgate keys create` for account, credits it with
// enough for any run (billing stays on: gpt-4o-mini is priced), and
// returns the printed secret.
func createKey(ctx context.Context, bin, config, account string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "keys", "create", "--group", "default", "--account", account, "--name", "bench", "--config", config)
	cmd.Dir = filepath.Dir(config) // as modelgate's (see start)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("modelgate keys create: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	key := strings.TrimSpace(stdout.String())
	if key == "" || strings.ContainsAny(key, " \n") {
		return "", fmt.Errorf("modelgate keys create printed %q, want one secret", stdout.String())
	}
	stderr.Reset()
	credit := exec.CommandContext(ctx, bin, "accounts", "credit", account, "1000000", "--config", config)
	credit.Dir = cmd.Dir
	credit.Stderr = &stderr
	if err := credit.Run(); err != nil {
		return "", fmt.Errorf("modelgate accounts credit: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return key, nil
}

// freePort returns a loopback address that was free a moment ago.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitHealthy polls url until it answers 200, the child exits, or 20s pass.
func waitHealthy(ctx context.Context, c *child, url string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if c.exited() {
			return fmt.Errorf("%s exited (%v)%s", c.name, c.err, logTail(c.logPath))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not healthy at %s after 20s (last: %v)%s", c.name, url, err, logTail(c.logPath))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logTail returns the last lines of a log file, formatted to follow an
// error message, or "" when the log is empty.
func logTail(path string) string {
	lines := logLines(path, 15)
	if len(lines) == 0 {
		return ""
	}
	return "\n  " + path + ":\n    " + strings.Join(lines, "\n    ")
}

// logLines returns at most the last n lines of a file.
func logLines(path string, n int) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// peakRSS returns a process's peak resident set size (VmHWM) in bytes.
func peakRSS(pid int) (int64, error) { return procStatus(pid, "VmHWM:") }

// procStatus returns a kB figure of /proc/PID/status (field is its name
// with the colon, e.g. "VmRSS:") in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no " + field + " in /proc/" + strconv.Itoa(pid) + "/status")
}

// clockTick is USER_HZ, the unit of /proc/PID/stat times; 100 on every
// Linux architecture Go supports.
const clockTick = 100

// cpuTime returns the user+system CPU time a process has used so far, or 0
// if it cannot be read. pid 0 means the harness itself.
func cpuTime(pid int) time.Duration {
	p := "self"
	if pid != 0 {
		p = strconv.Itoa(pid)
	}
	b, err := os.ReadFile("/proc/" + p + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are
	// fields 14 and 15 of the whole line.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTick
}

// cpuStat is the machine-wide CPU time from /proc/stat, in clock ticks.
type cpuStat struct{ busy, idle, steal int64 }

func machineCPU() cpuStat {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuStat{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return cpuStat{}
	}
	var v [8]int64
	for i := range v {
		v[i], _ = strconv.ParseInt(f[i+1], 10, 64)
	}
	return cpuStat{busy: v[0] + v[1] + v[2] + v[5] + v[6], idle: v[3] + v[4], steal: v[7]}
}

// idleSteal returns the share of the machine's CPU time between a and b
// that was idle and that the hypervisor stole, in percent.
func idleSteal(a, b cpuStat) (idle, steal float64) {
	total := float64((b.busy - a.busy) + (b.idle - a.idle) + (b.steal - a.steal))
	if total <= 0 {
		return 0, 0
	}
	return 100 * float64(b.idle-a.idle) / total, 100 * float64(b.steal-a.steal) / total
}

// syscalls returns how many read and write system calls a process has made
// (syscr + syscw from /proc/PID/io), or 0 if unknown.
func syscalls(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	var n int64
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if ok && (k == "syscr" || k == "syscw") {
			x, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			n += x
		}
	}
	return n
}
