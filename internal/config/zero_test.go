package config

import (
	"strings"
	"testing"
)

// Without a config file the console is on for a loopback listener, with
// the defaults and no problem to report (no "nobody can sign in": the
// operator's link is the way in), and off, with the reason, for any other.
func TestZeroConfigConsole(t *testing.T) {
	c := ZeroConfig()
	if !c.Zero || c.Console == nil || len(c.Console.SignupGroups) != 1 || c.Console.SignupGroups[0] != "default" || c.Console.SessionTTL == 0 {
		t.Fatalf("zero config console: %+v", c.Console)
	}
	if ps := c.Validate(); len(ps) != 0 {
		t.Errorf("zero config problems: %v", ps)
	}
	tests := []struct {
		listen string
		on     bool
	}{
		{"127.0.0.1:8080", true},
		{"[::1]:9000", true},
		{"localhost:8080", true},
		{"0.0.0.0:8080", false},
		{":8080", false},
		{"192.0.2.7:8080", false},
	}
	for _, tt := range tests {
		c := ZeroConfig()
		c.Listen = tt.listen
		off := c.ZeroConsole()
		if (c.Console != nil) != tt.on || (off == "") != tt.on {
			t.Errorf("%s: console %v, reason %q", tt.listen, c.Console != nil, off)
		}
		if !tt.on && !strings.Contains(off, "not a loopback address") {
			t.Errorf("%s: reason %q", tt.listen, off)
		}
		if ps := c.Validate(); HasErrors(ps) {
			t.Errorf("%s: %v", tt.listen, ps)
		}
	}
	// A config that is not Zero is left alone.
	d := Default()
	if d.ZeroConsole(); d.Console != nil {
		t.Error("Default got a console")
	}
}
