package imagestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
)

// Leading bytes of real files of each kind.
var (
	mp4Head  = []byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41")
	movHead  = []byte("\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00qt  ")
	webmHead = []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\x82\x84webm")
	avifHead = []byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf")
)

// source yields head, then a byte pattern up to size bytes in all, without
// holding them; with failAt > 0 it fails once that many bytes were read.
// read counts what was handed out.
type source struct {
	head         []byte
	size, failAt int64
	read         int64
}

var errSource = errors.New("upstream connection reset")

func (s *source) Read(p []byte) (int, error) {
	if s.failAt > 0 && s.read >= s.failAt {
		return 0, errSource
	}
	if s.read >= s.size {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > s.size-s.read {
		n = s.size - s.read
	}
	if s.failAt > 0 && n > s.failAt-s.read {
		n = s.failAt - s.read
	}
	for i := range n {
		p[i] = s.at(s.read + i)
	}
	s.read += n
	return int(n), nil
}

func (s *source) at(off int64) byte {
	if off < int64(len(s.head)) {
		return s.head[off]
	}
	return byte(off * 7)
}

// bytes is the whole content, for comparing small videos.
func (s *source) bytes() []byte {
	b := make([]byte, s.size)
	for i := range b {
		b[i] = s.at(int64(i))
	}
	return b
}

// videoFixture is a store whose videos go to the backend under test, and
// what that backend holds (temporary files included).
type videoFixture struct {
	store  *Store
	images Backend
	stored func(t *testing.T) []string
}

func dirVideoFixture(t *testing.T) videoFixture {
	images, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	videos, err := NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return videoFixture{store: newVideoStore(t, images, videos), images: images, stored: func(t *testing.T) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}}
}

