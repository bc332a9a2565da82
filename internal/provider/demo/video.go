package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/mp4"
	"github.com/modelgate/modelgate/internal/provider"
)

var _ provider.VideoMaker = (*Provider)(nil)

// The demo's video models. Each makes a real, tiny H.264 MP4 (160×90 or
// 90×160, 10 fps, one new picture a second) whatever size the client
// asks for; the size only decides the orientation.
const (
	VideoPortrait  = "demo-video-portrait"
	VideoLandscape = "demo-video-landscape"
)

// DefaultVideoDelay is how long a demo video job takes when
// Provider.VideoDelay is 0.
const DefaultVideoDelay = 4 * time.Second

// MaxVideoSeconds bounds the length of a demo video.
const MaxVideoSeconds = 60

// Prompt markers that make a demo video job misbehave on purpose, so that
// failed and stuck tasks can be shown and tested without a vendor.
const (
	// FailMarker in a prompt makes the job fail once its delay has passed.
	FailMarker = "[fail]"
	// NeverMarker in a prompt keeps the job running at 99% forever, for
	// the gateway's deadline to end it.
	NeverMarker = "[never]"
)

// videoFPS is the demo videos' frame rate: one I_PCM picture a second,
// the other frames repeat it for a few bytes each.
const videoFPS = 10

// videoPrefix starts every demo video job id.
const videoPrefix = "demo_video_"

// videoJob is everything a demo video job is. The job id carries it (see
// encode), so any replica, before or after a restart, can answer for a
// job with no shared memory: its state follows from the time since it
// was created.
type videoJob struct {
	created  time.Time // to the millisecond
	seconds  int
	portrait bool
	fail     bool
	never    bool
	seed     [8]byte // from the prompt
}

const (
	flagPortrait = 1 << iota
	flagFail
	flagNever
)

// idVersion is the first byte of an id's payload.
const idVersion = 1

// encode is the job's id: the prefix and the base64url of the version,
// creation time in Unix milliseconds, seconds, flags and seed, followed
// by the first four bytes of their SHA-256 so that mangled ids are
// refused rather than misread.
func (j videoJob) encode() string {
	b := []byte{idVersion}
	b = binary.BigEndian.AppendUint64(b, uint64(j.created.UnixMilli()))
	b = binary.BigEndian.AppendUint16(b, uint16(j.seconds))
	var f byte
	if j.portrait {
		f |= flagPortrait
	}
	if j.fail {
		f |= flagFail
	}
	if j.never {
		f |= flagNever
	}
	b = append(b, f)
	b = append(b, j.seed[:]...)
	sum := sha256.Sum256(b)
	return videoPrefix + base64.RawURLEncoding.EncodeToString(append(b, sum[:4]...))
}

// idLen is the length of an id's decoded payload.
const idLen = 1 + 8 + 2 + 1 + 8 + 4

