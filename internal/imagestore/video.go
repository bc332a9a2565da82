package imagestore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// DefaultVideoLimit is the largest video SaveVideo keeps when the caller
// passes no limit.
const DefaultVideoLimit int64 = 512 << 20

// Errors of the video side; both are final for a video task (retrying
// fetches the same bytes).
var (
	// ErrNotVideo: the bytes to store are not an mp4/mov or webm video.
	ErrNotVideo = errors.New("imagestore: not an mp4 or webm video")
	// ErrTooLarge: the video is longer than the limit given.
	ErrTooLarge = errors.New("imagestore: video too large")
)

// errNoVideos: the store was built without Options.Videos.
var errNoVideos = errors.New("imagestore: no video backend configured")

// sniffLen is how many leading bytes SniffVideo needs: an ISO BMFF box
// header (size, "ftyp") and the major brand.
const sniffLen = 12

// SniffVideo reads a video type from its first bytes (at least 12): the
// extension and the content type, or "" for anything else. MP4 and
// QuickTime files (an "ftyp" box first) are served as video/mp4, WebM and
// Matroska (an EBML header) as video/webm. Still images that share the
// ftyp box (HEIF, AVIF) are not videos.
func SniffVideo(head []byte) (ext, contentType string) {
	if len(head) < sniffLen {
		return "", ""
	}
	switch {
	case string(head[4:8]) == "ftyp" && !imageBrands[string(head[8:12])]:
		return "mp4", "video/mp4"
	case string(head[:4]) == "\x1a\x45\xdf\xa3":
		return "webm", "video/webm"
	}
	return "", ""
}

// imageBrands are major brands of HEIF and AVIF images and image sequences.
var imageBrands = map[string]bool{"avif": true, "avis": true, "heic": true, "heix": true, "heim": true, "heis": true,
	"hevc": true, "hevx": true, "mif1": true, "msf1": true}

// SaveVideo stores the video read from r under a new random name (32 hex
// digits and .mp4 or .webm) in the videos backend, and returns the name,
// its size and its sniffed type. It streams: r is never held in memory
// whole, and its length is counted as it is read, whatever a header
// claimed. More than limit bytes (limit <= 0: DefaultVideoLimit) fails
// with ErrTooLarge, bytes that are not a video with ErrNotVideo; in both
// cases, as on any error, nothing is stored.
func (s *Store) SaveVideo(ctx context.Context, r io.Reader, limit int64) (key string, size int64, contentType string, err error) {
	if s.videos == nil {
		return "", 0, "", errNoVideos
	}
	if limit <= 0 {
		limit = DefaultVideoLimit
	}
	lr := &limitReader{r: r, left: limit}
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(lr, head)
	switch {
	case lr.over:
		return "", 0, "", tooLarge(limit)
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF):
		return "", 0, "", fmt.Errorf("imagestore: read video: %w", err)
	}
	ext, ct := SniffVideo(head[:n])
	if ext == "" {
		return "", 0, "", ErrNotVideo
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", 0, "", fmt.Errorf("imagestore: random name: %w", err)
	}
	name := hex.EncodeToString(id[:]) + "." + ext
	size, err = s.videos.Put(ctx, name, io.MultiReader(bytes.NewReader(head[:n]), lr), ct)
	switch {
	case lr.over:
		return "", 0, "", tooLarge(limit)
	case err != nil:
		return "", 0, "", fmt.Errorf("imagestore: store %s: %w", name, err)
	}
	return name, size, ct, nil
}

func tooLarge(limit int64) error {
	return fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)
}

// OpenVideo returns a stored video by name; ErrNotFound for a name the
// store could not have made for a video (an image's included). Its Body is
// an io.ReadSeeker, for http.ServeContent.
func (s *Store) OpenVideo(ctx context.Context, key string) (Object, error) {
	if s.videos == nil || !videoName(key) {
		return Object{}, ErrNotFound
	}
	return s.videos.Get(ctx, key)
}

// DeleteVideo removes a stored video. One already gone is no error, and
// neither is a name the store could not have made for a video: nothing of
// that name can be stored.
func (s *Store) DeleteVideo(ctx context.Context, key string) error {
	if s.videos == nil || !videoName(key) {
		return nil
	}
	if err := s.videos.Delete(ctx, key); err != nil {
		return fmt.Errorf("imagestore: delete %s: %w", key, err)
	}
	return nil
}

// limitReader passes r through until more than its limit has been read,
// and then fails with ErrTooLarge, so a backend stops and stores nothing.
// It reads at most one byte past the limit.
type limitReader struct {
	r    io.Reader
	left int64 // bytes still allowed
	over bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.over {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		l.over = true
		return n, ErrTooLarge
	}
	return n, err
}
