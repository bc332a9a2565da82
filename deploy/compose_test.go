package deploy

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The subset of the Compose file format docker-compose.yml uses, decoded
// with KnownFields so a misspelt key fails here rather than being ignored.
type composeFile struct {
	Name       string                    `yaml:"name"`
	XModelgate yaml.Node                 `yaml:"x-modelgate"` // the replicas' shared settings, merged into each
	Services   map[string]composeService `yaml:"services"`
	Volumes    map[string]*struct{}      `yaml:"volumes"`
}

type composeService struct {
	Image string `yaml:"image"`
	Build *struct {
		Context    string `yaml:"context"`
		Dockerfile string `yaml:"dockerfile"`
	} `yaml:"build"`
	Command         []string          `yaml:"command"`
	Environment     map[string]string `yaml:"environment"`
	DependsOn       yaml.Node         `yaml:"depends_on"` // a list of names, or names → {condition}
	Restart         string            `yaml:"restart"`
	StopGracePeriod string            `yaml:"stop_grace_period"`
	Ulimits         map[string]struct {
		Soft int `yaml:"soft"`
		Hard int `yaml:"hard"`
	} `yaml:"ulimits"`
	Volumes     []string `yaml:"volumes"`
	Ports       []string `yaml:"ports"`
	Healthcheck *struct {
		Test     []string `yaml:"test"`
		Interval string   `yaml:"interval"`
		Timeout  string   `yaml:"timeout"`
		Retries  int      `yaml:"retries"`
	} `yaml:"healthcheck"`
}

// loadCompose decodes docker-compose.yml strictly.
func loadCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f composeFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return f
}

// replicas are the names of the services that run the gateway: those built
// from deploy/Dockerfile.
func (f composeFile) replicas() []string {
	var out []string
	for name, s := range f.Services {
		if s.Build != nil && s.Build.Dockerfile == "deploy/Dockerfile" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// dependsOn maps the services s waits for to their condition
// ("service_started" for the list form).
func (s composeService) dependsOn() map[string]string {
	out := map[string]string{}
	n := s.DependsOn
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			out[c.Value] = "service_started"
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			var v struct {
				Condition string `yaml:"condition"`
			}
			_ = n.Content[i+1].Decode(&v)
			out[n.Content[i].Value] = v.Condition
		}
	}
	return out
}

// mounts maps a service's mount targets to their sources (a named volume,
// or a path relative to this folder for a bind mount).
func (s composeService) mounts() map[string]string {
	out := map[string]string{}
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 {
			out[parts[1]] = parts[0]
		}
	}
	return out
}

