package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/audio"
	"github.com/modelgate/modelgate/internal/provider"
)

// clock is a settable injected clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func startVideo(t *testing.T, p *Provider, req provider.VideoRequest) provider.VideoJob {
	t.Helper()
	job, err := p.StartVideo(context.Background(), &req)
	if err != nil {
		t.Fatal(err)
	}
	return job
}

func TestVideoStates(t *testing.T) {
	start := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		prompt string
		delay  time.Duration // Provider.VideoDelay
		after  time.Duration
		state  provider.VideoState
		pct    int
	}{
		{"a boat", 0, 0, provider.VideoQueued, 0},
		{"a boat", 0, 799 * time.Millisecond, provider.VideoQueued, 0},
		{"a boat", 0, 800 * time.Millisecond, provider.VideoRunning, 20},
		{"a boat", 0, 3 * time.Second, provider.VideoRunning, 75},
		{"a boat", 0, 3999 * time.Millisecond, provider.VideoRunning, 99},
		{"a boat", 0, 4 * time.Second, provider.VideoSucceeded, 100},
		{"a boat", 0, 48 * time.Hour, provider.VideoSucceeded, 100},
		{"a boat", 0, -time.Minute, provider.VideoQueued, 0}, // another replica's clock is ahead
		{"a boat", 10 * time.Second, 4 * time.Second, provider.VideoRunning, 40},
		{"a boat", 10 * time.Second, 10 * time.Second, provider.VideoSucceeded, 100},
		{"a boat", -time.Second, 4 * time.Second, provider.VideoSucceeded, 100},
		{"a boat [fail]", 0, 2 * time.Second, provider.VideoRunning, 50},
		{"a boat [fail]", 0, 4 * time.Second, provider.VideoFailed, 0},
		{"[never] a boat", 0, 2 * time.Second, provider.VideoRunning, 50},
		{"[never] a boat", 0, 4 * time.Second, provider.VideoRunning, 99},
		{"[never] a boat", 0, 100 * 365 * 24 * time.Hour, provider.VideoRunning, 99},
	} {
		c := &clock{start}
		p := New(c.now)
		p.VideoDelay = tc.delay
		job := startVideo(t, p, provider.VideoRequest{UpstreamModel: VideoLandscape, Prompt: tc.prompt, Seconds: 5, Size: "1280x720"})
		if job.State != provider.VideoQueued || !strings.HasPrefix(job.ID, "demo_video_") {
			t.Fatalf("started %+v", job)
		}
		c.t = start.Add(tc.after)
		// A new provider (another replica, or after a restart) knows the job as well.
		other := New(c.now)
		other.VideoDelay = tc.delay
		got, err := other.VideoStatus(context.Background(), VideoLandscape, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != job.ID || got.State != tc.state || got.Progress != tc.pct {
			t.Errorf("%q after %v: %s %d%%, want %s %d%%", tc.prompt, tc.after, got.State, got.Progress, tc.state, tc.pct)
		}
		if (got.State == provider.VideoFailed) != strings.Contains(got.Error, "[fail]") {
			t.Errorf("%q after %v: error %q", tc.prompt, tc.after, got.Error)
		}
		if (got.State == provider.VideoSucceeded) != (got.Seconds == 5) {
			t.Errorf("%q after %v: %d seconds", tc.prompt, tc.after, got.Seconds)
		}
	}
}

// boxes lists the top-level boxes of an MP4 file and checks they tile it.
func boxes(t *testing.T, b []byte) (types []string, bodies [][]byte) {
	t.Helper()
	for len(b) > 0 {
		if len(b) < 8 || int(binary.BigEndian.Uint32(b)) < 8 || int(binary.BigEndian.Uint32(b)) > len(b) {
			t.Fatalf("a box does not fit in %d bytes", len(b))
		}
		n := binary.BigEndian.Uint32(b)
		types, bodies = append(types, string(b[4:8])), append(bodies, b[8:n])
		b = b[n:]
	}
	return types, bodies
}

