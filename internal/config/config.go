// Package config defines modelgate's YAML configuration file: its schema,
// its defaults, ${VAR} expansion from the environment, and a validator that
// reports every problem together with the line it is on, so an operator can
// fix a broken file in one pass instead of one restart per mistake.
//
// File rules beyond the plain schema: string values (never keys) may use
// ${VAR} and ${VAR:-default}, expanded after parsing so a value from the
// environment is always one string; "$$" and a "$" not followed by "{" are
// kept as written. Unknown keys are errors, except top-level keys starting
// with "x-", which are ignored so shared YAML anchors have a home.
//
// The package never reads the environment or any global state itself: Load
// takes a getenv function, and everything else works on the Config value.
package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Defaults applied by ApplyDefaults; Default() is the zero-config setup built from them.
const (
	defaultListen          = "127.0.0.1:8080"
	defaultDatabase        = "sqlite:./modelgate-data/modelgate.db"
	defaultMaxRequestBytes = 20 << 20 // 20 MiB
	defaultShutdownTimeout = Duration(30 * time.Second)
	defaultAuthCacheTTL    = Duration(time.Second)
	defaultReadTimeout     = Duration(30 * time.Second)
	minMaxBodyMemory       = 128 << 20 // max_body_memory's default, unless 4 × max_request_bytes is more
	defaultWriteTimeout    = Duration(60 * time.Second)
	defaultDrainTimeout    = Duration(15 * time.Second)
	defaultGCPercent       = 200
	defaultLogLevel        = "info"
	defaultLogFormat       = "text"
	defaultBatchSize       = 8192
	defaultFlushInterval   = Duration(time.Second)
	defaultWeight          = 1
	defaultTimeout         = Duration(10 * time.Minute)
	defaultIdleTimeout     = Duration(2 * time.Minute)
	defaultGroup           = "default"
)

// Config is the whole configuration file, so every package reads its settings from one typed value.
type Config struct {
	Listen          string           `yaml:"listen"`
	PublicURL       string           `yaml:"public_url"`      // the gateway's external base URL; see publicurl.go
	TrustedProxies  []string         `yaml:"trusted_proxies"` // peers whose X-Forwarded-Proto/-Host count
	Database        string           `yaml:"database"`
	Redis           string           `yaml:"redis"` // redis://host:port/db: rate limits shared by every replica; "": in memory
	MaxRequestBytes int64            `yaml:"max_request_bytes"`
	ShutdownTimeout Duration         `yaml:"shutdown_timeout"`
	AuthCacheTTL    Duration         `yaml:"auth_cache_ttl"`
	ReadTimeout     Duration         `yaml:"read_timeout"`
	MaxBodyMemory   int64            `yaml:"max_body_memory"`
	WriteTimeout    Duration         `yaml:"write_timeout"`   // longest block of one stream write to a client
	DrainTimeout    Duration         `yaml:"drain_timeout"`   // how long a reasoning answer is read on after its client left, for the vendor's usage
	GCPercent       int              `yaml:"gc_percent"`      // the Go garbage collector's GOGC, unless GOGC is set
	MemoryLimit     int64            `yaml:"memory_limit"`    // the Go runtime's soft memory limit, unless GOMEMLIMIT is set; 0: none
	MaxConnections  int              `yaml:"max_connections"` // client connections held at once; 0: from the file limit
	Log             Log              `yaml:"log"`
	Usage           Usage            `yaml:"usage"`
	Providers       []Provider       `yaml:"providers"`
	Groups          map[string]Group `yaml:"groups"`
	Billing         Billing          `yaml:"billing"`
	Images          Images           `yaml:"images"`
	Fetch           Fetch            `yaml:"fetch"`     // image URLs the gateway downloads for a vendor
	Video           Video            `yaml:"video"`     // asynchronous video generation tasks
	Console         *Console         `yaml:"console"`   // the web console; nil: off
	Payments        *Payments        `yaml:"payments"`  // console top-ups; nil: redemption codes only
	Metrics         *Metrics         `yaml:"metrics"`   // Prometheus /metrics on its own listener; nil: off
	Telemetry       *Telemetry       `yaml:"telemetry"` // OpenTelemetry traces over OTLP/HTTP; nil or no endpoint: off
	Models          []ModelConfig    `yaml:"models"`    // overrides of and additions to the built-in catalog
	Path            string           `yaml:"-"`         // file it was loaded from; "" for the built-in default
	// Zero marks the zero-configuration setup (ZeroConfig: no file at all),
	// whose console, when on, is the operator's: its first account is an
	// admin that signs in with the link printed on the first start.
	Zero bool `yaml:"-"`

	// Background configures background Responses requests (background: true).
	Background Background `yaml:"background"`

	// Routing bounds each request's tries across its model's providers;
	// Circuit is the per-provider circuit breaker (routing.go).
	Routing Routing `yaml:"routing"`
	Circuit Circuit `yaml:"circuit"`

	// Messages configures the Anthropic Messages API door.
	Messages Messages `yaml:"messages"`

	// src describes the file the config was loaded from (nil otherwise): the
	// line of every key and which values were given explicitly or came from
	// the environment. It lets Validate point at lines and lets ApplyDefaults
	// tell "weight: 0" apart from no weight at all.
	src *source
}