// s3VideoFixture keeps images and videos in one bucket under two prefixes,
// with small parts so that a few hundred KiB take a multipart upload.
func s3VideoFixture(t *testing.T) (videoFixture, *fakeS3) {
	f := newFakeS3(t)
	images := f.backend(t, S3Options{Prefix: "gw/"})
	videos := f.backend(t, S3Options{Prefix: "gw/videos/"})
	videos.partSize = 64 << 10
	return videoFixture{store: newVideoStore(t, images, videos), images: images, stored: func(t *testing.T) []string {
		list, err := f.mem.ListBucket(testBucket, &gofakes3.Prefix{HasPrefix: true, Prefix: "gw/videos/"}, gofakes3.ListBucketPage{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range list.Contents {
			names = append(names, c.Key)
		}
		return names
	}}, f
}

func newVideoStore(t *testing.T, images, videos Backend) *Store {
	t.Helper()
	s, err := New(Options{Backend: images, Videos: videos, Key: bytes.Repeat([]byte("v"), 32)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDirVideos(t *testing.T) { videoSuite(t, dirVideoFixture) }

func TestS3Videos(t *testing.T) {
	videoSuite(t, func(t *testing.T) videoFixture { fx, _ := s3VideoFixture(t); return fx })
}

// videoSuite is what the video side must do on every backend.
func videoSuite(t *testing.T, newFixture func(t *testing.T) videoFixture) {
	ctx := context.Background()

	t.Run("save and open", func(t *testing.T) {
		for _, tc := range []struct {
			name       string
			src        *source
			limit      int64
			ext, ctype string
		}{
			{"mp4", &source{head: mp4Head, size: 1000}, 1 << 20, ".mp4", "video/mp4"},
			{"mov", &source{head: movHead, size: 500}, 1 << 20, ".mp4", "video/mp4"},
			{"webm", &source{head: webmHead, size: 700}, 1 << 20, ".webm", "video/webm"},
			{"several parts", &source{head: mp4Head, size: 200<<10 + 3}, 1 << 20, ".mp4", "video/mp4"},
			{"exactly a part", &source{head: mp4Head, size: 64 << 10}, 1 << 20, ".mp4", "video/mp4"},
			{"exactly the limit", &source{head: webmHead, size: 4096}, 4096, ".webm", "video/webm"},
			{"no limit given", &source{head: mp4Head, size: 100}, 0, ".mp4", "video/mp4"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				fx := newFixture(t)
				key, size, ct, err := fx.store.SaveVideo(ctx, tc.src, tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasSuffix(key, tc.ext) || !ValidName(key) || size != tc.src.size || ct != tc.ctype {
					t.Fatalf("saved %q, %d bytes, %q", key, size, ct)
				}
				obj, err := fx.store.OpenVideo(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(obj.Body)
				if err := errors.Join(err, obj.Body.Close()); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, tc.src.bytes()) || obj.Size != size || obj.ContentType != tc.ctype {
					t.Fatalf("read %d bytes (equal: %v), size %d, type %q", len(got), bytes.Equal(got, tc.src.bytes()), obj.Size, obj.ContentType)
				}
				if n := len(fx.stored(t)); n != 1 {
					t.Fatalf("%d objects stored: %v", n, fx.stored(t))
				}
			})
		}
	})

	t.Run("refused, storing nothing", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			src   *source
			limit int64
			want  error
		}{
			{"html", &source{head: []byte("<html><script>alert(1)</script>"), size: 100}, 1 << 20, ErrNotVideo},
			{"png", &source{head: pngHeader, size: 100}, 1 << 20, ErrNotVideo},
			{"avif still image", &source{head: avifHead, size: 100}, 1 << 20, ErrNotVideo},
			{"shorter than a header", &source{head: mp4Head, size: 11}, 1 << 20, ErrNotVideo},
			{"empty", &source{size: 0}, 1 << 20, ErrNotVideo},
			{"one byte over", &source{head: mp4Head, size: 4097}, 4096, ErrTooLarge},
			{"over before the header", &source{head: mp4Head, size: 100}, 5, ErrTooLarge},
			{"over after several parts", &source{head: webmHead, size: 1 << 30}, 300 << 10, ErrTooLarge},
			{"not a video, and long", &source{head: []byte("<html>.............."), size: 1 << 30}, 1 << 20, ErrNotVideo},
			{"upstream fails midway", &source{head: mp4Head, size: 1 << 20, failAt: 150 << 10}, 1 << 20, errSource},
		} {
			t.Run(tc.name, func(t *testing.T) {
				fx := newFixture(t)
				key, _, _, err := fx.store.SaveVideo(ctx, tc.src, tc.limit)
				if !errors.Is(err, tc.want) || key != "" {
					t.Fatalf("SaveVideo = %q, %v; want %v", key, err, tc.want)
				}
				if tc.want != errSource && (errors.Is(err, ErrNotVideo) == errors.Is(err, ErrTooLarge)) {
					t.Fatalf("error %v is not exactly one of the final errors", err)
				}
				if got := fx.stored(t); len(got) != 0 {
					t.Fatalf("left behind: %v", got)
				}
				// The limit is counted while streaming: never more than one
				// byte past it is read, whatever the source's length.
				if tc.src.read > tc.limit+1 {
					t.Fatalf("read %d bytes with a limit of %d", tc.src.read, tc.limit)
				}
			})
		}
	})

	t.Run("delete is idempotent", func(t *testing.T) {
		fx := newFixture(t)
		key, _, _, err := fx.store.SaveVideo(ctx, &source{head: mp4Head, size: 300}, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if err := fx.store.DeleteVideo(ctx, key); err != nil {
				t.Fatalf("delete %d: %v", i, err)
			}
			if _, err := fx.store.OpenVideo(ctx, key); !errors.Is(err, ErrNotFound) {
				t.Fatalf("after delete %d: %v", i, err)
			}
		}
		if got := fx.stored(t); len(got) != 0 {
			t.Fatalf("left behind: %v", got)
		}
	})

	t.Run("images and videos kept apart", func(t *testing.T) {
		fx := newFixture(t)
		img, err := fx.store.Save(ctx, pngHeader)
		if err != nil {
			t.Fatal(err)
		}
		vid, _, _, err := fx.store.SaveVideo(ctx, &source{head: webmHead, size: 100}, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fx.store.Open(ctx, vid); !errors.Is(err, ErrNotFound) {
			t.Errorf("Open(video) = %v", err)
		}
		if _, err := fx.store.OpenVideo(ctx, img); !errors.Is(err, ErrNotFound) {
			t.Errorf("OpenVideo(image) = %v", err)
		}
		if _, err := fx.store.Save(ctx, mp4Head); !errors.Is(err, ErrNotImage) {
			t.Errorf("a video saved as an image: %v", err)
		}
		if err := fx.store.DeleteVideo(ctx, img); err != nil {
			t.Errorf("DeleteVideo(image) = %v", err)
		}
		obj, err := fx.store.Open(ctx, img)
		if err != nil {
			t.Fatalf("DeleteVideo removed an image: %v", err)
		}
		obj.Body.Close()
	})

	t.Run("ranges", func(t *testing.T) {
		fx := newFixture(t)
		src := &source{head: mp4Head, size: 100}
		key, _, _, err := fx.store.SaveVideo(ctx, src, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		png := append(append([]byte(nil), pngHeader...), bytes.Repeat([]byte{'p'}, 40)...)
		img, err := fx.store.Save(ctx, png)
		if err != nil {
			t.Fatal(err)
		}
		all := src.bytes()
		for _, tc := range []struct {
			name, rng    string
			image        bool
			status       int
			want         []byte
			contentRange string
		}{
			{"bytes 10-19", "bytes=10-19", false, http.StatusPartialContent, all[10:20], "bytes 10-19/100"},
			{"suffix", "bytes=-5", false, http.StatusPartialContent, all[95:], "bytes 95-99/100"},
			{"open-ended", "bytes=90-", false, http.StatusPartialContent, all[90:], "bytes 90-99/100"},
			{"from the start", "bytes=0-3", false, http.StatusPartialContent, all[:4], "bytes 0-3/100"},
			{"whole", "", false, http.StatusOK, all, ""},
			{"past the end", "bytes=200-300", false, http.StatusRequestedRangeNotSatisfiable, nil, "bytes */100"},
			{"image bytes 10-19", "bytes=10-19", true, http.StatusPartialContent, png[10:20], fmt.Sprintf("bytes 10-19/%d", len(png))},
		} {
			t.Run(tc.name, func(t *testing.T) {
				open := fx.store.OpenVideo
				name := key
				if tc.image {
					open, name = fx.store.Open, img
				}
				obj, err := open(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				defer obj.Body.Close()
				rs, ok := obj.Body.(io.ReadSeeker)
				if !ok {
					t.Fatalf("body %T cannot seek", obj.Body)
				}
				req := httptest.NewRequest(http.MethodGet, "/v1/videos/generations/task_1/content", nil)
				if tc.rng != "" {
					req.Header.Set("Range", tc.rng)
				}
				rec := httptest.NewRecorder()
				rec.Header().Set("Content-Type", obj.ContentType)
				http.ServeContent(rec, req, "", obj.ModTime, rs)
				if rec.Code != tc.status || rec.Header().Get("Content-Range") != tc.contentRange {
					t.Fatalf("status %d, Content-Range %q", rec.Code, rec.Header().Get("Content-Range"))
				}
				if tc.want != nil && !bytes.Equal(rec.Body.Bytes(), tc.want) {
					t.Fatalf("body %q, want %q", rec.Body.Bytes(), tc.want)
				}
			})
		}
	})
}

// Seeking reads the rest of the object from the offset asked for, with one
// ranged GET pinned to the first response's ETag; reading on from where a
// body is costs no new request.
func TestS3SeekRequests(t *testing.T) {
	fx, f := s3VideoFixture(t)
	ctx := context.Background()
	src := &source{head: mp4Head, size: 1000}
	key, _, _, err := fx.store.SaveVideo(ctx, src, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := fx.store.OpenVideo(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Body.Close()
	rs := obj.Body.(io.ReadSeeker)
	before := len(f.requests())
	var got []byte
	for _, step := range []struct {
		off  int64
		n    int
		gets int // GETs sent so far
	}{
		{0, 4, 0},     // the first response's body
		{4, 4, 0},     // reading on
		{500, 10, 1},  // a seek: a ranged GET
		{510, 10, 1},  // reading on from there
		{990, 100, 2}, // another seek, to the end
	} {
		if _, err := rs.Seek(step.off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, step.n)
		n, err := io.ReadFull(rs, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
		if gets := len(f.requests()) - before; gets != step.gets {
			t.Fatalf("at %d: %d requests, want %d", step.off, gets, step.gets)
		}
	}
	all := src.bytes()
	want := slices.Concat(all[0:8], all[500:520], all[990:])
	if !bytes.Equal(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	reqs := f.requests()[before:]
	for i, wantRange := range []string{"bytes=500-", "bytes=990-"} {
		r := reqs[i]
		if r.Method != http.MethodGet || r.Header.Get("Range") != wantRange || r.Header.Get("If-Match") == "" {
			t.Errorf("request %d: %s Range %q If-Match %q", i, r.Method, r.Header.Get("Range"), r.Header.Get("If-Match"))
		}
	}
}

// A video larger than a part goes up as a multipart upload whose every
// request signs its payload hash (no aws-chunked bodies); a failed one is
// aborted, so the bucket keeps no parts.
func TestS3MultipartWire(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		src       *source
		wantErr   error
		wantParts int
		wantLast  string // query of the last request
	}{
		{"completed", &source{head: mp4Head, size: 150 << 10}, nil, 3, "uploadId="},
		{"aborted", &source{head: mp4Head, size: 1 << 20}, ErrTooLarge, 3, "uploadId="},
		{"small: one plain PUT", &source{head: mp4Head, size: 10 << 10}, nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx, f := s3VideoFixture(t)
			_, _, _, err := fx.store.SaveVideo(ctx, tc.src, 250<<10)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("SaveVideo = %v, want %v", err, tc.wantErr)
			}
			reqs := f.requests()
			parts := 0
			for i, r := range reqs {
				if strings.Contains(r.RawQuery, "partNumber=") {
					parts++
				}
				if r.Method == http.MethodPut && (r.Header.Get("X-Amz-Content-Sha256") != r.BodySHA256 ||
					strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked")) {
					t.Errorf("request %d (%s ?%s): payload hash %q, body hash %s", i, r.Method, r.RawQuery,
						r.Header.Get("X-Amz-Content-Sha256"), r.BodySHA256)
				}
				if !strings.HasPrefix(r.Path, "/"+testBucket+"/gw/videos/") {
					t.Errorf("request %d: path %s", i, r.Path)
				}
			}
			last := reqs[len(reqs)-1]
			if parts != tc.wantParts || !strings.HasPrefix(last.RawQuery, tc.wantLast) {
				t.Fatalf("%d parts; last request %s ?%s", parts, last.Method, last.RawQuery)
			}
			if tc.wantErr != nil && last.Method != http.MethodDelete {
				t.Fatalf("failed upload not aborted: last request %s ?%s", last.Method, last.RawQuery)
			}
		})
	}
}

// A failed or refused write leaves no temporary file in the directory.
func TestDirPutLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	d, err := NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	name := strings.Repeat("a", 32) + ".mp4"
	for _, tc := range []struct {
		name string
		ctx  context.Context
		src  io.Reader
		want error
	}{
		{"reader fails", ctx, &source{head: mp4Head, size: 1 << 20, failAt: 1000}, errSource},
		{"over the limit", ctx, &limitReader{r: &source{head: mp4Head, size: 1 << 20}, left: 5000}, ErrTooLarge},
		{"canceled", canceled, &source{head: mp4Head, size: 100}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := d.Put(tc.ctx, name, tc.src, "video/mp4"); !errors.Is(err, tc.want) {
				t.Fatalf("Put = %v, want %v", err, tc.want)
			}
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) != 0 {
				t.Fatalf("left behind: %v %v", entries, err)
			}
		})
	}
	// A context that ends mid-copy stops it too.
	mid, stop := context.WithCancel(ctx)
	r := readFunc(func(p []byte) (int, error) { stop(); return len(p), nil })
	if _, err := d.Put(mid, name, r, "video/mp4"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a context ending mid-copy = %v", err)
	}
	if err := d.Delete(ctx, name); err != nil {
		t.Fatalf("Delete of a missing file = %v", err)
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

func TestValidName(t *testing.T) {
	id := "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name         string
		valid, video bool
	}{
		{id + ".png", true, false},
		{id + ".jpg", true, false},
		{id + ".webp", true, false},
		{id + ".gif", true, false},
		{id + ".mp4", true, true},
		{id + ".webm", true, true},
		{id, false, false},
		{id + ".", false, false},
		{id + ".mov", false, false},
		{id + ".MP4", false, false},
		{id + ".mp4.png", false, false},
		{id + ".png.mp4", false, false},
		{id + ".mp4 ", false, false},
		{strings.ToUpper(id) + ".mp4", false, false},
		{id[:31] + ".mp4", false, false},
		{id + "0.mp4", false, false},
		{strings.Repeat(id, 100) + ".mp4", false, false},
		{"../" + id + ".mp4", false, false},
		{"..%2f" + id[5:] + ".mp4", false, false},
		{"videos/" + id + ".mp4", false, false},
		{id[:29] + "/.." + ".mp4", false, false},
		{id[:31] + "g.webm", false, false},
		{"", false, false},
		{".mp4", false, false},
		{".signing-key", false, false},
		{".vput-123", false, false},
	} {
		if got := ValidName(tc.name); got != tc.valid {
			t.Errorf("ValidName(%q) = %v", tc.name, got)
		}
		if got := videoName(tc.name); got != tc.video {
			t.Errorf("videoName(%q) = %v", tc.name, got)
		}
		if got := imageName(tc.name); got != (tc.valid && !tc.video) {
			t.Errorf("imageName(%q) = %v", tc.name, got)
		}
		if ct := ContentType(tc.name); tc.valid && ct == "" {
			t.Errorf("ContentType(%q) is empty", tc.name)
		}
	}
}

func TestSniffVideo(t *testing.T) {
	for _, tc := range []struct {
		name     string
		head     []byte
		ext, typ string
	}{
		{"mp4", mp4Head, "mp4", "video/mp4"},
		{"quicktime", movHead, "mp4", "video/mp4"},
		{"webm", webmHead, "webm", "video/webm"},
		{"avif", avifHead, "", ""},
		{"heic", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00"), "", ""},
		{"png", pngHeader, "", ""},
		{"jpeg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00"), "", ""},
		{"ftyp elsewhere", []byte("\x00\x00ftypisom\x00\x00\x00\x00"), "", ""},
		{"too short for a brand", mp4Head[:11], "", ""},
		{"ebml cut short", webmHead[:4], "", ""},
		{"empty", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ext, typ := SniffVideo(tc.head); ext != tc.ext || typ != tc.typ {
				t.Fatalf("SniffVideo = %q %q", ext, typ)
			}
		})
	}
}

func TestSignPath(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s, _ := newStore(t, &now)
	const path = "/v1/videos/generations/task_abc/content"
	exp := now.Add(24 * time.Hour)
	q := s.SignPath(path, exp)
	if !strings.HasPrefix(q, "exp=1700086400&sig=") {
		t.Fatalf("query %q", q)
	}
	_, sig, _ := strings.Cut(q, "&sig=")
	flip := []byte(sig)
	flip[5] ^= 1
	imgPath, imgExp, imgSig := parts(t, s.URL("https://gw.example", strings.Repeat("a", 32)+".png"))
	e, err := strconv.ParseInt(imgExp, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	pathSig := s.signer.sign(pathDomain, imgPath, e)
	cases := []struct {
		name           string
		path, exp, sig string
		at             time.Time
		want           error
	}{
		{"valid", path, "1700086400", sig, now, nil},
		{"valid until the last second", path, "1700086400", sig, exp.Add(-time.Second), nil},
		{"expired", path, "1700086400", sig, exp, ErrExpired},
		{"long expired", path, "1700086400", sig, exp.Add(48 * time.Hour), ErrExpired},
		{"tampered signature", path, "1700086400", string(flip), now, ErrForbidden},
		{"no signature", path, "1700086400", "", now, ErrForbidden},
		{"later expiry", path, "1700090000", sig, now, ErrForbidden},
		{"expiry with a leading zero", path, "01700086400", sig, now, ErrForbidden},
		{"foreign task", "/v1/videos/generations/task_abd/content", "1700086400", sig, now, ErrForbidden},
		{"foreign path", "/v1/videos/generations/task_abc", "1700086400", sig, now, ErrForbidden},
		{"an image URL's signature", imgPath, imgExp, imgSig, now, ErrForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now = tc.at
			if err := s.CheckPath(tc.path, tc.exp, tc.sig); !errors.Is(err, tc.want) {
				t.Fatalf("CheckPath = %v, want %v", err, tc.want)
			}
		})
	}
	now = time.Unix(1_700_000_000, 0)
	if err := s.Check(imgPath, imgExp, imgSig); err != nil {
		t.Fatalf("image URLs still verify: %v", err)
	}
	if err := s.Check(imgPath, imgExp, pathSig); !errors.Is(err, ErrForbidden) {
		t.Fatalf("a SignPath signature passed as an image URL's: %v", err)
	}
	other, err := New(Options{Backend: s.backend, Key: bytes.Repeat([]byte("x"), 32), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.CheckPath(path, "1700086400", sig); !errors.Is(err, ErrForbidden) {
		t.Fatalf("another key's signature = %v", err)
	}
}

// In a directory shared by images and videos, the image sweeper (an hour's
// TTL) leaves every video alone, and the video sweeper (a day's) takes
// only videos past their day.
func TestSweepVideos(t *testing.T) {
	now := time.Now()
	ctx := context.Background()
	dir := t.TempDir()
	d, err := NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := newVideoStore(t, d, d)
	files := map[string]time.Duration{} // name → age
	save := func(age time.Duration, video bool) string {
		var name string
		if video {
			name, _, _, err = s.SaveVideo(ctx, &source{head: mp4Head, size: 64}, 0)
		} else {
			name, err = s.Save(ctx, pngHeader)
		}
		if err != nil {
			t.Fatal(err)
		}
		files[name] = age
		return name
	}
	oldImage := save(2*time.Hour, false)
	youngImage := save(time.Minute, false)
	youngVideo := save(2*time.Hour, true)
	agingVideo := save(23*time.Hour, true)
	oldVideo := save(25*time.Hour, true)
	files[".put-1"] = 2 * time.Hour
	files[".vput-1"] = 2 * time.Hour
	files[".vput-2"] = 25 * time.Hour
	files[keyFile] = 48 * time.Hour
	for name, age := range files {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		at := now.Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	left := func() []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		slices.Sort(names)
		return names
	}
	sorted := func(names ...string) []string { slices.Sort(names); return names }

	// The image sweeper, as the app runs it.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := (&Sweeper{Dir: d, TTL: time.Hour, Now: func() time.Time { return now }}).Run(done); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	want := sorted(youngImage, youngVideo, agingVideo, oldVideo, ".vput-1", ".vput-2", keyFile)
	if got := left(); !slices.Equal(got, want) {
		t.Fatalf("after the image sweep: %v, want %v", got, want)
	}

	// The video sweeper.
	if err := (&Sweeper{Dir: d, TTL: 24 * time.Hour, Videos: true, Now: func() time.Time { return now }}).Run(done); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	want = sorted(youngImage, youngVideo, agingVideo, ".vput-1", keyFile)
	if got := left(); !slices.Equal(got, want) {
		t.Fatalf("after the video sweep: %v, want %v", got, want)
	}
	if _, err := s.OpenVideo(ctx, oldVideo); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old video: %v", err)
	}
	if _, err := s.Open(ctx, oldImage); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old image: %v", err)
	}
	// Sharing a backend, each kind still opens only through its own door.
	if _, err := s.Open(ctx, youngVideo); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open(video) = %v", err)
	}
	if _, err := s.OpenVideo(ctx, youngImage); !errors.Is(err, ErrNotFound) {
		t.Fatalf("OpenVideo(image) = %v", err)
	}
	for _, name := range []string{youngImage, youngVideo} {
		if err := s.DeleteVideo(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if got := left(); !slices.Equal(got, sorted(youngImage, agingVideo, ".vput-1", keyFile)) {
		t.Fatalf("DeleteVideo: %v", got)
	}
}

func TestNoVideoBackend(t *testing.T) {
	now := time.Now()
	s, _ := newStore(t, &now)
	ctx := context.Background()
	if _, _, _, err := s.SaveVideo(ctx, bytes.NewReader(mp4Head), 0); err == nil || errors.Is(err, ErrNotVideo) || errors.Is(err, ErrTooLarge) {
		t.Fatalf("SaveVideo without a video backend = %v; want a transient error", err)
	}
	if _, err := s.OpenVideo(ctx, strings.Repeat("a", 32)+".mp4"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("OpenVideo = %v", err)
	}
	if err := s.DeleteVideo(ctx, strings.Repeat("a", 32)+".mp4"); err != nil {
		t.Fatalf("DeleteVideo = %v", err)
	}
}
