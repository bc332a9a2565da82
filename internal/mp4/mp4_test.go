package mp4

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/audio"
)

// stripes paints second i: vertical bars of colours shifted by i, over a
// gradient in the lower half, so every sample value and position matters.
func stripes(w, h int) func(i int) image.Image {
	cols := []color.NRGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 255, 255, 255}, {0, 0, 0, 255}}
	return func(i int) image.Image {
		img := image.NewNRGBA(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				if y < h/2 {
					img.SetNRGBA(x, y, cols[(x*5/w+i)%5])
				} else {
					img.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8(i * 40), 255})
				}
			}
		}
		return img
	}
}

func write(t *testing.T, v Video) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sampleNALs is one sample's NAL units, escaped as stored.
type sampleNALs struct {
	key  bool
	nals [][]byte
}

// checkFile parses a written file and checks its structure against v;
// it returns the samples and the avcC's parameter sets.
func checkFile(t *testing.T, file []byte, v Video) (samples []sampleNALs, sps, pps []byte) {
	t.Helper()
	top := parseBoxes(t, file, 0)
	if types(top) != "ftyp moov mdat" {
		t.Fatalf("top-level boxes %q, want moov before mdat", types(top))
	}
	if got := string(top[0].body); got != "isom\x00\x00\x02\x00isomiso2avc1mp41" {
		t.Fatalf("ftyp %q", got)
	}
	moov := top[1].kids
	if types(moov) != "mvhd trak" || types(find(t, moov, "trak").kids) != "tkhd mdia" {
		t.Fatalf("moov %q", types(moov))
	}
	mvhd := find(t, moov, "mvhd").body
	if be32(mvhd, 4)/be32(mvhd, 3) != v.Seconds || be32(mvhd, 4)%be32(mvhd, 3) != 0 {
		t.Fatalf("mvhd: %d / %d", be32(mvhd, 4), be32(mvhd, 3))
	}
	tkhd := find(t, moov, "trak/tkhd").body
	if tkhd[3] != 3 || be32(tkhd, 3) != 1 || be32(tkhd, 5) != be32(mvhd, 4) ||
		be32(tkhd, 19) != v.Width<<16 || be32(tkhd, 20) != v.Height<<16 {
		t.Fatalf("tkhd %x", tkhd)
	}
	mdhd := find(t, moov, "trak/mdia/mdhd").body
	scale, dur := be32(mdhd, 3), be32(mdhd, 4)
	if dur != v.Seconds*scale {
		t.Fatalf("mdhd: %d / %d", dur, scale)
	}
	if h := find(t, moov, "trak/mdia/hdlr").body; string(h[8:12]) != "vide" {
		t.Fatalf("hdlr %q", h)
	}
	if types(find(t, moov, "trak/mdia/minf").kids) != "vmhd dinf stbl" ||
		types(find(t, moov, "trak/mdia/minf/dinf/dref").kids) != "url " {
		t.Fatal("minf")
	}
	stbl := find(t, moov, "trak/mdia/minf/stbl")
	if types(stbl.kids) != "stsd stts stss stsc stsz stco" {
		t.Fatalf("stbl %q", types(stbl.kids))
	}
	stsd := find(t, stbl.kids, "stsd")
	if be32(stsd.body, 1) != 1 || types(stsd.kids) != "avc1" {
		t.Fatalf("stsd %q", types(stsd.kids))
	}
	avc1 := stsd.kids[0]
	if w, h := int(avc1.body[24])<<8|int(avc1.body[25]), int(avc1.body[26])<<8|int(avc1.body[27]); w != v.Width || h != v.Height {
		t.Fatalf("avc1 %d×%d", w, h)
	}
	if types(avc1.kids) != "avcC colr pasp" {
		t.Fatalf("avc1 %q", types(avc1.kids))
	}
	avcC := avc1.kids[0].body
	if avcC[0] != 1 || avcC[1] != 66 || avcC[2] != 0xC0 || avcC[4] != 0xFF || avcC[5] != 0xE1 {
		t.Fatalf("avcC %x", avcC[:6])
	}
	n := int(avcC[6])<<8 | int(avcC[7])
	sps = avcC[8 : 8+n]
	rest := avcC[8+n:]
	if rest[0] != 1 || len(rest) != 3+(int(rest[1])<<8|int(rest[2])) {
		t.Fatalf("avcC PPS %x", rest)
	}
	pps = rest[3:]
	if sps[0] != 0x67 || pps[0] != 0x68 || sps[3] != avcC[3] || !bytes.Equal(sps[1:3], avcC[1:3]) {
		t.Fatalf("parameter sets %x %x", sps, pps)
	}

	count := v.Seconds * v.FPS
	if stts := table(t, find(t, stbl.kids, "stts"), 2); len(stts) != 1 || stts[0][0] != count || stts[0][0]*stts[0][1] != dur {
		t.Fatalf("stts %v for %d samples over %d", stts, count, dur)
	}
	keys := map[int]bool{}
	for _, r := range table(t, find(t, stbl.kids, "stss"), 1) {
		keys[r[0]-1] = true
	}
	if stsc := table(t, find(t, stbl.kids, "stsc"), 3); len(stsc) != 1 || stsc[0][0] != 1 || stsc[0][1] != v.FPS || stsc[0][2] != 1 {
		t.Fatalf("stsc %v", stsc)
	}
	stsz := find(t, stbl.kids, "stsz").body
	if be32(stsz, 1) != 0 || be32(stsz, 2) != count || len(stsz) != 12+4*count {
		t.Fatalf("stsz header %x", stsz[:12])
	}
	chunks := table(t, find(t, stbl.kids, "stco"), 1)
	if len(chunks) != v.Seconds {
		t.Fatalf("%d chunks", len(chunks))
	}
	mdat := top[2]
	pos := mdat.off
	for i := range count {
		if i%v.FPS == 0 && chunks[i/v.FPS][0] != pos {
			t.Fatalf("chunk %d at %d, samples at %d", i/v.FPS, chunks[i/v.FPS][0], pos)
		}
		size := be32(stsz, 3+i)
		if pos+size > mdat.off+len(mdat.body) {
			t.Fatalf("sample %d past mdat", i)
		}
		s := sampleNALs{key: keys[i]}
		for p := file[pos : pos+size]; len(p) > 0; {
			l := be32(p, 0)
			if l == 0 || 4+l > len(p) {
				t.Fatalf("sample %d: NAL of %d bytes in %d", i, l, len(p))
			}
			s.nals = append(s.nals, p[4:4+l])
			p = p[4+l:]
		}
		samples = append(samples, s)
		pos += size
	}
	if pos != mdat.off+len(mdat.body) {
		t.Fatalf("samples end at %d, mdat at %d", pos, mdat.off+len(mdat.body))
	}
	if len(keys) != v.Seconds {
		t.Fatalf("%d sync samples", len(keys))
	}
	for i := range v.Seconds {
		if !keys[i*v.FPS] {
			t.Fatalf("sample %d (second %d) is not a sync sample", i*v.FPS, i)
		}
	}
	return samples, sps, pps
}

