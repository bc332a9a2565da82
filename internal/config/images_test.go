package config

import (
	"strings"
	"testing"
	"time"
)

func TestImagesSection(t *testing.T) {
	base := "providers:\n  - {name: demo, type: demo}\n"
	tests := []struct {
		name, yaml string
		env        map[string]string
		errs, warn []string // substrings of the problems expected
		check      func(t *testing.T, c *Config)
	}{
		{name: "defaults", yaml: base, check: func(t *testing.T, c *Config) {
			if c.Images.URLTTL != Duration(time.Hour) || c.Images.Dir != "" || c.Images.S3 != nil {
				t.Fatalf("%+v", c.Images)
			}
		}},
		{name: "all set", yaml: base + "images:\n  dir: /var/lib/mg/images\n  url_ttl: 15m\n  signing_key: ${SIGN}\n  public_url: https://gw.example.com\n",
			env: map[string]string{"SIGN": strings.Repeat("s", 40)}, check: func(t *testing.T, c *Config) {
				if c.Images.URLTTL != Duration(15*time.Minute) || c.Images.SigningKey != strings.Repeat("s", 40) || c.Images.PublicURL != "https://gw.example.com" {
					t.Fatalf("%+v", c.Images)
				}
			}},
		{name: "s3", yaml: base + "images:\n  signing_key: ${SIGN}\n  s3:\n    endpoint: http://minio:9000\n    bucket: imgs\n    access_key: ak\n    secret_key: ${S3}\n",
			env: map[string]string{"SIGN": strings.Repeat("s", 40), "S3": "x"}, check: func(t *testing.T, c *Config) {
				if c.Images.S3 == nil || c.Images.S3.Bucket != "imgs" || c.Images.S3.SecretKey != "x" {
					t.Fatalf("%+v", c.Images.S3)
				}
			}},
		{name: "zero ttl", yaml: base + "images:\n  url_ttl: 0s\n", errs: []string{"images.url_ttl must be a positive duration"}},
		{name: "bad public_url", yaml: base + "images:\n  public_url: gw.example.com\n", errs: []string{"images.public_url must be an http(s) URL"}},
		{name: "literal short key", yaml: base + "images:\n  signing_key: abc\n", warn: []string{"shorter than 32", "written literally"}},
		{name: "unknown key", yaml: base + "images:\n  ttl: 1h\n", errs: []string{`unknown key "ttl"`}},
		{name: "incomplete s3", yaml: base + "images:\n  s3:\n    endpoint: minio\n", errs: []string{"images.s3.endpoint", "images.s3.bucket", "access_key and secret_key"},
			warn: []string{"without images.signing_key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ps, err := parse([]byte(tt.yaml), envOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			var errs, warns []string
			for _, p := range ps {
				if p.Warning {
					warns = append(warns, p.Message)
				} else {
					errs = append(errs, p.Message)
				}
			}
			for _, want := range [][2][]string{{tt.errs, errs}, {tt.warn, warns}} {
				if len(want[0]) != len(want[1]) {
					t.Fatalf("problems %q, want %q", want[1], want[0])
				}
				for i := range want[0] {
					if !strings.Contains(strings.Join(want[1], "\n"), want[0][i]) {
						t.Fatalf("problems %q, want one containing %q", want[1], want[0][i])
					}
				}
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}
