package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"go.yaml.in/yaml/v3"
)

func TestDefaultValidates(t *testing.T) {
	c := Default()
	if ps := c.Validate(); len(ps) != 0 {
		t.Fatalf("Default().Validate() = %q, want none", ps)
	}
	if c.Listen != "127.0.0.1:8080" || c.Database != "sqlite:./modelgate-data/modelgate.db" || c.Path != "" {
		t.Errorf("Default() = %+v", c)
	}
	if c.MaxRequestBytes != 20<<20 || c.ShutdownTimeout != Duration(30*time.Second) || c.AuthCacheTTL != Duration(time.Second) || c.GCPercent != 200 || c.MemoryLimit != 512<<20 {
		t.Errorf("Default() limits = %d %v %v, gc_percent %d, memory_limit %d", c.MaxRequestBytes, c.ShutdownTimeout, c.AuthCacheTTL, c.GCPercent, c.MemoryLimit)
	}
	if c.WriteTimeout != Duration(time.Minute) || c.DrainTimeout != Duration(15*time.Second) {
		t.Errorf("Default() write_timeout %v, drain_timeout %v", c.WriteTimeout, c.DrainTimeout)
	}
	if c.Log.Level != "info" || c.Log.Format != "text" || !c.Log.RequestsEnabled() {
		t.Errorf("Default().Log = %+v", c.Log)
	}
	if c.Usage.BatchSize != 8192 || c.Usage.FlushInterval != Duration(time.Second) {
		t.Errorf("Default().Usage = %+v", c.Usage)
	}
	want := []Provider{{Name: "demo", Type: "demo", Weight: 1, Timeout: Duration(10 * time.Minute), IdleTimeout: Duration(2 * time.Minute)}}
	if !reflect.DeepEqual(c.Providers, want) {
		t.Errorf("Default().Providers = %+v, want %+v", c.Providers, want)
	}
	if !reflect.DeepEqual(c.Groups, map[string]Group{"default": {Models: []string{"*"}, PriceRatio: Ratio(money.PPM)}}) {
		t.Errorf("Default().Groups = %+v", c.Groups)
	}
	if c.Billing.Currency != "USD" || c.Billing.DemoCredit != Amount(5*money.Unit) || c.Models != nil {
		t.Errorf("Default().Billing = %+v, Models = %v", c.Billing, c.Models)
	}
	if d := Default(); &d.Providers[0] == &c.Providers[0] {
		t.Error("Default() must return a fresh config each time")
	}
}

func TestApplyDefaultsIdempotent(t *testing.T) {
	c := &Config{Providers: []Provider{{Name: "a", Type: "openai", Models: []ModelRef{{ID: "m"}, {ID: "n", Upstream: "n-v2"}}}}}
	c.ApplyDefaults()
	once := *c
	once.Providers = append([]Provider(nil), c.Providers...)
	c.ApplyDefaults()
	if !reflect.DeepEqual(&once, c) {
		t.Errorf("second ApplyDefaults changed the config:\n%+v\n%+v", once, *c)
	}
	if got := c.Providers[0].Models; got[0].Upstream != "m" || got[1].Upstream != "n-v2" {
		t.Errorf("Upstream defaults = %+v", got)
	}
}

func TestValidateBuiltConfig(t *testing.T) {
	// A config built in code has no source lines: problems fall back to the
	// Line fields, or 0.
	c := Default()
	c.Providers = append(c.Providers, Provider{Name: "demo", Type: "demo", Weight: -1, Line: 42})
	c.Groups["Bad"] = Group{Models: []string{"*"}, Line: 50}
	c.Listen = "nope"
	c.ApplyDefaults()
	ps := c.Validate()
	checkProblems(t, ps, []want{
		{0, false, `listen: "nope" is not host:port`},
		{42, false, "duplicate name"},
		{42, false, "weight must be at least 1"},
		{50, false, `group "Bad": name must match`},
	})
}

