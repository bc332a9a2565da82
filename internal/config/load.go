package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Load reads the config file at path, expands ${VAR} and ${VAR:-default} in
// its string values through getenv (callers pass a wrapper around
// os.LookupEnv; nil means an empty environment), applies defaults and
// validates it. The error is non-nil only when the file cannot be read or is
// not YAML at all; everything else, from type errors to unknown keys, comes
// back as Problems sorted by line, and callers must refuse to start when
// HasErrors reports any. The returned Config is never nil when err is nil.
//
// Options change what is read: see Unresolved.
func Load(path string, getenv func(string) (string, bool), opts ...LoadOption) (*Config, []Problem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	c, problems, err := parse(data, getenv, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %s: %w", path, err)
	}
	c.Path = path
	return c, problems, nil
}

// LoadOption changes how Load reads a file.
type LoadOption func(*loadOptions)

type loadOptions struct {
	unresolved []string
}

// Unresolved leaves the ${VAR} references of the settings at paths (dotted
// key paths like payments.stripe.secret_key; a * segment matches any list
// index or key) as written: their variables are not read, so an unset one
// is no problem, and the setting holds the reference's text. A command that
// never uses those settings loads with it, so it runs without their secrets
// in its environment; the gateway itself never does.
func Unresolved(paths ...string) LoadOption {
	return func(o *loadOptions) { o.unresolved = append(o.unresolved, paths...) }
}

// Secrets returns the settings that hold the secrets of the payments and of the
// console's sign-in providers, which only a serving gateway uses: the
// commands that neither take payments nor sign anyone in load the file with
// Unresolved(Secrets()...).
func Secrets() []string {
	return []string{"payments.stripe.secret_key", "payments.stripe.webhook_secret",
		"console.oauth.*.client_id", "console.oauth.*.client_secret"}
}

// parse does Load's work on the file's bytes.
func parse(data []byte, getenv func(string) (string, bool), opts ...LoadOption) (*Config, []Problem, error) {
	var o loadOptions
	for _, opt := range opts {
		opt(&o)
	}
	root, problems, err := parseDocument(data)
	if err != nil {
		return nil, nil, err
	}
	c := &Config{src: newSource()}
	if root != nil && root.Kind != yaml.MappingNode {
		problems = append(problems, Problem{Line: root.Line,
			Message: "the config file must be a mapping of settings (key: value), like listen: 127.0.0.1:8080"})
		c.ApplyDefaults()
		return c, sortProblems(problems), nil
	}

	// Order matters: expand first so the decoder and validator see final
	// values; walk the schema after expansion so it knows which values came
	// from the environment.
	env := newEnvExpander(getenv, o.unresolved)
	walker := &schemaWalker{src: c.src, expanded: env.expanded}
	var decodeProblems []Problem
	if root != nil {
		env.expandTree(root, "")
		walker.walk(root, reflect.TypeFor[Config](), "")
		decodeProblems = decode(root, c, env.expanded)
	}
	problems = append(problems, env.problems...)
	problems = append(problems, walker.problems...)
	problems = append(problems, decodeProblems...)

	c.fillLines()
	c.ApplyDefaults()

	// A value that failed to parse or expand is already reported; checks on
	// its zero value would only repeat the same mistake in other words.
	reported := map[int]bool{}
	for _, p := range slices.Concat(env.problems, decodeProblems) {
		if !p.Warning {
			reported[p.Line] = true
		}
	}
	for _, p := range c.Validate() {
		if p.Line == 0 || !reported[p.Line] {
			problems = append(problems, p)
		}
	}
	return c, sortProblems(problems), nil
}

// parseDocument parses the first YAML document and returns its root node
// (nil for an empty file). A second document is reported as a problem
// rather than silently ignored.
func parseDocument(data []byte) (*yaml.Node, []Problem, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("invalid YAML%s: %w", flowHint(data, err), err)
	}
	var problems []Problem
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		problems = append(problems, Problem{Line: extra.Line,
			Message: "the file holds more than one YAML document (---); put all settings in one"})
	case !errors.Is(err, io.EOF):
		return nil, nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, problems, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, problems, nil // only comments, or "~"
	}
	return root, problems, nil
}

var syntaxErrorLine = regexp.MustCompile(`line (\d+)`)

// flowHint explains the one syntax error ${VAR} tends to cause: inside
// {...} or [...] a plain value cannot contain "}" or "]", so the reference
// must be quoted.
func flowHint(data []byte, err error) string {
	m := syntaxErrorLine.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	n, _ := strconv.Atoi(m[1])
	lines := bytes.Split(data, []byte("\n"))
	// yaml.v3 sometimes names the line before the offending one.
	for _, i := range []int{n - 1, n} {
		if i >= 0 && i < len(lines) && bytes.Contains(lines[i], []byte("${")) && bytes.ContainsAny(lines[i], "{[") {
			return ` (inside {...} or [...] quote values that use ${VAR}, e.g. {X-Key: "${VAR}"})`
		}
	}
	return ""
}

var typeErrorLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// decode fills c from root and turns every yaml.v3 type error into a
// Problem on its line. Values that came from the environment are redacted
// from the messages (yaml.v3 quotes the offending value).
func decode(root *yaml.Node, c *Config, expanded map[*yaml.Node]bool) []Problem {
	err := root.Decode(c)
	if err == nil {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		// Only non-type failures get here (e.g. excessive aliasing); the
		// decode stopped, so report it and let the caller refuse to start.
		return []Problem{{Message: fmt.Sprintf("cannot decode the config: %v", err)}}
	}
	envLines := map[int]bool{}
	for n := range expanded {
		envLines[n.Line] = true
	}
	problems := make([]Problem, 0, len(te.Errors))
	for _, msg := range te.Errors {
		p := Problem{Message: msg}
		if m := typeErrorLine.FindStringSubmatch(msg); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			p.Message = m[2]
		}
		p.Message = humanizeTypeError(p.Message)
		if envLines[p.Line] {
			p.Message = redactValues(p.Message)
		}
		problems = append(problems, p)
	}
	return problems
}

var (
	cannotUnmarshal = regexp.MustCompile("^cannot unmarshal (!![a-z]+)( `[^`]*`)? into (.+)$")
	// goTypeNames says in words what the Go types of Config expect.
	goTypeNames = map[string]string{
		"int": "an integer", "int64": "an integer", "string": "a string", "bool": "true or false",
		"[]string": "a list of strings", "[]config.ModelRef": "a list of models",
		"[]config.Provider": "a list of providers", "map[string]config.Group": "a mapping of groups",
		"map[string]string": "a mapping of names to values", "config.Config": "a mapping",
		"config.Log": "a mapping", "config.Usage": "a mapping", "config.Provider": "a provider mapping",
		"config.Group": "a mapping like {models: [...]}", "config.ModelRef": "a model id or {id, upstream}",
		"config.Billing": "a mapping like {currency: USD}", "[]config.ModelConfig": "a list of models",
		"config.ModelConfig":        "a model mapping like {id: gpt-4o-mini, input: 0.15}",
		"[]config.ImagePriceConfig": "a list of image prices", "config.ImagePriceConfig": "a mapping like {size: 1024x1024, price: 0.04}",
		"*int64": "an integer", "*string": "a string", "*bool": "true or false",
		"[]int": "a list of whole seconds like [4, 8, 12]", "map[int]int": "a mapping of seconds like {5: 4, 10: 8}",
		"map[string]config.Amount": "a mapping of sizes to prices like {1792x1024: 0.5}",
		"config.Video":             "a mapping like {timeout: 30m}",
		"config.Background":        "a mapping like {timeout: 1h}",
		"config.Console":           "a mapping like {session_ttl: 168h}",
		"[]config.OAuthProvider":   "a list of sign-in providers",
		"config.OAuthProvider":     "a mapping like {name: github, type: github, client_id: ...}",
	}
	yamlTagNames = map[string]string{
		"!!str": "a string", "!!int": "an integer", "!!float": "a number", "!!bool": "a boolean",
		"!!seq": "a list", "!!map": "a mapping", "!!null": "nothing", "!!timestamp": "a timestamp",
	}
)

// humanizeTypeError rewrites yaml.v3's "cannot unmarshal !!str `high` into
// int" as "expected an integer, got a string `high`"; other messages pass through.
func humanizeTypeError(msg string) string {
	m := cannotUnmarshal.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want, ok := goTypeNames[m[3]]
	if !ok {
		return msg
	}
	got, ok := yamlTagNames[m[1]]
	if !ok {
		got = m[1]
	}
	return "expected " + want + ", got " + got + m[2]
}

var backticked = regexp.MustCompile("`[^`]*`")

// redactValues hides the quoted values in a yaml.v3 message, for lines
// whose values came from the environment and may be secrets.
func redactValues(msg string) string {
	return backticked.ReplaceAllString(msg, "(value from the environment)")
}

// fillLines copies the recorded lines into the exported Line fields.
func (c *Config) fillLines() {
	for i := range c.Providers {
		if c.Providers[i].Line == 0 {
			c.Providers[i].Line = c.line("providers."+strconv.Itoa(i), 0)
		}
		for j := range c.Providers[i].Models {
			m := &c.Providers[i].Models[j]
			if m.Line == 0 {
				m.Line = c.line(fmt.Sprintf("providers.%d.models.%d", i, j), 0)
			}
		}
	}
	c.fillModelLines()
	for name, g := range c.Groups {
		if g.Line == 0 {
			g.Line = c.line("groups."+name, 0)
			c.Groups[name] = g
		}
	}
}

// sortProblems orders problems by line (line-less ones first), keeping
// discovery order within a line.
func sortProblems(ps []Problem) []Problem {
	slices.SortStableFunc(ps, func(a, b Problem) int { return a.Line - b.Line })
	return ps
}
