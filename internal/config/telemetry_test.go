package config

import (
	"testing"
)

// telemetry: off when absent or empty, an http(s) URL when set, the
// service name defaulted.
func TestTelemetry(t *testing.T) {
	cases := []struct {
		name     string
		extra    string
		env      map[string]string
		endpoint string // want c.Telemetry.OTLPEndpoint ("": nil or empty)
		service  string // want c.Telemetry.ServiceName ("": nil section)
		enabled  bool
		problem  string // substring of the one problem wanted ("": none)
		warning  bool
	}{
		{name: "absent"},
		{name: "empty endpoint", extra: "telemetry: {otlp_endpoint: \"\"}\n", service: "modelgate"},
		{name: "base URL", extra: "telemetry: {otlp_endpoint: \"http://127.0.0.1:4318\"}\n",
			endpoint: "http://127.0.0.1:4318", service: "modelgate", enabled: true},
		{name: "full URL and a service name", extra: "telemetry:\n  otlp_endpoint: https://otel.example.com/v1/traces\n  service_name: gateway-eu\n",
			endpoint: "https://otel.example.com/v1/traces", service: "gateway-eu", enabled: true},
		{name: "from the environment", extra: "telemetry: {otlp_endpoint: \"${OTLP}\"}\n", env: map[string]string{"OTLP": "http://collector:4318"},
			endpoint: "http://collector:4318", service: "modelgate", enabled: true},
		{name: "no scheme", extra: "telemetry: {otlp_endpoint: \"127.0.0.1:4318\"}\n", endpoint: "127.0.0.1:4318", service: "modelgate", enabled: true,
			problem: "telemetry.otlp_endpoint"},
		{name: "grpc", extra: "telemetry: {otlp_endpoint: \"grpc://127.0.0.1:4317\"}\n", endpoint: "grpc://127.0.0.1:4317", service: "modelgate", enabled: true,
			problem: "not an http(s) URL"},
		{name: "user info", extra: "telemetry: {otlp_endpoint: \"https://u:p@otel.example.com\"}\n", endpoint: "https://u:p@otel.example.com", service: "modelgate", enabled: true,
			problem: "user info"},
		{name: "blank service name", extra: "telemetry: {otlp_endpoint: \"http://127.0.0.1:4318\", service_name: \" \"}\n", endpoint: "http://127.0.0.1:4318", service: " ", enabled: true,
			problem: "service_name is empty"},
		{name: "service name alone", extra: "telemetry: {service_name: gw}\n", service: "gw", problem: "no traces are sent", warning: true},
		{name: "unknown key", extra: "telemetry: {otlp_endpoint: \"http://127.0.0.1:4318\", protocol: grpc}\n", endpoint: "http://127.0.0.1:4318", service: "modelgate", enabled: true,
			problem: "protocol"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, ps := loadWithDemo(t, tc.extra, tc.env)
			var endpoint, service string
			if c.Telemetry != nil {
				endpoint, service = c.Telemetry.OTLPEndpoint, c.Telemetry.ServiceName
			}
			if endpoint != tc.endpoint || service != tc.service {
				t.Errorf("telemetry = {%q, %q}, want {%q, %q}", endpoint, service, tc.endpoint, tc.service)
			}
			if got := c.Telemetry.Enabled(); got != tc.enabled {
				t.Errorf("Enabled() = %v, want %v", got, tc.enabled)
			}
			checkOneProblem(t, ps, tc.problem, tc.warning)
			if tc.problem != "" && ps[0].Line == 0 {
				t.Errorf("problem %q has no line", ps[0])
			}
		})
	}
}