func TestDatabaseKind(t *testing.T) {
	tests := []struct {
		dsn, kind, target, err string
	}{
		{dsn: "sqlite:./modelgate-data/modelgate.db", kind: "sqlite", target: "./modelgate-data/modelgate.db"},
		{dsn: "sqlite:x.db", kind: "sqlite", target: "x.db"},
		{dsn: "sqlite:///abs/x.db", kind: "sqlite", target: "/abs/x.db"},
		{dsn: "sqlite:/abs/x.db", kind: "sqlite", target: "/abs/x.db"},
		{dsn: "sqlite::memory:", kind: "sqlite", target: ":memory:"},
		{dsn: "postgres://u:p@host:5432/db?sslmode=disable", kind: "postgres", target: "postgres://u:p@host:5432/db?sslmode=disable"},
		{dsn: "postgresql://host/db", kind: "postgres", target: "postgresql://host/db"},
		{dsn: "", err: "no database DSN"},
		{dsn: "sqlite:", err: "needs a file path"},
		{dsn: "sqlite://relative.db", err: "absolute path"},
		{dsn: "mysql://root:secret@host/db", err: `unsupported database type "mysql"`},
		{dsn: "./modelgate.db", err: "not a supported DSN"},
	}
	for _, tt := range tests {
		c := &Config{Database: tt.dsn}
		kind, target, err := c.DatabaseKind()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("DatabaseKind(%q) error = %v, want %q", tt.dsn, err, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("DatabaseKind(%q) error repeats the password: %v", tt.dsn, err)
			}
			continue
		}
		if err != nil || kind != tt.kind || target != tt.target {
			t.Errorf("DatabaseKind(%q) = %q, %q, %v; want %q, %q", tt.dsn, kind, target, err, tt.kind, tt.target)
		}
	}
}

func TestDurationYAML(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{in: "30s", want: 30 * time.Second},
		{in: "2m", want: 2 * time.Minute},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "1h30m", want: 90 * time.Minute},
		{in: "45", want: 45 * time.Second},
		{in: `"45"`, want: 45 * time.Second},
		{in: "0", want: 0},
		{in: "-5s", want: -5 * time.Second},
		{in: "1.5", err: true},
		{in: "soon", err: true},
		{in: "[1]", err: true},
		{in: "99999999999999999999", err: true},
	}
	for _, tt := range tests {
		var v struct {
			D Duration `yaml:"d"`
		}
		err := yaml.Unmarshal([]byte("d: "+tt.in), &v)
		if (err != nil) != tt.err || (!tt.err && time.Duration(v.D) != tt.want) {
			t.Errorf("%s: got %v, %v; want %v (error %v)", tt.in, time.Duration(v.D), err, tt.want, tt.err)
		}
	}
	out, err := yaml.Marshal(struct{ D Duration }{Duration(90 * time.Second)})
	if err != nil || string(out) != "d: 1m30s\n" {
		t.Errorf("Marshal = %q, %v", out, err)
	}
}

func TestModelRef(t *testing.T) {
	if got := (ModelRef{ID: "a"}).UpstreamID(); got != "a" {
		t.Errorf("UpstreamID without Upstream = %q", got)
	}
	if got := (ModelRef{ID: "a", Upstream: "b"}).UpstreamID(); got != "b" {
		t.Errorf("UpstreamID = %q", got)
	}
	var refs []ModelRef
	err := yaml.Unmarshal([]byte("- a\n- {id: b, upstream: c}\n- id: d\n"), &refs)
	want := []ModelRef{{ID: "a", Line: 1}, {ID: "b", Upstream: "c", Line: 2}, {ID: "d", Line: 3}}
	if err != nil || !reflect.DeepEqual(refs, want) {
		t.Errorf("refs = %+v, %v; want %+v", refs, err, want)
	}
	if err := yaml.Unmarshal([]byte("- [a]\n"), &refs); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("sequence as model: err = %v", err)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Line: 12, Message: "bad"}, "line 12: bad"},
		{Problem{Line: 12, Warning: true, Message: "odd"}, "warning: line 12: odd"},
		{Problem{Message: "bad"}, "bad"},
		{Problem{Warning: true, Message: "odd"}, "warning: odd"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
	if HasErrors(nil) || HasErrors([]Problem{{Warning: true}}) || !HasErrors([]Problem{{Warning: true}, {}}) {
		t.Error("HasErrors is wrong")
	}
}

func TestClosestKey(t *testing.T) {
	fields := yamlFields(reflect.TypeFor[Provider]())
	tests := map[string]string{
		"base_ur": "base_url", "modles": "models", "baseURL": "base_url", "api-key": "api_key",
		"idle_timout": "idle_timeout", "x": "", "completely_different": "",
	}
	for in, want := range tests {
		if got := closest(in, fields); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMessagesForwardHeaders(t *testing.T) {
	for _, tc := range []struct {
		headers []string
		bad     bool
	}{
		{[]string{"x-app", "X-Claude-Code-Session-Id"}, false},
		{nil, false},
		{[]string{"x-api-key"}, true},
		{[]string{"Authorization"}, true},
		{[]string{"bad header"}, true},
		{[]string{""}, true},
	} {
		c := &Config{Messages: Messages{ForwardHeaders: tc.headers}}
		v := &validator{c: c}
		v.messagesSettings()
		if got := len(v.problems) > 0; got != tc.bad {
			t.Errorf("%q: problems %v, want bad=%t", tc.headers, v.problems, tc.bad)
		}
	}
}
