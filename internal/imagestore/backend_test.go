package imagestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// backendSuite is what every Backend must do, run against the local
// directory and against an S3 bucket (an in-process gofakes3 server).
// newBackend returns an empty backend.
func backendSuite(t *testing.T, newBackend func(t *testing.T) Backend) {
	ctx := context.Background()
	name := func(i int) string { return fmt.Sprintf("%032x.png", i+1) }

	t.Run("put and get", func(t *testing.T) {
		b := newBackend(t)
		jpeg := []byte("\xff\xd8\xff\xe0 a jpeg")
		jname := strings.Repeat("a", 32) + ".jpg"
		if err := put(ctx, b, jname, jpeg, "image/jpeg"); err != nil {
			t.Fatal(err)
		}
		obj, err := b.Get(ctx, jname)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj.Body)
		if err := errors.Join(err, obj.Body.Close()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, jpeg) || obj.Size != int64(len(jpeg)) || obj.ContentType != "image/jpeg" {
			t.Fatalf("got %q, size %d, type %q", got, obj.Size, obj.ContentType)
		}
		if since := time.Since(obj.ModTime); obj.ModTime.IsZero() || since > time.Hour || since < -time.Hour {
			t.Fatalf("modification time %v", obj.ModTime)
		}
	})

	t.Run("missing object", func(t *testing.T) {
		b := newBackend(t)
		if err := put(ctx, b, name(0), pngHeader, "image/png"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Get(ctx, name(1)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get of a missing object = %v, want ErrNotFound", err)
		}
	})

	t.Run("canceled context", func(t *testing.T) {
		b := newBackend(t)
		if err := put(ctx, b, name(0), pngHeader, "image/png"); err != nil {
			t.Fatal(err)
		}
		done, cancel := context.WithCancel(ctx)
		cancel()
		if err := put(done, b, name(1), pngHeader, "image/png"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Put with a canceled context = %v", err)
		}
		if _, err := b.Get(done, name(0)); !errors.Is(err, context.Canceled) {
			t.Fatalf("Get with a canceled context = %v", err)
		}
	})

	t.Run("through the store", func(t *testing.T) {
		now := time.Unix(1_700_000_000, 0)
		s, err := New(Options{Backend: newBackend(t), Key: bytes.Repeat([]byte("k"), 32), Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Save(ctx, []byte("<svg onload=alert(1)>")); !errors.Is(err, ErrNotImage) {
			t.Fatalf("non-image stored: %v", err)
		}
		n, err := s.Save(ctx, pngHeader)
		if err != nil {
			t.Fatal(err)
		}
		path, exp, sig := parts(t, s.URL("https://gw.example", n))
		if err := s.Check(path, exp, sig); err != nil {
			t.Fatal(err)
		}
		obj, err := s.Open(ctx, strings.TrimPrefix(path, FilesPath))
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Body.Close()
		if got, _ := io.ReadAll(obj.Body); !bytes.Equal(got, pngHeader) || obj.ContentType != "image/png" {
			t.Fatalf("read %q as %q", got, obj.ContentType)
		}
		if _, err := s.Open(ctx, "../"+n); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Open of a bad name = %v", err)
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		s, err := New(Options{Backend: newBackend(t), Key: make([]byte, 32)})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				data := append(append([]byte(nil), pngHeader...), byte(i))
				n, err := s.Save(ctx, data)
				if err != nil {
					t.Error(err)
					return
				}
				obj, err := s.Open(ctx, n)
				if err != nil {
					t.Error(err)
					return
				}
				defer obj.Body.Close()
				if got, _ := io.ReadAll(obj.Body); !bytes.Equal(got, data) {
					t.Errorf("image %d read back as %q", i, got)
				}
			})
		}
		wg.Wait()
	})
}

func TestDirBackend(t *testing.T) {
	backendSuite(t, func(t *testing.T) Backend {
		d, err := NewDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

func TestS3Backend(t *testing.T) {
	backendSuite(t, func(t *testing.T) Backend {
		return newFakeS3(t).backend(t, S3Options{Prefix: "gw/"})
	})
}

// put stores data whole, for tests that need no stream.
func put(ctx context.Context, b Backend, name string, data []byte, contentType string) error {
	_, err := b.Put(ctx, name, bytes.NewReader(data), contentType)
	return err
}
