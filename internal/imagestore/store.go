// Package imagestore keeps the images the gateway answers with URLs when the
// upstream sent only base64 data (Imagen, the demo provider, GPT image
// models), and signs expiring URLs for them that the gateway itself serves.
// It keeps the finished videos of asynchronous video tasks the same way, in
// a backend of their own (see Options.Videos and video.go).
//
// A URL is {public base}/v1/images/files/{name}?exp={unix}&sig={mac}, where
// mac is an HMAC-SHA256 over the path and the expiry: a changed name, path
// or expiry, or an expired link, is refused. The bytes live in a Backend: a
// local directory by default, or an S3-compatible bucket.
package imagestore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// FilesPath is the path prefix the gateway serves stored images under.
const FilesPath = "/v1/images/files/"

// DefaultTTL is how long a URL stays valid when the config names no other
// (OpenAI's own image URLs last 60 minutes).
const DefaultTTL = time.Hour

// Errors the file handler maps to statuses.
var (
	// ErrNotFound: no such image (never stored, already swept, or a name
	// that is not one of ours).
	ErrNotFound = errors.New("imagestore: no such image")
	// ErrForbidden: the signature does not match the path and expiry.
	ErrForbidden = errors.New("imagestore: bad signature")
	// ErrExpired: the signature is right but the link has expired.
	ErrExpired = errors.New("imagestore: link expired")
	// ErrNotImage: the data to store is not an image type the gateway serves.
	ErrNotImage = errors.New("imagestore: not a png, jpeg, webp or gif image")
)

// Object is a stored image or video being read. Body is an io.ReadSeeker
// too (both backends can seek), which lets http.ServeContent answer range
// requests.
type Object struct {
	Body        io.ReadCloser
	Size        int64 // -1 when unknown
	ContentType string
	ModTime     time.Time
}

// Backend holds the bytes. Names are validated before they reach it.
type Backend interface {
	// Put stores what r yields under name (names are random, so it replaces
	// nothing) and returns how many bytes that was. It streams: memory use
	// does not grow with the object. Nothing is stored, not even in part,
	// when reading r or writing fails.
	Put(ctx context.Context, name string, r io.Reader, contentType string) (int64, error)
	// Get opens a stored object; ErrNotFound when there is none.
	Get(ctx context.Context, name string) (Object, error)
	// Delete removes a stored object; a missing one is no error.
	Delete(ctx context.Context, name string) error
}

// Options configure a Store.
type Options struct {
	Backend Backend // images
	// Videos keeps videos (SaveVideo, OpenVideo, DeleteVideo), apart from
	// the images: a Dir of its own, or an S3 backend with its own prefix.
	// nil: the store keeps no videos and SaveVideo fails.
	Videos Backend
	Key    []byte        // HMAC key, at least 32 bytes (see LoadKey)
	TTL    time.Duration // URL lifetime; 0 means DefaultTTL
	// PublicURL is the scheme://host[/prefix] clients reach the gateway
	// at; "" takes the base the caller passes to URL.
	PublicURL string
	Now       func() time.Time // nil: time.Now
}

// Store saves images and signs and checks their URLs. It is safe for
// concurrent use.
type Store struct {
	backend Backend
	videos  Backend
	signer  signer
	ttl     time.Duration
	public  string
	now     func() time.Time
}