// Log configures the process logger, so operators can pick verbosity and a machine-readable format.
type Log struct {
	Level    string `yaml:"level"`    // debug|info|warn|error
	Format   string `yaml:"format"`   // text|json
	Requests *bool  `yaml:"requests"` // one log line per request; nil means true
}

// RequestsEnabled reports whether per-request log lines are wanted, treating an unset value as true.
func (l Log) RequestsEnabled() bool {
	return l.Requests == nil || *l.Requests
}

// Usage tunes the batching usage writer, trading write amplification against how fresh usage data is.
type Usage struct {
	BatchSize     int      `yaml:"batch_size"`
	FlushInterval Duration `yaml:"flush_interval"`
	// JournalDir is where usage records are journaled before they reach the
	// database; "" means next to the SQLite file (see app.journalDir).
	JournalDir string `yaml:"journal_dir"`
	// Retention is how long usage records are kept (default 400d, 0:
	// forever); older ones are purged hourly. The ledger is never purged.
	Retention Retention `yaml:"retention"`
}

// Provider is one upstream vendor account that requests can be routed to.
type Provider struct {
	Name    string `yaml:"name"`
	Type    string `yaml:"type"`
	BaseURL string `yaml:"base_url"`
	APIKey  string `yaml:"api_key"`
	// APIKeys are several keys of one vendor account, rotated; the vendor
	// refusing one (401/403) takes it out of rotation until a reload.
	APIKeys []string `yaml:"api_keys"`
	// ConnectTimeout bounds opening a connection to the vendor (default 10s).
	ConnectTimeout Duration          `yaml:"connect_timeout"`
	OwnedBy        string            `yaml:"owned_by"`
	Models         ModelList         `yaml:"models"`
	Priority       int               `yaml:"priority"`
	Weight         int               `yaml:"weight"`
	Headers        map[string]string `yaml:"headers"`
	Timeout        Duration          `yaml:"timeout"`
	IdleTimeout    Duration          `yaml:"idle_timeout"`
	// APIVersion is Azure OpenAI's api-version (default 2024-10-21).
	APIVersion string `yaml:"api_version"`
	// MaxTokens is the output limit sent to vendors that require one
	// (Anthropic) when neither the request nor the catalog gives one.
	MaxTokens int64 `yaml:"max_tokens"`
	Line      int   `yaml:"-"` // line of the provider's mapping in the file
}

// ModelRef names a public model id a provider serves, and the vendor's own id when it differs.
type ModelRef struct {
	ID       string `yaml:"id"`
	Upstream string `yaml:"upstream"`
	Line     int    `yaml:"-"`
}

// ModelList is a provider's models: ids, {id, upstream} mappings and glob
// patterns over the catalog ("claude-*"); the scalar "models: all" is the
// one-pattern list ["*"]. ExpandModels resolves the patterns.
type ModelList []ModelRef

// UnmarshalYAML accepts a list, or the word all.
func (l *ModelList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Value == "all" {
		*l = ModelList{{ID: AllModels, Line: n.Line}}
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		got := yamlTagNames[n.ShortTag()]
		if got == "" {
			got = "a " + n.ShortTag()
		}
		if n.Kind == yaml.ScalarNode {
			got += " " + quoteValue(n.Value)
		}
		return typeErrorf(n, "expected a list of models or all, got %s", got)
	}
	var refs []ModelRef
	err := n.Decode(&refs) // a *yaml.TypeError is collected by the outer decoder
	*l = refs
	return err
}

// UpstreamID returns the id to send to the vendor, so callers need not care whether Upstream was defaulted.
func (m ModelRef) UpstreamID() string {
	if m.Upstream != "" {
		return m.Upstream
	}
	return m.ID
}

