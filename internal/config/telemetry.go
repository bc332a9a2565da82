package config

import (
	"strings"

	"github.com/modelgate/modelgate/internal/telemetry"
)

// Telemetry configures the OpenTelemetry traces: one span per request and
// one per upstream attempt, sent over OTLP/HTTP to a collector.
type Telemetry struct {
	// OTLPEndpoint is the collector's OTLP/HTTP base URL (like
	// http://127.0.0.1:4318, to which /v1/traces is added) or the full URL
	// of its traces resource (a path ending in /v1/traces); "" (or no
	// telemetry section): no traces.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// ServiceName is the spans' service.name (default "modelgate"), to tell
	// gateways apart in one tracing backend.
	ServiceName string `yaml:"service_name"`
	// SampleRatio is the share of requests traced when the client sent no
	// traceparent (default 1: all); a client's sampled traceparent is
	// always followed.
	SampleRatio *float64 `yaml:"sample_ratio"`
}

// Ratio is the sample ratio, 1 when unset.
func (t *Telemetry) Ratio() float64 {
	if t == nil || t.SampleRatio == nil {
		return 1
	}
	return *t.SampleRatio
}

// Enabled reports whether traces are to be sent; t may be nil.
func (t *Telemetry) Enabled() bool { return t != nil && t.OTLPEndpoint != "" }

func (c *Config) applyTelemetryDefaults() {
	if t := c.Telemetry; t != nil && t.ServiceName == "" && !c.given("telemetry.service_name") {
		t.ServiceName = telemetry.DefaultServiceName
	}
}

// telemetrySettings checks the telemetry section: the endpoint must be an
// http(s) URL the exporter can use (the same check NewTracer makes), and a
// service name without an endpoint is worth a word, since it does nothing.
func (v *validator) telemetrySettings() {
	c := v.c
	t := c.Telemetry
	if t == nil {
		return
	}
	section := c.line("telemetry", 0)
	if t.OTLPEndpoint == "" {
		if c.given("telemetry.service_name") {
			v.warnf(c.line("telemetry.service_name", section), "telemetry.service_name is set but telemetry.otlp_endpoint is empty: no traces are sent")
		}
		return
	}
	if _, err := telemetry.TracesURL(t.OTLPEndpoint); err != nil {
		v.errorf(c.line("telemetry.otlp_endpoint", section), "telemetry.otlp_endpoint: %s", strings.TrimPrefix(err.Error(), "telemetry: "))
	}
	if r := t.SampleRatio; r != nil && (*r <= 0 || *r > 1) {
		v.errorf(c.line("telemetry.sample_ratio", section), "telemetry.sample_ratio must be above 0 and at most 1 (0.05 traces one request in 20), got %g", *r)
	}
	if strings.TrimSpace(t.ServiceName) == "" {
		v.errorf(c.line("telemetry.service_name", section), "telemetry.service_name is empty; leave it out for %q", telemetry.DefaultServiceName)
	}
}
