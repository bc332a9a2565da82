package config

import (
	"strings"
	"testing"
)

func TestCheckRedisURL(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want string // "" for valid, else a part of the error
	}{
		{"", ""},
		{"redis://127.0.0.1:6379/0", ""},
		{"redis://127.0.0.1:6379", ""},
		{"redis://cache", ""},
		{"rediss://:s3cret@cache.internal:6380/15", ""},
		{"redis://user:s3cret@[::1]:6379/2", ""},
		{"http://127.0.0.1:6379/0", `scheme "http"`},
		{"127.0.0.1:6379", "want redis://"},
		{"redis:///0", "no host"},
		{"redis://127.0.0.1:port/0", "port"},
		{"redis://127.0.0.1:99999/0", "port"},
		{"redis://:s3cret@127.0.0.1:6379/zero", "database number"},
		{"redis://127.0.0.1:6379/0/1", "database number"},
	} {
		err := CheckRedisURL(tt.url)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.url, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: error %v, want one saying %q", tt.url, err, tt.want)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("%q: the error repeats the password: %v", tt.url, err)
		}
	}
}

// TestValidateRedis: config check reports a bad redis URL on its line.
func TestValidateRedis(t *testing.T) {
	_, ps, err := parse([]byte("redis: http://cache:6379/0\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range ps {
		if strings.HasPrefix(p.Message, "redis:") && !p.Warning && p.Line == 1 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no error for a bad redis URL: %q", ps)
	}
}
