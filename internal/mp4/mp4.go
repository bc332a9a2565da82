// Package mp4 writes small, real H.264 MP4 videos in pure Go, for the
// demo provider's video models: files every browser plays, made without
// an encoder.
//
// The trick is to leave out everything an encoder does. Each second
// starts with an IDR picture whose macroblocks are all I_PCM (raw samples,
// no transform or entropy coding), and the other frames of the second are
// P pictures made of one run of P_Skip macroblocks, which repeat the
// picture before at a few bytes each. The stream is H.264 Constrained
// Baseline, 4:2:0, BT.601 limited range, CAVLC, deblocking off; the file
// is a progressive MP4 (ftyp isom, moov before mdat) with an avc1 sample
// entry. A key picture costs about 384 bytes per 16×16 macroblock, so the
// format suits small pictures: 160×90 is about 23 KB a second.
package mp4

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
)

// ContentType is the media type of what Write writes.
const ContentType = "video/mp4"

// Limits of what Write accepts.
const (
	MaxSide    = 4096 // pixels, each way (the H.264 level must also hold the picture)
	MaxFPS     = 60
	MaxSeconds = 3600
)

// Video describes a clip: Seconds long, FPS frames a second, each second
// showing one still picture.
type Video struct {
	Width, Height int // displayed size in pixels; even, for 4:2:0
	FPS           int // frames per second, 1..MaxFPS; all but the first of each second repeat it
	Seconds       int // 1..MaxSeconds
	// Frame returns the picture shown during second i (0 ≤ i < Seconds),
	// Width×Height pixels; alpha is ignored (premultiplied colours are
	// read as they are, so transparent pixels show black).
	Frame func(i int) image.Image
}

// timescale is the movie's time unit (milliseconds); the track counts in
// 512ths of a frame, as ffmpeg does.
const (
	movieScale = 1000
	tick       = 512
)