func TestWrite(t *testing.T) {
	for _, v := range []Video{
		{Width: 160, Height: 90, FPS: 10, Seconds: 5},
		{Width: 90, Height: 160, FPS: 8, Seconds: 3},
		{Width: 32, Height: 16, FPS: 1, Seconds: 4},
		{Width: 2, Height: 2, FPS: 30, Seconds: 1},
	} {
		v.Frame = stripes(v.Width, v.Height)
		file := write(t, v)
		samples, sps, pps := checkFile(t, file, v)
		for _, p := range [][]byte{sps, pps} {
			unescape(t, p)
		}
		for i, s := range samples {
			want := byte(0x21) // non-IDR slice, a reference
			if s.key {
				want = 0x65
			}
			if len(s.nals) != 1 || s.nals[0][0] != want {
				t.Fatalf("%d×%d sample %d: %d NAL units, first %x", v.Width, v.Height, i, len(s.nals), s.nals[0][0])
			}
			unescape(t, s.nals[0])
		}
		d, err := audio.Duration(bytes.NewReader(file), int64(len(file)), audio.MP4)
		if err != nil || d != time.Duration(v.Seconds)*time.Second {
			t.Fatalf("%d×%d: audio.Duration reads %v, %v", v.Width, v.Height, d, err)
		}
		if !bytes.Equal(file, write(t, v)) {
			t.Fatal("two writes differ")
		}
	}
}

// TestSize keeps the demo's clips small: the 20-second portrait clip and
// its per-second cost.
func TestSize(t *testing.T) {
	file := write(t, Video{Width: 90, Height: 160, FPS: 10, Seconds: 20, Frame: stripes(90, 160)})
	if len(file) > 500_000 {
		t.Fatalf("20 s at 90×160 take %d bytes", len(file))
	}
}

func TestWriteRefuses(t *testing.T) {
	frame := stripes(16, 16)
	for _, tc := range []struct {
		v    Video
		want string
	}{
		{Video{Width: 15, Height: 16, FPS: 1, Seconds: 1, Frame: frame}, "even"},
		{Video{Width: 0, Height: 16, FPS: 1, Seconds: 1, Frame: frame}, "even"},
		{Video{Width: 16, Height: 8192, FPS: 1, Seconds: 1, Frame: frame}, "even"},
		{Video{Width: 16, Height: 16, FPS: 0, Seconds: 1, Frame: frame}, "fps"},
		{Video{Width: 16, Height: 16, FPS: 61, Seconds: 1, Frame: frame}, "fps"},
		{Video{Width: 16, Height: 16, FPS: 1, Seconds: 0, Frame: frame}, "seconds"},
		{Video{Width: 16, Height: 16, FPS: 1, Seconds: 1}, "Frame"},
		{Video{Width: 16, Height: 18, FPS: 1, Seconds: 1, Frame: frame}, "frame 0 is not 16×18"},
		{Video{Width: 16, Height: 16, FPS: 1, Seconds: 1, Frame: func(int) image.Image { return nil }}, "frame 0"},
		{Video{Width: 4096, Height: 4096, FPS: 1, Seconds: 1, Frame: frame}, "level"},
	} {
		var b bytes.Buffer
		err := Write(&b, tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.v, err, tc.want)
		}
		if b.Len() != 0 {
			t.Errorf("%+v: wrote %d bytes", tc.v, b.Len())
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	err := Write(failWriter{}, Video{Width: 16, Height: 16, FPS: 1, Seconds: 1, Frame: stripes(16, 16)})
	if err == nil || err.Error() != "disk full" {
		t.Fatal(err)
	}
}