// UnmarshalYAML accepts both the short scalar form ("gpt-4o-mini") and the
// {id, upstream} mapping, so the common case stays a one-word list item.
func (m *ModelRef) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*m = ModelRef{ID: n.Value, Line: n.Line}
		return nil
	case yaml.MappingNode:
		type plain ModelRef // no UnmarshalYAML: avoids recursion
		var p plain
		if err := n.Decode(&p); err != nil {
			return err // *yaml.TypeError is collected by the outer decoder
		}
		*m = ModelRef(p)
		m.Line = n.Line
		return nil
	default:
		return typeErrorf(n, "a model must be an id like gpt-4o-mini or a mapping {id: ..., upstream: ...}")
	}
}

// Group is a set of glob patterns over public model ids; every API key belongs to exactly one group.
type Group struct {
	Models []string `yaml:"models"`
	// PriceRatio multiplies every price for the group's keys (0.8 is a 20%
	// discount); ApplyDefaults makes an unset ratio 1 (money.PPM).
	PriceRatio Ratio `yaml:"price_ratio"`
	// Responses are the group's rules for what a request's body does not
	// show the gateway (see GroupResponses).
	Responses GroupResponses `yaml:"responses"`
	// Limits are the rate limits of each of the group's keys, unless the
	// key has its own (see GroupLimits).
	Limits GroupLimits `yaml:"limits"`
	Line   int         `yaml:"-"`
}

// GroupLimits are the rate limits every key of a group gets, each key
// counted on its own; a key's own limit (keys create --rpm ...) overrides
// the group's. 0 is no limit.
type GroupLimits struct {
	// RPM is the requests per minute one key may send.
	RPM int64 `yaml:"rpm"`
	// TPM is the tokens per minute one key may use: each request counts
	// its prompt and output bound when admitted, its real usage once
	// settled.
	TPM int64 `yaml:"tpm"`
	// Concurrency is how many requests of one key may run at once.
	Concurrency int64 `yaml:"concurrency"`
}

// GroupResponses are a group's rules for requests whose cost the body
// does not show: context stored at the vendor that the gateway cannot
// size, and built-in tool calls.
type GroupResponses struct {
	// AllowUnsized lets the group's keys send what makes the vendor bill
	// input the gateway cannot see or size (conversation, stored prompt
	// ids, file ids, item references); each such request reserves Reserve
	// on top of what its body shows. Off: they are refused with a 400.
	AllowUnsized bool `yaml:"allow_unsized"`
	// Reserve is the amount (in currency units) each unsized request
	// reserves; required with AllowUnsized.
	Reserve Amount `yaml:"reserve"`
	// MaxToolCalls is the max_tool_calls sent upstream with built-in tools
	// when the client sets none, which bounds what their calls can cost
	// (0: surcharge.DefaultMaxToolCalls).
	MaxToolCalls int64 `yaml:"max_tool_calls"`
}

// Duration is a time.Duration written in YAML as "30s", "2m" or "500ms" (or
// plain integer seconds), so config files stay readable.
type Duration time.Duration

// maxSeconds is the largest whole-second count a time.Duration can hold.
const maxSeconds = int64(1<<63-1) / int64(time.Second)

// UnmarshalYAML parses a Go duration string or an integer number of seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return typeErrorf(n, "expected a duration like 30s, 2m or 500ms")
	}
	v := strings.TrimSpace(n.Value)
	if dur, err := time.ParseDuration(v); err == nil {
		*d = Duration(dur)
		return nil
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs <= maxSeconds && secs >= -maxSeconds {
		*d = Duration(time.Duration(secs) * time.Second)
		return nil
	}
	return typeErrorf(n, "invalid duration %s: use a duration like 30s, 2m or 500ms, or whole seconds", quoteValue(n.Value))
}

// MarshalYAML writes the duration back in its readable form, so a dumped config can be loaded again.
func (d Duration) MarshalYAML() (any, error) {
	return d.String(), nil
}

// String formats the duration like time.Duration does.
func (d Duration) String() string {
	return time.Duration(d).String()
}

// typeErrorf builds the error type yaml.v3 collects (instead of aborting on),
// so one bad value does not hide the problems after it.
func typeErrorf(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: ", n.Line) + fmt.Sprintf(format, args...)}}
}

// quoteValue shows a file value in a message the way yaml.v3 does (in
// backticks, shortened), so redactValues can hide it when it came from the environment.
func quoteValue(s string) string {
	s = strings.ReplaceAll(s, "`", "'")
	if len(s) > 20 {
		s = s[:17] + "..."
	}
	return "`" + s + "`"
}

// Problem is one thing wrong (or suspicious, when Warning) with a config, tied to a file line when possible.
type Problem struct {
	Line    int // 0 when not tied to a line
	Warning bool
	Message string
}

// String renders the problem the way it is shown to operators: "line 12: message" or "warning: line 12: message".
func (p Problem) String() string {
	var b strings.Builder
	if p.Warning {
		b.WriteString("warning: ")
	}
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	b.WriteString(p.Message)
	return b.String()
}

