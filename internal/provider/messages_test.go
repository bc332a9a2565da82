package provider_test

import (
	"testing"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropic"
	"github.com/modelgate/modelgate/internal/provider/openaicompat"
)

// TestMessengerFound: the door finds the pass-through by type assertion on
// the Chatter it routes to; only adapters that speak the Messages API
// themselves have it.
func TestMessengerFound(t *testing.T) {
	a, err := anthropic.New(anthropic.Options{Name: "a", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	o, err := openaicompat.New(openaicompat.Options{Name: "o", BaseURL: "https://api.example.com/v1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ch   provider.Chatter
		want bool
	}{{"anthropic", a, true}, {"openaicompat", o, false}} {
		if _, ok := tc.ch.(provider.Messenger); ok != tc.want {
			t.Errorf("%s: Messenger %v, want %v", tc.name, ok, tc.want)
		}
	}
}
