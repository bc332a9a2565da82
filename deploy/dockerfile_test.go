package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Op   string // FROM, RUN, CMD, ... in upper case
	Args string
}

// dockerfile reads the instructions of the Dockerfile at path.
func dockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if body, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(trimmed)
		op, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{Op: strings.ToUpper(op), Args: strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

var goDirective = regexp.MustCompile(`(?m)^go (\d+\.\d+)`)

// TestDockerfile: a multi-stage build of a static ./cmd/modelgate with the
// Go the module asks for, run as a non-root user with the command, port
// and config path the Compose file and the Deployment use.
func TestDockerfile(t *testing.T) {
	ins := dockerfile(t, "Dockerfile")
	var froms, runs []string
	last := map[string]string{}
	for _, in := range ins {
		switch in.Op {
		case "FROM":
			froms = append(froms, in.Args)
		case "RUN":
			runs = append(runs, in.Args)
		}
		last[in.Op] = in.Args
	}
	if len(froms) < 2 {
		t.Fatalf("FROM %q: want a build stage and a runtime stage", froms)
	}
	mod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := goDirective.FindSubmatch(mod)
	if goVersion == nil || !strings.HasPrefix(froms[0], "golang:"+string(goVersion[1])) {
		t.Errorf("build stage FROM %s: want golang:%s, the go.mod's Go", froms[0], goVersion[1])
	}
	if final := froms[len(froms)-1]; !strings.HasPrefix(final, "gcr.io/distroless/static") && final != "scratch" {
		t.Errorf("runtime stage FROM %s: want a static base (distroless/static or scratch) for the CGO_ENABLED=0 binary", final)
	}
	if !slices.ContainsFunc(runs, func(r string) bool {
		return strings.Contains(r, "CGO_ENABLED=0") && strings.Contains(r, "go build") && strings.HasSuffix(r, "./cmd/modelgate")
	}) {
		t.Errorf("no RUN builds ./cmd/modelgate with CGO_ENABLED=0: %q", runs)
	}
	if u := last["USER"]; u == "" || strings.HasPrefix(u, "0") || strings.HasPrefix(u, "root") {
		t.Errorf("USER %q: want a non-root user", u)
	}

	var cmd, entry []string
	if err := json.Unmarshal([]byte(last["CMD"]), &cmd); err != nil {
		t.Errorf("CMD %s: want the JSON form: %v", last["CMD"], err)
	}
	if err := json.Unmarshal([]byte(last["ENTRYPOINT"]), &entry); err != nil || len(entry) != 1 || filepath.Base(entry[0]) != "modelgate" {
		t.Errorf("ENTRYPOINT %s: want [\"/path/to/modelgate\"]", last["ENTRYPOINT"])
	}
	f := loadCompose(t)
	for _, r := range f.replicas() {
		if !slices.Equal(f.Services[r].Command, cmd) {
			t.Errorf("compose %s: command %q, the image's CMD %q", r, f.Services[r].Command, cmd)
		}
	}
	if args := gatewayContainer(t, loadManifests(t).deployment).Args; !slices.Equal(args, cmd) {
		t.Errorf("Deployment args %q, the image's CMD %q", args, cmd)
	}

	var listen struct {
		Listen string `yaml:"listen"`
	}
	data, err := os.ReadFile("modelgate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &listen); err != nil {
		t.Fatal(err)
	}
	if _, port, _ := strings.Cut(listen.Listen, ":"); last["EXPOSE"] != port {
		t.Errorf("EXPOSE %s, but modelgate.yaml listens on %s", last["EXPOSE"], listen.Listen)
	}
}

// TestDockerignoreKeepsTheSources: the build context keeps what `go build`
// needs.
func TestDockerignoreKeepsTheSources(t *testing.T) {
	data, err := os.ReadFile("Dockerfile.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		pat := strings.TrimSpace(line)
		if pat == "" || strings.HasPrefix(pat, "#") {
			continue
		}
		for _, need := range []string{"go.mod", "go.sum", "cmd", "cmd/modelgate", "internal"} {
			if ok, _ := filepath.Match(pat, need); ok {
				t.Errorf("Dockerfile.dockerignore: %q leaves %s out of the build", pat, need)
			}
		}
	}
}