// Write writes v as an MP4 file to w. The whole file is built in memory
// first (the sample table comes before the samples), so the cost is the
// file's size.
func Write(w io.Writer, v Video) error {
	if err := v.check(); err != nil {
		return err
	}
	s, err := newStream(v.Width, v.Height, v.FPS)
	if err != nil {
		return err
	}
	skips := make([][]byte, v.FPS)
	for f := 1; f < v.FPS; f++ {
		skips[f] = s.skipSlice(f)
	}
	var (
		data   []byte
		sizes  []uint32
		chunks []uint32 // offsets of each second's samples in data
	)
	sample := func(n []byte) {
		data = binary.BigEndian.AppendUint32(data, uint32(len(n)))
		data = append(data, n...)
		sizes = append(sizes, uint32(4+len(n)))
	}
	for i := range v.Seconds {
		img := v.Frame(i)
		if img == nil || img.Bounds().Dx() != v.Width || img.Bounds().Dy() != v.Height {
			return fmt.Errorf("mp4: frame %d is not %d×%d", i, v.Width, v.Height)
		}
		s.paint(img)
		chunks = append(chunks, uint32(len(data)))
		sample(s.keySlice(i))
		for f := 1; f < v.FPS; f++ {
			sample(skips[f])
		}
		if len(data) > 1<<32-1<<20 {
			return errors.New("mp4: the video passes 4 GiB")
		}
	}
	ft := ftyp()
	base := uint32(len(ft)) + uint32(len(s.moov(v, sizes, chunks, 0))) + 8
	moov := s.moov(v, sizes, chunks, base)
	mdat := binary.BigEndian.AppendUint32(nil, uint32(8+len(data)))
	mdat = append(mdat, "mdat"...)
	for _, p := range [][]byte{ft, moov, mdat, data} {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

func (v Video) check() error {
	switch {
	case v.Width < 2 || v.Height < 2 || v.Width > MaxSide || v.Height > MaxSide || v.Width%2 != 0 || v.Height%2 != 0:
		return fmt.Errorf("mp4: size %d×%d: each side must be even, 2..%d", v.Width, v.Height, MaxSide)
	case v.FPS < 1 || v.FPS > MaxFPS:
		return fmt.Errorf("mp4: %d fps: want 1..%d", v.FPS, MaxFPS)
	case v.Seconds < 1 || v.Seconds > MaxSeconds:
		return fmt.Errorf("mp4: %d seconds: want 1..%d", v.Seconds, MaxSeconds)
	case v.Frame == nil:
		return errors.New("mp4: no Frame function")
	}
	return nil
}

// buf appends big-endian fields.
type buf []byte

func (b buf) u8(v uint8) buf     { return append(b, v) }
func (b buf) u16(v uint16) buf   { return binary.BigEndian.AppendUint16(b, v) }
func (b buf) u32(v uint32) buf   { return binary.BigEndian.AppendUint32(b, v) }
func (b buf) str(s string) buf   { return append(b, s...) }
func (b buf) zeros(n int) buf    { return append(b, make([]byte, n)...) }
func (b buf) bytes(p []byte) buf { return append(b, p...) }

// matrix is the identity transformation of mvhd and tkhd.
func (b buf) matrix() buf {
	return b.u32(0x10000).u32(0).u32(0).u32(0).u32(0x10000).u32(0).u32(0).u32(0).u32(0x40000000)
}

// box wraps parts into a box of type typ.
func box(typ string, parts ...[]byte) []byte {
	n := 8
	for _, p := range parts {
		n += len(p)
	}
	b := buf(make([]byte, 0, n)).u32(uint32(n)).str(typ)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// full wraps parts into a full box (version 0) with flags.
func full(typ string, flags uint32, parts ...[]byte) []byte {
	return box(typ, append([][]byte{buf(nil).u32(flags)}, parts...)...)
}

func ftyp() []byte {
	return box("ftyp", buf(nil).str("isom").u32(0x200).str("isomiso2avc1mp41"))
}

// moov is the movie box; base is where mdat's data starts in the file.
func (s *stream) moov(v Video, sizes, chunks []uint32, base uint32) []byte {
	n := uint32(len(sizes))
	ms := uint32(v.Seconds * movieScale)
	scale := uint32(v.FPS * tick)
	mvhd := full("mvhd", 0, buf(nil).u32(0).u32(0).u32(movieScale).u32(ms).
		u32(0x10000).u16(0x100).zeros(10).matrix().zeros(24).u32(2))
	tkhd := full("tkhd", 3, buf(nil).u32(0).u32(0).u32(1).u32(0).u32(ms).
		zeros(8).u16(0).u16(0).u16(0).u16(0).matrix().u32(uint32(v.Width)<<16).u32(uint32(v.Height)<<16))
	mdhd := full("mdhd", 0, buf(nil).u32(0).u32(0).u32(scale).u32(n*tick).u16(0x55c4).u16(0)) // language "und"
	hdlr := full("hdlr", 0, buf(nil).u32(0).str("vide").zeros(12).str("VideoHandler\x00"))
	vmhd := full("vmhd", 1, buf(nil).zeros(8))
	dinf := box("dinf", full("dref", 0, buf(nil).u32(1), full("url ", 1)))

	avcC := box("avcC", buf(nil).u8(1).u8(Profile).u8(constraints).u8(s.level).
		u8(0xff). // lengthSizeMinusOne 3
		u8(0xe1).u16(uint16(len(s.sps))).bytes(s.sps).
		u8(1).u16(uint16(len(s.pps))).bytes(s.pps))
	colr := box("colr", buf(nil).str("nclx").u16(6).u16(6).u16(6).u8(0)) // BT.601, limited range
	pasp := box("pasp", buf(nil).u32(1).u32(1))
	name := "\x09modelgate"
	avc1 := box("avc1", buf(nil).zeros(6).u16(1). // data_reference_index
							zeros(16).u16(uint16(v.Width)).u16(uint16(v.Height)).
							u32(0x480000).u32(0x480000).u32(0).u16(1).
							str(name).zeros(32-len(name)).u16(0x18).u16(0xffff),
		avcC, colr, pasp)
	stsd := full("stsd", 0, buf(nil).u32(1), avc1)
	stts := full("stts", 0, buf(nil).u32(1).u32(n).u32(tick))
	keys := buf(nil).u32(uint32(v.Seconds))
	stco := buf(nil).u32(uint32(len(chunks)))
	for i, c := range chunks {
		keys = keys.u32(uint32(i*v.FPS + 1))
		stco = stco.u32(base + c)
	}
	stsc := full("stsc", 0, buf(nil).u32(1).u32(1).u32(uint32(v.FPS)).u32(1))
	stsz := buf(nil).u32(0).u32(n)
	for _, z := range sizes {
		stsz = stsz.u32(z)
	}
	stbl := box("stbl", stsd, stts, full("stss", 0, keys), stsc, full("stsz", 0, stsz), full("stco", 0, stco))
	minf := box("minf", vmhd, dinf, stbl)
	return box("moov", mvhd, box("trak", tkhd, box("mdia", mdhd, hdlr, minf)))
}
