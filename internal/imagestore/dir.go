package imagestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Dir is a Backend in a local directory: one file per image, written to a
// temporary name and renamed into place so a reader never sees half a file.
type Dir struct {
	dir string
}

var _ Backend = (*Dir)(nil)

// NewDir uses (and creates) dir.
func NewDir(dir string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("imagestore: create %s: %w", dir, err)
	}
	return &Dir{dir: dir}, nil
}

// Put writes data to dir/name.
func (d *Dir) Put(ctx context.Context, name string, data []byte, _ string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(d.dir, ".put-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(d.dir, name)); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}

// Get opens dir/name; the body is an *os.File (seekable).
func (d *Dir) Get(ctx context.Context, name string) (Object, error) {
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	f, err := os.Open(filepath.Join(d.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return Object{}, ErrNotFound
	}
	if err != nil {
		return Object{}, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		_ = f.Close()
		return Object{}, ErrNotFound
	}
	return Object{Body: f, Size: st.Size(), ContentType: ContentType(name), ModTime: st.ModTime()}, nil
}

// Sweep deletes images (and abandoned temporary files) last written
// before cutoff, and returns how many it removed. The signing key and
// anything that is not a stored image are left alone.
func (d *Dir) Sweep(cutoff time.Time) (int, error) {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return 0, fmt.Errorf("imagestore: sweep %s: %w", d.dir, err)
	}
	n := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || (!ValidName(name) && !strings.HasPrefix(name, ".put-")) {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(d.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// Sweeper deletes images whose links have all expired. Run it in the
// background; it stops when ctx ends.
type Sweeper struct {
	Dir   *Dir
	TTL   time.Duration // link lifetime; files older than TTL plus a margin go
	Every time.Duration // 0: every 10 minutes
	Now   func() time.Time
	Log   *slog.Logger
}

// Run sweeps once at start and then every s.Every until ctx ends. A nil
// sweeper (a store without a local directory) just waits for ctx.
func (s *Sweeper) Run(ctx context.Context) error {
	if s == nil {
		<-ctx.Done()
		return ctx.Err()
	}
	every := s.Every
	if every <= 0 {
		every = 10 * time.Minute
	}
	now, log := s.Now, s.Log
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		// A minute of margin: a link signed just before the file was
		// written is still honoured to its last second.
		n, err := s.Dir.Sweep(now().Add(-s.TTL - time.Minute))
		if err != nil {
			log.Warn("image store: sweep failed", "err", err)
		} else if n > 0 {
			log.Debug("image store: removed expired images", "files", n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
