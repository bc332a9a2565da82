package gemini

import "testing"

// TestVersionedBase checks that the adapter keeps the API version of its base
// URL (the config hands it one) and adds v1beta to a bare host.
func TestVersionedBase(t *testing.T) {
	for in, want := range map[string]string{
		"": "https://generativelanguage.googleapis.com/v1beta",
		"https://generativelanguage.googleapis.com":         "https://generativelanguage.googleapis.com/v1beta",
		"https://generativelanguage.googleapis.com/":        "https://generativelanguage.googleapis.com/v1beta",
		"https://generativelanguage.googleapis.com/v1beta":  "https://generativelanguage.googleapis.com/v1beta",
		"https://generativelanguage.googleapis.com/v1beta/": "https://generativelanguage.googleapis.com/v1beta",
		"https://generativelanguage.googleapis.com/v1":      "https://generativelanguage.googleapis.com/v1",
		"https://generativelanguage.googleapis.com/v1alpha": "https://generativelanguage.googleapis.com/v1alpha",
		"http://127.0.0.1:8080/proxy/gemini":                "http://127.0.0.1:8080/proxy/gemini/v1beta",
		"http://v1":                                         "http://v1/v1beta",
	} {
		c, err := New(Options{BaseURL: in})
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if c.base != want {
			t.Errorf("New(%q).base = %q, want %q", in, c.base, want)
		}
	}
}