// New checks o and builds a store.
func New(o Options) (*Store, error) {
	if o.Backend == nil {
		return nil, errors.New("imagestore: no backend")
	}
	if len(o.Key) < 32 {
		return nil, fmt.Errorf("imagestore: signing key of %d bytes is too short (need 32)", len(o.Key))
	}
	if o.TTL < 0 {
		return nil, fmt.Errorf("imagestore: negative url_ttl %s", o.TTL)
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	pub := strings.TrimRight(o.PublicURL, "/")
	if pub != "" && !strings.HasPrefix(pub, "http://") && !strings.HasPrefix(pub, "https://") {
		return nil, fmt.Errorf("imagestore: public_url %q must be an http(s) URL", o.PublicURL)
	}
	return &Store{backend: o.Backend, videos: o.Videos, signer: signer{key: append([]byte(nil), o.Key...)}, ttl: o.TTL, public: pub, now: o.Now}, nil
}

// TTL is how long a new URL stays valid.
func (s *Store) TTL() time.Duration { return s.ttl }

// Save stores an image under a new random name and returns the name. The
// type is read from the bytes, never from what a vendor claims; anything
// that is not png, jpeg, webp or gif is refused with ErrNotImage, so the
// gateway never serves other content from its own origin.
func (s *Store) Save(ctx context.Context, data []byte) (string, error) {
	ext, ct := Sniff(data)
	if ext == "" {
		return "", ErrNotImage
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", fmt.Errorf("imagestore: random name: %w", err)
	}
	name := hex.EncodeToString(id[:]) + "." + ext
	if _, err := s.backend.Put(ctx, name, bytes.NewReader(data), ct); err != nil {
		return "", fmt.Errorf("imagestore: store %s: %w", name, err)
	}
	return name, nil
}

// URL is the signed URL of name, valid for the store's TTL from now. base
// is the gateway's public scheme://host; the configured public_url, when
// there is one, wins over it.
func (s *Store) URL(base, name string) string {
	if s.public != "" {
		base = s.public
	}
	exp := s.now().Add(s.ttl).Unix()
	path := FilesPath + name
	return strings.TrimRight(base, "/") + path + "?exp=" + fmt.Sprint(exp) + "&sig=" + s.signer.sign(imageDomain, path, exp)
}

// Check verifies the signature of a request for path (the URL path as
// served, FilesPath + name) with the exp and sig query values: ErrForbidden
// for a wrong or missing signature, ErrExpired for a past expiry.
func (s *Store) Check(path, exp, sig string) error {
	return s.signer.check(imageDomain, path, exp, sig, s.now())
}

// Open returns a stored image by name; ErrNotFound for a name the store
// could not have made, and for a video's name.
func (s *Store) Open(ctx context.Context, name string) (Object, error) {
	if !imageName(name) {
		return Object{}, ErrNotFound
	}
	return s.backend.Get(ctx, name)
}

// ValidName reports whether name is one the store makes, for an image or a
// video: 32 lowercase hex digits, a dot, and a known extension. Nothing else
// reaches a backend, so no path tricks either.
func ValidName(name string) bool {
	id, ext, ok := strings.Cut(name, ".")
	if !ok || len(id) != 32 || contentTypes[ext] == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// contentTypes are the types the store keeps, by extension: images, and
// the videos of videoExts.
var contentTypes = map[string]string{"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp", "gif": "image/gif",
	"mp4": "video/mp4", "webm": "video/webm"}

// videoExts are the extensions of stored videos; every other known one is
// an image's.
var videoExts = map[string]bool{"mp4": true, "webm": true}

// imageName and videoName tell the two kinds of valid names apart, so an
// image request never opens a video and the image sweeper never deletes one.
func imageName(name string) bool {
	_, ext, _ := strings.Cut(name, ".")
	return ValidName(name) && !videoExts[ext]
}

func videoName(name string) bool {
	_, ext, _ := strings.Cut(name, ".")
	return ValidName(name) && videoExts[ext]
}

// ContentType is the type served for a stored name's extension.
func ContentType(name string) string {
	_, ext, _ := strings.Cut(name, ".")
	return contentTypes[ext]
}

// Sniff reads an image type from its first bytes: the extension and the
// content type, or "" for anything else.
func Sniff(data []byte) (ext, contentType string) {
	switch ct := http.DetectContentType(data); ct {
	case "image/png":
		return "png", ct
	case "image/jpeg":
		return "jpg", ct
	case "image/webp":
		return "webp", ct
	case "image/gif":
		return "gif", ct
	}
	return "", ""
}