var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[-?])?([^}]*)\}`)

// interpolate does what Compose does to a value in an empty environment:
// ${VAR:-default} and ${VAR-default} become default, ${VAR} nothing, $$ a
// $, and ${VAR:?message} is an error (a variable the user must set). The
// test never depends on the variables of the machine it runs on.
func interpolate(s string) (string, error) {
	var err error
	s = strings.ReplaceAll(s, "$$", "\x00")
	s = composeVar.ReplaceAllStringFunc(s, func(ref string) string {
		m := composeVar.FindStringSubmatch(ref)
		switch {
		case strings.HasSuffix(m[2], "?"):
			err = fmt.Errorf("%s must be set: %s", m[1], m[3])
		case m[2] == "" && m[3] != "":
			err = fmt.Errorf("%q is not a variable reference", ref)
		}
		return m[3]
	})
	return strings.ReplaceAll(s, "\x00", "$"), err
}

// interpolated is interpolate for a value that must need no variable set.
func interpolated(t *testing.T, s string) string {
	t.Helper()
	v, err := interpolate(s)
	if err != nil {
		t.Errorf("docker-compose.yml: %v: the stack must start with no variable set", err)
	}
	return v
}

// TestComposeReplicas checks the replicas against the gateway's config as
// the project's loader reads it with the environment Compose gives them:
// the same config and shared services for all, a journal volume of each
// one's own, a shared media volume, and time to drain on `docker compose stop`.
func TestComposeReplicas(t *testing.T) {
	f := loadCompose(t)
	reps := f.replicas()
	if len(reps) < 2 {
		t.Fatalf("gateway services %v: want several replicas", reps)
	}
	first := f.Services[reps[0]]
	if _, err := os.Stat(filepath.Join(first.Build.Context, first.Build.Dockerfile)); err != nil {
		t.Errorf("build: %v", err)
	}
	if len(first.Command) != 3 || first.Command[0] != "serve" || first.Command[1] != "--config" {
		t.Fatalf("command %q: want serve --config FILE", first.Command)
	}
	file := first.Command[2]
	env := map[string]string{}
	for k, v := range first.Environment {
		env[k] = interpolated(t, v)
	}
	if v, ok := env["MODELGATE_CONFIG"]; ok && v != file {
		t.Errorf("MODELGATE_CONFIG %s (what the CLI in the container reads), but serve reads %s", v, file)
	}
	src, ok := first.mounts()[file]
	if !ok {
		t.Fatalf("%s: --config %s is not mounted", reps[0], file)
	}
	cfg := loadGateway(t, src, env)

	journals := map[string]string{}
	var media string
	dir := filepath.Dir(cfg.Images.Dir) // the folder a shared volume holds
	if filepath.Dir(cfg.Video.Dir) != dir {
		t.Errorf("images.dir %s and video.dir %s are not in one folder", cfg.Images.Dir, cfg.Video.Dir)
	}
	for _, name := range reps {
		s := f.Services[name]
		if !slices.Equal(s.Command, first.Command) || !mapsEqual(s.Environment, first.Environment) || s.mounts()[file] != src {
			t.Errorf("%s: command, environment or config file differ from %s's", name, reps[0])
		}
		m := s.mounts()
		j, ok := m[cfg.Usage.JournalDir]
		switch {
		case !ok:
			t.Errorf("%s: usage.journal_dir %s is not a volume", name, cfg.Usage.JournalDir)
		case f.Volumes == nil || !hasKey(f.Volumes, j):
			t.Errorf("%s: journal volume %q is not a named volume", name, j)
		case journals[j] != "":
			t.Errorf("%s and %s share journal volume %s: a journal folder belongs to one process", journals[j], name, j)
		}
		journals[j] = name
		switch v, ok := m[dir]; {
		case !ok:
			t.Errorf("%s: %s (images and videos) is not a volume: another replica could not serve their links", name, dir)
		case media != "" && v != media:
			t.Errorf("%s: media volume %s, others %s: every replica must serve every link", name, v, media)
		default:
			media = v
		}
		grace, err := time.ParseDuration(s.StopGracePeriod)
		if need := time.Duration(cfg.ShutdownTimeout) + 5*time.Second; err != nil || grace < need {
			t.Errorf("%s: stop_grace_period %q: the drain (shutdown_timeout %s) and writing the queued records need %s",
				name, s.StopGracePeriod, cfg.ShutdownTimeout, need)
		}
		deps := s.dependsOn()
		for _, svc := range []string{"postgres", "redis"} {
			if deps[svc] != "service_healthy" {
				t.Errorf("%s: depends_on %s is %q, want service_healthy (serve exits when either does not answer)", name, svc, deps[svc])
			}
		}
	}
	checkSharedServices(t, f, env)
	checkLoadBalancer(t, f, reps, cfg.Listen, cfg.MaxRequestBytes, maxProviderTimeout(cfg), env["MODELGATE_PUBLIC_URL"])
}

// checkSharedServices: the database and Redis URLs the replicas get name
// the Compose services, with the credentials the postgres service sets.
func checkSharedServices(t *testing.T, f composeFile, env map[string]string) {
	t.Helper()
	for _, svc := range []string{"postgres", "redis"} {
		if s, ok := f.Services[svc]; !ok || s.Healthcheck == nil {
			t.Errorf("service %s is missing or has no healthcheck", svc)
		}
	}
	db, err := url.Parse(env["MODELGATE_DATABASE_URL"])
	if err != nil {
		t.Fatalf("MODELGATE_DATABASE_URL: %v", err)
	}
	pg := f.Services["postgres"].Environment
	pass, _ := db.User.Password()
	if db.Scheme != "postgres" || db.Hostname() != "postgres" || db.Port() != "5432" ||
		db.User.Username() != pg["POSTGRES_USER"] || pass != interpolated(t, pg["POSTGRES_PASSWORD"]) ||
		strings.TrimPrefix(db.Path, "/") != pg["POSTGRES_DB"] || db.Query().Get("sslmode") != "disable" {
		t.Errorf("MODELGATE_DATABASE_URL %s does not match the postgres service %v", db.Redacted(), pg)
	}
	r, err := url.Parse(env["MODELGATE_REDIS_URL"])
	if err != nil || r.Scheme != "redis" || r.Hostname() != "redis" {
		t.Errorf("MODELGATE_REDIS_URL %q: want redis://redis:6379/N", env["MODELGATE_REDIS_URL"])
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func TestInterpolate(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"postgres://u:${PW:-secret}@h/db", "postgres://u:secret@h/db", true},
		{"${A}x", "x", true},
		{"${A-b}", "b", true},
		{"pa$$word", "pa$word", true},
		{"${A:?must be set}", "must be set", false},
		{"${A?must be set}", "must be set", false},
		{"${A:x}", ":x", false},
	} {
		got, err := interpolate(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("interpolate(%q) = %q, %v; want %q (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