// decodeJob reads an id made by encode; the error wraps
// provider.ErrVideoGone, as no demo replica will ever know the job.
func decodeJob(id string) (videoJob, error) {
	gone := func(why string) (videoJob, error) {
		return videoJob{}, fmt.Errorf("%w: demo: %q is not a demo video id (%s)", provider.ErrVideoGone, clip(id, 60), why)
	}
	rest, ok := strings.CutPrefix(id, videoPrefix)
	if !ok {
		return gone("no " + videoPrefix + " prefix")
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(b) != idLen || b[0] != idVersion {
		return gone("bad encoding")
	}
	if sum := sha256.Sum256(b[:idLen-4]); !bytes.Equal(sum[:4], b[idLen-4:]) {
		return gone("bad checksum")
	}
	j := videoJob{
		created:  time.UnixMilli(int64(binary.BigEndian.Uint64(b[1:]))),
		seconds:  int(binary.BigEndian.Uint16(b[9:])),
		portrait: b[11]&flagPortrait != 0,
		fail:     b[11]&flagFail != 0,
		never:    b[11]&flagNever != 0,
	}
	copy(j.seed[:], b[12:20])
	if j.seconds < 1 || j.seconds > MaxVideoSeconds || b[11]&^(flagPortrait|flagFail|flagNever) != 0 {
		return gone("bad fields")
	}
	return j, nil
}

// StartVideo accepts a job and answers at once: the demo renders nothing
// until the video is downloaded. The prompt seeds the colours and
// pattern; a prompt containing FailMarker or NeverMarker makes the job
// fail or never finish. The reference image, if any, is ignored.
func (p *Provider) StartVideo(_ context.Context, req *provider.VideoRequest) (provider.VideoJob, error) {
	if req.UpstreamModel != VideoPortrait && req.UpstreamModel != VideoLandscape {
		return provider.VideoJob{}, apierr.Invalid("model", "The model '%s' does not make videos.", req.PublicModel)
	}
	if req.Seconds < 1 || req.Seconds > MaxVideoSeconds {
		return provider.VideoJob{}, apierr.Invalid("seconds", "The demo makes videos of 1 to %d seconds, not %d.", MaxVideoSeconds, req.Seconds)
	}
	sum := sha256.Sum256([]byte(req.Prompt))
	j := videoJob{
		created:  time.UnixMilli(p.now().UnixMilli()),
		seconds:  req.Seconds,
		portrait: portrait(req.UpstreamModel, req.Size),
		fail:     strings.Contains(req.Prompt, FailMarker),
		never:    strings.Contains(req.Prompt, NeverMarker),
	}
	copy(j.seed[:], sum[:])
	return p.status(j), nil
}

// portrait decides the orientation: the size's when it has one, else the
// model's.
func portrait(model, size string) bool {
	ws, hs, ok := strings.Cut(size, "x")
	w, errW := strconv.Atoi(ws)
	h, errH := strconv.Atoi(hs)
	if ok && errW == nil && errH == nil && w != h {
		return h > w
	}
	return model == VideoPortrait
}

// VideoStatus derives the job's state from the time since it was
// created: queued for the first fifth of the delay, then running with
// progress, then succeeded (or failed, or running at 99% for good, as the
// prompt asked).
func (p *Provider) VideoStatus(_ context.Context, _, id string) (provider.VideoJob, error) {
	j, err := decodeJob(id)
	if err != nil {
		return provider.VideoJob{}, err
	}
	return p.status(j), nil
}

func (p *Provider) videoDelay() time.Duration {
	if p.VideoDelay > 0 {
		return p.VideoDelay
	}
	return DefaultVideoDelay
}

// status is the job as of now.
func (p *Provider) status(j videoJob) provider.VideoJob {
	out := provider.VideoJob{ID: j.encode(), State: provider.VideoQueued}
	elapsed, delay := p.now().Sub(j.created), p.videoDelay()
	switch {
	case elapsed < delay/5:
	case elapsed < delay:
		out.State, out.Progress = provider.VideoRunning, min(max(int(elapsed*100/delay), 1), 99)
	case j.never:
		out.State, out.Progress = provider.VideoRunning, 99
	case j.fail:
		out.State, out.Error = provider.VideoFailed, "The demo failed this video on purpose: its prompt contains "+FailMarker+"."
	default:
		out.State, out.Progress, out.Seconds = provider.VideoSucceeded, 100, j.seconds
	}
	return out
}

// VideoContent renders a succeeded job's MP4 (about 23 KB a second).
func (p *Provider) VideoContent(ctx context.Context, job provider.VideoJob) (*provider.VideoContent, error) {
	j, err := decodeJob(job.ID)
	if err != nil {
		return nil, err
	}
	switch st := p.status(j); st.State {
	case provider.VideoSucceeded:
	case provider.VideoFailed:
		return nil, fmt.Errorf("%w: demo: the video failed, there is nothing to download", provider.ErrVideoGone)
	default:
		return nil, fmt.Errorf("demo: the video is still %s (%d%%)", st.State, st.Progress)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w, h := 160, 90
	if j.portrait {
		w, h = h, w
	}
	var b bytes.Buffer
	err = mp4.Write(&b, mp4.Video{Width: w, Height: h, FPS: videoFPS, Seconds: j.seconds,
		Frame: func(i int) image.Image { return videoFrame(j.seed, i, j.seconds, w, h) }})
	if err != nil {
		return nil, errors.Join(errors.New("demo: render video"), err)
	}
	return &provider.VideoContent{Body: io.NopCloser(bytes.NewReader(b.Bytes())), Size: int64(b.Len()), ContentType: mp4.ContentType}, nil
}

// videoFrame is second i of n of the video seeded by s: the demo image's
// diagonal gradient between two colours of the seed, flowing a little
// further each second, its checker pattern sliding right, and a progress
// bar along the bottom.
func videoFrame(s [8]byte, i, n, w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	a, b := [3]int{int(s[0]), int(s[1]), int(s[2])}, [3]int{int(s[3]), int(s[4]), int(s[5])}
	cell := 8 << (s[6] % 2) // 8 or 16 pixels
	span := w + h - 2
	flow := i * 2 * span / max(n, 1) // the gradient goes round once over the video
	bar := h - max(h/24, 2)
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride:]
		for x := 0; x < w; x++ {
			o := row[4*x : 4*x+4 : 4*x+4]
			o[3] = 255
			if y >= bar {
				v := uint8(40)
				if x*n < w*(i+1) {
					v = 230
				}
				o[0], o[1], o[2] = v, v, v
				continue
			}
			t := (x + y + flow) % (2 * span)
			if t > span {
				t = 2*span - t // there and back, so the colours never jump
			}
			shade := 0
			if ((x+i*cell/2)/cell+y/cell)%2 == 0 {
				shade = 24
			}
			for c := 0; c < 3; c++ {
				v := (a[c]*(span-t)+b[c]*t)/max(span, 1) - shade
				o[c] = uint8(max(v, 0))
			}
		}
	}
	return img
}
