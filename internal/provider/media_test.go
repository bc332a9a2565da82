package provider

import "testing"

func TestIsEventStream(t *testing.T) {
	cases := []struct {
		ct   string
		want bool
	}{
		{"text/event-stream", true},
		{"text/event-stream; charset=utf-8", true},
		{"text/event-stream;charset=UTF-8", true},
		{"Text/Event-Stream", true},
		{"  text/event-stream ; charset=utf-8", true},
		{"text/event-streams", false},
		{"text/event-stream-x", false},
		{"application/json", false},
		{"application/json; charset=utf-8", false},
		{"", false},
		{"text/event", false},
	}
	for _, tc := range cases {
		if got := IsEventStream(tc.ct); got != tc.want {
			t.Errorf("IsEventStream(%q) = %v, want %v", tc.ct, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { IsEventStream("text/event-stream; charset=utf-8") }); n != 0 {
		t.Errorf("%v allocations for a vendor's usual value", n)
	}
}
