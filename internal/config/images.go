package config

import (
	"net/url"
	"strings"
	"time"
)

// defaultImageURLTTL is how long a signed image URL stays valid.
const defaultImageURLTTL = Duration(time.Hour)

// minSigningKey is the shortest signing_key accepted without a warning.
const minSigningKey = 32

// Images configures where the gateway keeps images it answers with URLs
// (when a vendor sent only base64) and how those URLs are signed.
type Images struct {
	// Dir holds the images and, without a signing_key, the generated key;
	// "" means next to the SQLite database (./modelgate-data/images by default).
	Dir string `yaml:"dir"`
	// URLTTL is how long a signed URL stays valid (default 1h); images are
	// deleted once all their URLs have expired.
	URLTTL Duration `yaml:"url_ttl"`
	// SigningKey is the secret URL signatures are derived from. Without one,
	// a random key is generated once and kept in Dir, which replicas share
	// only if they share Dir; replicas must otherwise set the same secret.
	SigningKey string `yaml:"signing_key"`
	// PublicURL is the scheme://host[/prefix] clients reach the gateway at;
	// it defaults to the top-level public_url (see publicurl.go for what
	// applies without either; never the request's Host).
	PublicURL string `yaml:"public_url"`
	// S3 keeps the images in an S3-compatible bucket instead of Dir (the
	// signing key file, when no signing_key is set, stays in Dir).
	S3 *ImagesS3 `yaml:"s3"`
}

// ImagesS3 is an S3-compatible bucket (AWS S3, MinIO, Cloudflare R2, ...),
// addressed path-style. The gateway never deletes from it: give the bucket
// a lifecycle rule that expires objects after a day.
type ImagesS3 struct {
	Endpoint  string `yaml:"endpoint"` // e.g. https://s3.eu-west-1.amazonaws.com
	Region    string `yaml:"region"`   // default us-east-1
	Bucket    string `yaml:"bucket"`
	Prefix    string `yaml:"prefix"` // key prefix, e.g. images/
	AccessKey string `yaml:"access_key"`
	SecretKey string `yaml:"secret_key"`
}

func (c *Config) applyImagesDefaults() {
	defaultDuration(&c.Images.URLTTL, defaultImageURLTTL, c.given("images.url_ttl"))
}

// imageStore checks the images section.
func (v *validator) imageStore() {
	c := v.c
	at := func(key string) int { return c.line("images."+key, c.line("images", 0)) }
	v.positive(at("url_ttl"), "images.url_ttl", c.Images.URLTTL)
	if p := c.Images.PublicURL; p != "" {
		u, err := url.Parse(p)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			v.errorf(at("public_url"), "images.public_url must be an http(s) URL like https://gateway.example.com, got %q", p)
		}
	}
	if s3 := c.Images.S3; s3 != nil {
		v.imagesS3(s3, at)
	}
	if k := c.Images.SigningKey; k != "" {
		if len(k) < minSigningKey {
			v.warnf(at("signing_key"), "images.signing_key is shorter than %d characters; use a long random secret", minSigningKey)
		}
		if c.given("images.signing_key") && !c.fromEnv("images.signing_key") {
			v.warnf(at("signing_key"), "images.signing_key is written literally in the file; secrets should come from the environment (signing_key: ${VAR})")
		}
	}
}

// imagesS3 checks the images.s3 block.
func (v *validator) imagesS3(s3 *ImagesS3, at func(string) int) {
	c := v.c
	if u, err := url.Parse(s3.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.errorf(at("s3.endpoint"), "images.s3.endpoint must be an http(s) URL like https://s3.eu-west-1.amazonaws.com, got %q", s3.Endpoint)
	}
	if s3.Bucket == "" || strings.Contains(s3.Bucket, "/") {
		v.errorf(at("s3.bucket"), "images.s3.bucket must be a bucket name, got %q", s3.Bucket)
	}
	if s3.AccessKey == "" || s3.SecretKey == "" {
		v.errorf(at("s3"), "images.s3 needs access_key and secret_key")
	}
	if s3.SecretKey != "" && c.given("images.s3.secret_key") && !c.fromEnv("images.s3.secret_key") {
		v.warnf(at("s3.secret_key"), "images.s3.secret_key is written literally in the file; secrets should come from the environment (secret_key: ${VAR})")
	}
	if c.Images.SigningKey == "" {
		v.warnf(at("s3"), "images.s3 is set without images.signing_key: replicas that do not share images.dir will not accept each other's image URLs; set the same signing_key on every replica")
	}
}

// Defaults of the fetch section: see fetch.DefaultMaxImages and its
// neighbours for why.
const (
	defaultFetchMaxImages     = 16
	defaultFetchMaxTotalBytes = 32 << 20
	defaultFetchTimeout       = Duration(30 * time.Second)
)

// Fetch bounds what one request may make the gateway download: the images
// a client names by http(s) URL for a vendor that cannot read URLs itself
// (Gemini). Past a limit the request is refused with a 400 naming the
// image, before the vendor is called.
type Fetch struct {
	// MaxImages is how many image URLs one request may name (default 16);
	// 0 turns downloading image URLs off (data: URLs still work).
	MaxImages int `yaml:"max_images"`
	// MaxTotalBytes bounds the bytes of one request's images together
	// (default 32 MiB); each image is also limited to 20 MiB.
	MaxTotalBytes int64 `yaml:"max_total_bytes"`
	// Timeout bounds the time to download all of one request's images
	// (default 30s); each image is also limited to 10 s.
	Timeout Duration `yaml:"timeout"`
}

func (c *Config) applyFetchDefaults() {
	if c.Fetch.MaxImages == 0 && !c.given("fetch.max_images") {
		c.Fetch.MaxImages = defaultFetchMaxImages
	}
	if c.Fetch.MaxTotalBytes == 0 && !c.given("fetch.max_total_bytes") {
		c.Fetch.MaxTotalBytes = defaultFetchMaxTotalBytes
	}
	defaultDuration(&c.Fetch.Timeout, defaultFetchTimeout, c.given("fetch.timeout"))
}

// fetchLimits checks the fetch section.
func (v *validator) fetchLimits() {
	c := v.c
	at := func(key string) int { return c.line("fetch."+key, c.line("fetch", 0)) }
	if c.Fetch.MaxImages < 0 {
		v.errorf(at("max_images"), "fetch.max_images must be 0 (no image URLs downloaded) or more, got %d", c.Fetch.MaxImages)
	}
	if c.Fetch.MaxTotalBytes <= 0 {
		v.errorf(at("max_total_bytes"), "fetch.max_total_bytes must be a positive number of bytes, got %d", c.Fetch.MaxTotalBytes)
	}
	v.positive(at("timeout"), "fetch.timeout", c.Fetch.Timeout)
}