// HasErrors reports whether any problem is not a warning, which is when callers must refuse to start.
func HasErrors(ps []Problem) bool {
	for _, p := range ps {
		if !p.Warning {
			return true
		}
	}
	return false
}

// Default returns the zero-config setup (the offline demo provider on
// 127.0.0.1:8080 with a local SQLite file), so modelgate runs with no file at all.
func Default() *Config {
	c := &Config{
		// No models listed means "every model the demo provider has".
		Providers: []Provider{{Name: "demo", Type: "demo"}},
	}
	c.ApplyDefaults()
	return c
}

// ApplyDefaults fills every unset setting with its default; it is
// idempotent. A number or duration written explicitly as 0 in the loaded
// file is kept, so that Validate reports it instead of silently replacing
// it. A provider's default idle_timeout (2m) is capped at its timeout. A
// provider's base_url is put in the canonical form of its type (see
// normalizeBaseURL), or left as written when it is invalid, for Validate
// to report.
func (c *Config) ApplyDefaults() {
	if c.Listen == "" {
		c.Listen = defaultListen
	}
	if c.Database == "" {
		c.Database = defaultDatabase
	}
	if c.MaxRequestBytes == 0 && !c.given("max_request_bytes") {
		c.MaxRequestBytes = defaultMaxRequestBytes
	}
	defaultDuration(&c.ShutdownTimeout, defaultShutdownTimeout, c.given("shutdown_timeout"))
	defaultDuration(&c.AuthCacheTTL, defaultAuthCacheTTL, c.given("auth_cache_ttl"))
	defaultDuration(&c.ReadTimeout, defaultReadTimeout, c.given("read_timeout"))
	if c.MaxBodyMemory == 0 && !c.given("max_body_memory") {
		c.MaxBodyMemory = max(minMaxBodyMemory, 4*c.MaxRequestBytes)
	}
	defaultDuration(&c.WriteTimeout, defaultWriteTimeout, c.given("write_timeout"))
	defaultDuration(&c.DrainTimeout, defaultDrainTimeout, c.given("drain_timeout"))
	if c.GCPercent == 0 && !c.given("gc_percent") {
		c.GCPercent = defaultGCPercent
	}
	if c.MemoryLimit == 0 && !c.given("memory_limit") {
		c.MemoryLimit = 4 * c.MaxBodyMemory
	}
	if c.Log.Level == "" {
		c.Log.Level = defaultLogLevel
	}
	if c.Log.Format == "" {
		c.Log.Format = defaultLogFormat
	}
	if c.Usage.BatchSize == 0 && !c.given("usage.batch_size") {
		c.Usage.BatchSize = defaultBatchSize
	}
	defaultDuration(&c.Usage.FlushInterval, defaultFlushInterval, c.given("usage.flush_interval"))
	for i := range c.Providers {
		p := &c.Providers[i]
		base := fmt.Sprintf("providers.%d.", i)
		if p.Weight == 0 && !c.given(base+"weight") {
			p.Weight = defaultWeight
		}
		defaultDuration(&p.Timeout, defaultTimeout, c.given(base+"timeout"))
		// A defaulted idle timeout never exceeds the whole-request timeout
		// (it could not trigger anyway), so only an explicit one draws a warning.
		idle := defaultIdleTimeout
		if p.Timeout > 0 && p.Timeout < idle {
			idle = p.Timeout
		}
		defaultDuration(&p.IdleTimeout, idle, c.given(base+"idle_timeout"))
		if hasBaseURL(p.Type) {
			if b, err := normalizeBaseURL(p.Type, p.BaseURL); err == nil {
				p.BaseURL = b.url
				if p.APIVersion == "" {
					p.APIVersion = b.apiVersion
				}
			}
		}
		for j := range p.Models {
			if p.Models[j].Upstream == "" && !IsPattern(p.Models[j].ID) {
				p.Models[j].Upstream = p.Models[j].ID
			}
		}
	}
	if len(c.Groups) == 0 {
		c.Groups = map[string]Group{defaultGroup: {Models: []string{"*"}}}
	}
	c.applyBillingDefaults()
	c.applyImagesDefaults()
	c.applyFetchDefaults()
	c.applyUsageDefaults()
	c.applyVideoDefaults()
	c.applyBackgroundDefaults()
	c.applyConsoleDefaults()
	c.applyPaymentsDefaults()
	c.applyPublicURLDefaults()
	c.applyTelemetryDefaults()
}

func defaultDuration(d *Duration, def Duration, given bool) {
	if *d == 0 && !given {
		*d = def
	}
}
