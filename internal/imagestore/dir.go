package imagestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Dir is a Backend in a local directory: one file per image or video,
// written to a temporary name and renamed into place so a reader never sees
// half a file.
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

// Put streams r into a temporary file in dir, synced, and renames it to
// dir/name: a reader never sees half a file, and on any error the
// temporary file is removed.
func (d *Dir) Put(ctx context.Context, name string, r io.Reader, _ string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(d.dir, tempPrefix(name)+"*")
	if err != nil {
		return 0, err
	}
	n, werr := io.Copy(tmp, ctxReader{ctx: ctx, r: r})
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		_ = os.Remove(tmp.Name())
		return 0, err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(d.dir, name)); err != nil {
		_ = os.Remove(tmp.Name())
		return 0, err
	}
	return n, nil
}

// Temporary files are named by the kind of object being written, so each
// sweeper removes only its own kind's abandoned ones.
const (
	imageTemp = ".put-"
	videoTemp = ".vput-"
)

func tempPrefix(name string) string {
	if videoName(name) {
		return videoTemp
	}
	return imageTemp
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Delete removes dir/name; a missing file is no error.
func (d *Dir) Delete(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(d.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
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

// Sweep deletes images (and their abandoned temporary files) last written
// before cutoff, and returns how many it removed. Videos, the signing key
// and anything else that is not a stored image are left alone.
func (d *Dir) Sweep(cutoff time.Time) (int, error) {
	return d.sweep(cutoff, imageName, imageTemp)
}

// SweepVideos deletes videos (and their abandoned temporary files) last
// written before cutoff, and returns how many it removed; images and
// anything else are left alone.
func (d *Dir) SweepVideos(cutoff time.Time) (int, error) {
	return d.sweep(cutoff, videoName, videoTemp)
}

func (d *Dir) sweep(cutoff time.Time, ours func(string) bool, temp string) (int, error) {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return 0, fmt.Errorf("imagestore: sweep %s: %w", d.dir, err)
	}
	n := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || (!ours(name) && !strings.HasPrefix(name, temp)) {
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

// Sweeper deletes images whose links have all expired, or with Videos set,
// videos past their lifetime (a backstop for the video tasks' own
// deletes). Run it in the background; it stops when ctx ends.
type Sweeper struct {
	Dir   *Dir
	TTL   time.Duration // link lifetime; files older than TTL plus a margin go
	Every time.Duration // 0: every 10 minutes
	// Videos sweeps videos (Dir.SweepVideos) instead of images (Dir.Sweep).
	Videos bool
	Now    func() time.Time
	Log    *slog.Logger
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
	sweep, kind := s.Dir.Sweep, "images"
	if s.Videos {
		sweep, kind = s.Dir.SweepVideos, "videos"
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		// A minute of margin: a link signed just before the file was
		// written is still honoured to its last second.
		n, err := sweep(now().Add(-s.TTL - time.Minute))
		if err != nil {
			log.Warn("image store: sweep failed", "kind", kind, "err", err)
		} else if n > 0 {
			log.Debug("image store: removed expired files", "kind", kind, "files", n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
