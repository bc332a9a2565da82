package imagestore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var pngHeader = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")

func newStore(t *testing.T, now *time.Time) (*Store, *Dir) {
	t.Helper()
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Backend: d, Key: bytes.Repeat([]byte("k"), 32), TTL: time.Hour, Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	return s, d
}

// parts splits a signed URL into what the file handler gets.
func parts(t *testing.T, raw string) (path, exp, sig string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path, u.Query().Get("exp"), u.Query().Get("sig")
}

func TestSignedURLs(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s, _ := newStore(t, &now)
	name, err := s.Save(context.Background(), pngHeader)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".png") || !ValidName(name) {
		t.Fatalf("name %q", name)
	}
	raw := s.URL("http://gw.example:8080/", name)
	if !strings.HasPrefix(raw, "http://gw.example:8080/v1/images/files/"+name+"?exp=1700003600&sig=") {
		t.Fatalf("url %s", raw)
	}
	path, exp, sig := parts(t, raw)
	other := FilesPath + strings.Repeat("0", 32) + ".png"
	flip := []byte(sig)
	flip[3] ^= 1
	if flip[3] == sig[3] { // keep the test honest
		t.Fatal("no change")
	}
	cases := []struct {
		name           string
		path, exp, sig string
		at             time.Time
		want           error
	}{
		{"valid", path, exp, sig, now, nil},
		{"valid until the last second", path, exp, sig, now.Add(time.Hour - time.Second), nil},
		{"expired", path, exp, sig, now.Add(time.Hour), ErrExpired},
		{"tampered signature", path, exp, string(flip), now, ErrForbidden},
		{"no signature", path, exp, "", now, ErrForbidden},
		{"signature of another path", other, exp, sig, now, ErrForbidden},
		{"later expiry", path, "1700007200", sig, now, ErrForbidden},
		{"expiry with a leading zero", path, "0" + exp, sig, now, ErrForbidden},
		{"expiry not a number", path, "soon", sig, now, ErrForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now = tc.at
			if err := s.Check(tc.path, tc.exp, tc.sig); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestPublicURLWins(t *testing.T) {
	d, _ := NewDir(t.TempDir())
	s, err := New(Options{Backend: d, Key: make([]byte, 32), PublicURL: "https://img.example/gw/"})
	if err != nil {
		t.Fatal(err)
	}
	if u := s.URL("http://127.0.0.1:1", "x.png"); !strings.HasPrefix(u, "https://img.example/gw/v1/images/files/x.png?exp=") {
		t.Fatalf("url %s", u)
	}
	if s.TTL() != DefaultTTL {
		t.Fatalf("ttl %s", s.TTL())
	}
}

func TestNewRefuses(t *testing.T) {
	d, _ := NewDir(t.TempDir())
	for _, o := range []Options{
		{Key: make([]byte, 32)},
		{Backend: d, Key: make([]byte, 31)},
		{Backend: d, Key: make([]byte, 32), TTL: -time.Second},
		{Backend: d, Key: make([]byte, 32), PublicURL: "gw.example"},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

func TestSaveAndOpen(t *testing.T) {
	now := time.Now()
	s, _ := newStore(t, &now)
	ctx := context.Background()
	if _, err := s.Save(ctx, []byte("<html><script>alert(1)</script>")); !errors.Is(err, ErrNotImage) {
		t.Fatalf("html stored: %v", err)
	}
	jpeg := []byte("\xff\xd8\xff\xe0 a jpeg")
	name, err := s.Save(ctx, jpeg)
	if err != nil || !strings.HasSuffix(name, ".jpg") {
		t.Fatalf("save: %q %v", name, err)
	}
	obj, err := s.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Body.Close()
	got, _ := io.ReadAll(obj.Body)
	if !bytes.Equal(got, jpeg) || obj.ContentType != "image/jpeg" || obj.Size != int64(len(jpeg)) {
		t.Fatalf("got %q %s %d", got, obj.ContentType, obj.Size)
	}
	if _, ok := obj.Body.(io.Seeker); !ok {
		t.Fatal("local objects should be seekable")
	}
	for _, bad := range []string{"", "../" + name, strings.ToUpper(name), strings.TrimSuffix(name, ".jpg") + ".html",
		strings.Repeat("0", 32) + ".png", ".signing-key"} {
		if _, err := s.Open(ctx, bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("Open(%q) = %v, want ErrNotFound", bad, err)
		}
	}
}

func TestSweep(t *testing.T) {
	now := time.Now()
	s, d := newStore(t, &now)
	ctx := context.Background()
	oldName, _ := s.Save(ctx, pngHeader)
	newName, _ := s.Save(ctx, pngHeader)
	past := now.Add(-2 * time.Hour)
	for _, f := range []string{oldName, ".put-123", keyFile, "notes.txt"} {
		p := filepath.Join(d.dir, f)
		if _, err := os.Stat(p); err != nil {
			if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
	n, err := d.Sweep(now.Add(-time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("swept %d, %v; want 2 (the old image and the abandoned temp file)", n, err)
	}
	if _, err := s.Open(ctx, oldName); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old image survived: %v", err)
	}
	for _, f := range []string{newName, keyFile, "notes.txt"} {
		if _, err := os.Stat(filepath.Join(d.dir, f)); err != nil {
			t.Errorf("%s was removed: %v", f, err)
		}
	}
}

func TestSweeperStops(t *testing.T) {
	d, _ := NewDir(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (&Sweeper{Dir: d, TTL: time.Hour}).Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
}

func TestLoadKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "images")
	k1, err := LoadKey(dir, "")
	if err != nil || len(k1) != 32 {
		t.Fatalf("generate: %d %v", len(k1), err)
	}
	st, err := os.Stat(filepath.Join(dir, keyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	k2, err := LoadKey(dir, "")
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatal("a second load must read the same key")
	}
	s1, _ := LoadKey(dir, "secret")
	s2, _ := LoadKey(t.TempDir(), "secret")
	s3, _ := LoadKey(dir, "other")
	if !bytes.Equal(s1, s2) || bytes.Equal(s1, s3) || bytes.Equal(s1, k1) || len(s1) != 32 {
		t.Fatal("a configured secret must give the same key everywhere, and only that secret")
	}
	if err := os.WriteFile(filepath.Join(dir, keyFile), []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(dir, ""); err == nil {
		t.Fatal("a corrupt key file must not be replaced silently")
	}
}

func TestLoadKeyRace(t *testing.T) {
	dir := t.TempDir()
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := LoadKey(dir, "")
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[0]) {
			t.Fatal("processes starting together must agree on one key")
		}
	}
}
