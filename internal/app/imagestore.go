package app

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/video"
)

// imagesDir is where images answered as URLs are kept: images.dir, else
// next to an SQLite database, else ./modelgate-data/images.
func imagesDir(cfg *config.Config) string {
	if cfg.Images.Dir != "" {
		return cfg.Images.Dir
	}
	if kind, target, err := cfg.DatabaseKind(); err == nil && kind == "sqlite" {
		return filepath.Join(filepath.Dir(target), "images")
	}
	return filepath.Join("modelgate-data", "images")
}

// videosDir is where finished videos are kept: video.dir, else next to an
// SQLite database, else ./modelgate-data/videos.
func videosDir(cfg *config.Config) string {
	if cfg.Video.Dir != "" {
		return cfg.Video.Dir
	}
	if kind, target, err := cfg.DatabaseKind(); err == nil && kind == "sqlite" {
		return filepath.Join(filepath.Dir(target), "videos")
	}
	return filepath.Join("modelgate-data", "videos")
}

// newImageStore builds the image store: local directories, with sweepers
// that delete images whose URLs have all expired and orphaned videos, or an S3-compatible
// bucket (whose lifecycle rules expire them; there are no sweepers then).
func newImageStore(cfg *config.Config, now func() time.Time, log *slog.Logger) (*imagestore.Store, []*imagestore.Sweeper, error) {
	dir := imagesDir(cfg)
	key, err := imagestore.LoadKey(dir, cfg.Images.SigningKey)
	if err != nil {
		return nil, nil, fmt.Errorf("images: %w", err)
	}
	var (
		backend, videos imagestore.Backend
		d, vd           *imagestore.Dir
	)
	if s3 := cfg.Images.S3; s3 != nil {
		o := imagestore.S3Options{Endpoint: s3.Endpoint, Region: s3.Region, Bucket: s3.Bucket,
			Prefix: s3.Prefix, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey}
		if backend, err = imagestore.NewS3(o); err == nil {
			o.Prefix += "videos/"        // videos live 24 h; give them their own lifecycle rule
			o.Timeout = 30 * time.Minute // covers a whole Get, including a client reading a large video
			videos, err = imagestore.NewS3(o)
		}
	} else {
		if d, err = imagestore.NewDir(dir); err == nil {
			backend = d
			vd, err = imagestore.NewDir(videosDir(cfg))
			videos = vd
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("images: %w", err)
	}
	ttl := time.Duration(cfg.Images.URLTTL)
	s, err := imagestore.New(imagestore.Options{Backend: backend, Videos: videos, Key: key, TTL: ttl, PublicURL: cfg.Images.PublicURL, Now: now})
	if err != nil {
		return nil, nil, fmt.Errorf("images: %w", err)
	}
	if d == nil {
		return s, nil, nil
	}
	// The poller deletes each task's video when it purges the task; the
	// video sweeper only catches files a crash left without a task.
	return s, []*imagestore.Sweeper{{Dir: d, TTL: s.TTL(), Now: now, Log: log},
		{Dir: vd, TTL: video.TTL, Videos: true, Now: now, Log: log}}, nil
}