func TestVideoContent(t *testing.T) {
	c := &clock{time.Unix(1700000000, 0)}
	p := New(c.now)
	var files [][]byte
	for _, tc := range []struct {
		model, size, prompt string
		seconds, w, h       int
	}{
		{VideoLandscape, "1280x720", "a boat", 5, 160, 90},
		{VideoPortrait, "720x1280", "a boat", 20, 90, 160},
		{VideoPortrait, "", "a boat", 5, 90, 160},
		{VideoLandscape, "720x1280", "a boat", 5, 90, 160}, // the size's orientation wins
		{VideoPortrait, "1024x1024", "a boat", 5, 90, 160},
		{VideoLandscape, "1280x720", "a train", 5, 160, 90},
	} {
		job := startVideo(t, p, provider.VideoRequest{PublicModel: "v", UpstreamModel: tc.model, Size: tc.size, Prompt: tc.prompt, Seconds: tc.seconds})
		if _, err := p.VideoContent(context.Background(), job); err == nil || errors.Is(err, provider.ErrVideoGone) {
			t.Fatalf("content of a queued job: %v", err)
		}
		c.t = c.t.Add(DefaultVideoDelay)
		job, err := p.VideoStatus(context.Background(), tc.model, job.ID)
		if err != nil || job.State != provider.VideoSucceeded {
			t.Fatalf("%+v, %v", job, err)
		}
		vc, err := p.VideoContent(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(vc.Body)
		if err != nil || vc.Body.Close() != nil {
			t.Fatal(err)
		}
		if vc.ContentType != "video/mp4" || vc.Size != int64(len(b)) || len(b) > tc.seconds*25_000 {
			t.Fatalf("%s %s: %s of %d bytes, read %d", tc.model, tc.size, vc.ContentType, vc.Size, len(b))
		}
		types, bodies := boxes(t, b)
		if strings.Join(types, " ") != "ftyp moov mdat" || !bytes.HasPrefix(bodies[0], []byte("isom")) {
			t.Fatalf("boxes %v", types)
		}
		moov := bodies[1]
		if !bytes.Contains(moov, []byte("avc1")) || !bytes.Contains(moov, []byte("avcC")) {
			t.Fatal("no avc1 sample entry")
		}
		// tkhd ends with the width and height in 16.16.
		i := bytes.Index(moov, []byte("mdia"))
		if i < 8 || binary.BigEndian.Uint32(moov[i-12:]) != uint32(tc.w)<<16 || binary.BigEndian.Uint32(moov[i-8:]) != uint32(tc.h)<<16 {
			t.Fatalf("%s %s: not %d×%d", tc.model, tc.size, tc.w, tc.h)
		}
		d, err := audio.Duration(bytes.NewReader(b), int64(len(b)), audio.MP4)
		if err != nil || d != time.Duration(tc.seconds)*time.Second {
			t.Fatalf("duration %v, %v", d, err)
		}
		files = append(files, b)
	}
	if bytes.Equal(files[0], files[len(files)-1]) {
		t.Fatal("the prompt does not change the video")
	}
	again := startVideo(t, p, provider.VideoRequest{UpstreamModel: VideoLandscape, Size: "1280x720", Prompt: "a boat", Seconds: 5})
	c.t = c.t.Add(DefaultVideoDelay)
	vc, err := p.VideoContent(context.Background(), again)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(vc.Body); !bytes.Equal(b, files[0]) {
		t.Fatal("the same prompt made another video")
	}
}

func TestVideoFrames(t *testing.T) {
	var seed [8]byte
	copy(seed[:], "seedseed")
	a, b := videoFrame(seed, 0, 5, 160, 90), videoFrame(seed, 1, 5, 160, 90)
	if bytes.Equal(a.Pix, b.Pix) {
		t.Fatal("two seconds look the same")
	}
	// The progress bar: a fifth lit in the first second, two fifths in the second.
	lit := func(x int, img []byte) bool { return img[(89*160+x)*4] == 230 }
	if !lit(31, a.Pix) || lit(32, a.Pix) || !lit(63, b.Pix) || lit(64, b.Pix) {
		t.Fatal("progress bar")
	}
}

func TestVideoFailedContent(t *testing.T) {
	c := &clock{time.Unix(1700000000, 0)}
	p := New(c.now)
	failed := startVideo(t, p, provider.VideoRequest{UpstreamModel: VideoPortrait, Prompt: "x [fail]", Seconds: 5})
	never := startVideo(t, p, provider.VideoRequest{UpstreamModel: VideoPortrait, Prompt: "x [never]", Seconds: 5})
	c.t = c.t.Add(time.Hour)
	if _, err := p.VideoContent(context.Background(), failed); !errors.Is(err, provider.ErrVideoGone) {
		t.Fatalf("failed job: %v", err)
	}
	if _, err := p.VideoContent(context.Background(), never); err == nil || errors.Is(err, provider.ErrVideoGone) {
		t.Fatalf("never-ending job: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ok := startVideo(t, p, provider.VideoRequest{UpstreamModel: VideoPortrait, Prompt: "x", Seconds: 5})
	c.t = c.t.Add(time.Hour)
	if _, err := p.VideoContent(ctx, ok); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestVideoBadIDs(t *testing.T) {
	p := New(func() time.Time { return time.Unix(1700000000, 0) })
	good := startVideo(t, p, provider.VideoRequest{UpstreamModel: VideoPortrait, Prompt: "x", Seconds: 5}).ID
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(good, "demo_video_"))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(payload)
	flipped[10] ^= 1 // another length, same checksum
	for _, id := range []string{
		"", "video_123", "demo_video_", "demo_video_!!!!", good[:len(good)-2], good + "AA",
		"demo_video_" + base64.RawURLEncoding.EncodeToString(flipped),
		strings.ToUpper(good),
	} {
		_, err := p.VideoStatus(context.Background(), VideoPortrait, id)
		if !errors.Is(err, provider.ErrVideoGone) {
			t.Errorf("%q: %v", id, err)
		}
		if _, err := p.VideoContent(context.Background(), provider.VideoJob{ID: id}); !errors.Is(err, provider.ErrVideoGone) {
			t.Errorf("content of %q: %v", id, err)
		}
	}
	// Fields that pass the checksum must still make sense.
	for _, mangle := range []func(b []byte){
		func(b []byte) { binary.BigEndian.PutUint16(b[9:], 0) },
		func(b []byte) { binary.BigEndian.PutUint16(b[9:], MaxVideoSeconds+1) },
		func(b []byte) { b[11] |= 0x80 },
		func(b []byte) { b[0] = 2 },
	} {
		j := videoJob{created: time.Unix(1, 0), seconds: 5}
		b, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(j.encode(), "demo_video_"))
		mangle(b)
		id := reseal(b)
		if _, err := decodeJob(id); !errors.Is(err, provider.ErrVideoGone) {
			t.Errorf("%x: %v", b, err)
		}
	}
	if _, err := p.VideoStatus(context.Background(), VideoPortrait, good); err != nil {
		t.Fatal(err)
	}
}

func TestVideoRefusals(t *testing.T) {
	p := New(nil)
	for _, tc := range []struct {
		model   string
		seconds int
		param   string
	}{{"demo-chat", 5, "model"}, {ImageModel, 5, "model"}, {VideoPortrait, 0, "seconds"}, {VideoLandscape, MaxVideoSeconds + 1, "seconds"}} {
		_, err := p.StartVideo(context.Background(), &provider.VideoRequest{PublicModel: tc.model, UpstreamModel: tc.model, Seconds: tc.seconds})
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != 400 || e.Param != tc.param {
			t.Errorf("%s %d: %v", tc.model, tc.seconds, err)
		}
	}
}

func TestVideoModelsListed(t *testing.T) {
	for _, m := range []string{VideoPortrait, VideoLandscape} {
		if !Known(m) {
			t.Errorf("%s is not a known demo model", m)
		}
	}
}

// reseal recomputes an id payload's checksum, as a forger would.
func reseal(b []byte) string {
	sum := sha256.Sum256(b[:idLen-4])
	copy(b[idLen-4:], sum[:4])
	return "demo_video_" + base64.RawURLEncoding.EncodeToString(b)
}
