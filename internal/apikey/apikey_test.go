package apikey

import (
	"bytes"
	"strings"
	"testing"
)

func TestGenerate(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		s, display, hash := Generate()
		if !strings.HasPrefix(s, Prefix) || len(s) != len(Prefix)+secretLen {
			t.Fatalf("bad secret %q", s)
		}
		for _, c := range s[len(Prefix):] {
			if !strings.ContainsRune(alphabet, c) {
				t.Fatalf("secret %q has %q outside base62", s, c)
			}
		}
		if !strings.HasPrefix(s, display) || len(display) != displayLen {
			t.Fatalf("display %q is not a prefix of %q", display, s)
		}
		if !bytes.Equal(hash, Hash(s)) || len(hash) != 32 {
			t.Fatal("hash mismatch")
		}
		if seen[s] {
			t.Fatal("duplicate secret")
		}
		seen[s] = true
	}
}

func TestFromHeader(t *testing.T) {
	key, _, _ := Generate()
	cases := []struct {
		in, want string
	}{
		{"Bearer " + key, key},
		{"bearer " + key, key},
		{"Bearer  " + key + " ", key},
		{"Bearer sk-legacy-format-1234", "sk-legacy-format-1234"},
		{"", ""},
		{"Bearer", ""},
		{"Bearer ", ""},
		{"Basic " + key, ""},
		{key, ""},
		{"Bearer pk-" + key[3:], ""},
		{"Bearer sk-", ""},
		{"Bearer " + key + "\x00", ""},
		{"Bearer sk-mg-" + strings.Repeat("a", 300), ""},
	}
	for _, tc := range cases {
		if got := FromHeader(tc.in); got != tc.want {
			t.Errorf("FromHeader(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
