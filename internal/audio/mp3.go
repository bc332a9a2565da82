package audio

import (
	"errors"
	"fmt"
	"time"
)

// mpegFrame is one MPEG audio frame header, decoded.
type mpegFrame struct {
	version  int // 1, 2, or 25 (MPEG 2.5)
	layer    int // 1, 2, 3
	rate     uint64
	mono     bool
	samples  uint64 // per frame
	length   int64  // bytes, header included
	sameAs32 uint32 // the header bits that stay fixed across a stream
}

var (
	mpegRates = map[int][3]uint64{1: {44100, 48000, 32000}, 2: {22050, 24000, 16000}, 25: {11025, 12000, 8000}}
	// kbit/s by [version 1 or not][layer-1][index]
	mpegBitrates = [2][3][15]uint64{
		{
			{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448},
			{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},
			{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},
		},
		{
			{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
		},
	}
)

// parseFrame decodes a 4-byte MPEG audio frame header. Free-format
// bitrates and reserved values are refused.
func parseFrame(b []byte) (mpegFrame, bool) {
	if len(b) < 4 || b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return mpegFrame{}, false
	}
	var f mpegFrame
	switch (b[1] >> 3) & 3 {
	case 0:
		f.version = 25
	case 2:
		f.version = 2
	case 3:
		f.version = 1
	default:
		return f, false
	}
	f.layer = 4 - int((b[1]>>1)&3)
	bi, si, pad := int(b[2]>>4), int((b[2]>>2)&3), int64((b[2]>>1)&1)
	if f.layer == 4 || bi == 0 || bi == 15 || si == 3 || b[3]&3 == 2 {
		return f, false
	}
	v := 1
	if f.version == 1 {
		v = 0
	}
	br := mpegBitrates[v][f.layer-1][bi] * 1000
	f.rate = mpegRates[f.version][si]
	f.mono = b[3]>>6 == 3
	switch {
	case f.layer == 1:
		f.samples = 384
		f.length = (int64(12*br/f.rate) + pad) * 4
	case f.layer == 3 && f.version != 1:
		f.samples = 576
		f.length = int64(72*br/f.rate) + pad
	default:
		f.samples = 1152
		f.length = int64(144*br/f.rate) + pad
	}
	// version, layer and sample rate must not change inside a stream.
	f.sameAs32 = uint32(b[1]&0xFE)<<8 | uint32(b[2]&0x0C)
	return f, f.length >= 4
}

// skipID3 moves past any ID3v2 tags at the position.
func skipID3(c *cursor) error {
	for {
		b, err := c.peek(10)
		if err != nil || string(b[:3]) != "ID3" {
			return nil
		}
		for _, x := range b[6:10] {
			if x&0x80 != 0 {
				return errors.New("bad ID3 size")
			}
		}
		size := int64(b[6])<<21 | int64(b[7])<<14 | int64(b[8])<<7 | int64(b[9])
		if b[5]&0x10 != 0 {
			size += 10 // footer
		}
		if err := c.skip(10 + size); err != nil {
			return err
		}
	}
}

// findFrame moves to the next frame header within limit bytes whose
// successor (when the file is long enough to have one) is also a frame of
// the same stream, so a stray 0xFFE in a tag does not count as audio.
func findFrame(c *cursor, limit int64) (mpegFrame, bool) {
	start := c.pos
	for c.pos-start <= limit {
		b, err := c.peek(4)
		if err != nil {
			return mpegFrame{}, false
		}
		if f, ok := parseFrame(b); ok {
			switch next := c.pos + f.length; {
			case next == c.size && c.pos == start:
				return f, true // a lone frame filling the file
			case next < c.size:
				save := c.pos
				c.pos = next
				nb, err := c.peek(4)
				c.pos = save
				if err != nil {
					return f, true // fewer than 4 bytes follow it
				}
				if g, ok := parseFrame(nb); ok && g.sameAs32 == f.sameAs32 {
					return f, true
				}
			}
		}
		c.pos++
	}
	return mpegFrame{}, false
}

// mp3Duration uses the first frame's Xing/Info or VBRI header when present
// (frame count × samples per frame), else walks every frame and sums them.
func mp3Duration(c *cursor) (time.Duration, error) {
	if err := skipID3(c); err != nil {
		return 0, err
	}
	first, ok := findFrame(c, 64<<10)
	if !ok {
		return 0, errors.New("no MPEG audio frame")
	}
	if n, ok := vbrFrames(c, first); ok {
		return seconds(n*first.samples, first.rate)
	}
	var samples uint64
	for {
		b, err := c.peek(4)
		if err != nil {
			break
		}
		f, ok := parseFrame(b)
		if ok && f.sameAs32 == first.sameAs32 && f.length <= c.left() {
			samples += f.samples
			c.pos += f.length
			continue
		}
		if t, err := c.peek(3); err == nil && (string(t) == "TAG" || string(t) == "APE" || string(t) == "LYR") {
			break // ID3v1, APE or Lyrics3 tags end the audio
		}
		if ok && f.length > c.left() {
			break // a truncated last frame
		}
		c.pos++
		if _, ok := findFrame(c, 64<<10); !ok {
			break // junk to the end
		}
	}
	if samples == 0 {
		return 0, fmt.Errorf("%w: no complete MPEG audio frame", ErrUnknownDuration)
	}
	return seconds(samples, first.rate)
}

// vbrFrames reads the frame count of a Xing/Info or VBRI header in the
// frame at the position; that frame carries no audio.
func vbrFrames(c *cursor, f mpegFrame) (uint64, bool) {
	if f.layer != 3 {
		return 0, false
	}
	side := 32
	switch {
	case f.version == 1 && f.mono:
		side = 17
	case f.version != 1 && !f.mono:
		side = 17
	case f.version != 1:
		side = 9
	}
	b, err := c.peek(int(min(f.length, c.left())))
	if err != nil {
		return 0, false
	}
	if x := 4 + side; len(b) >= x+12 && (string(b[x:x+4]) == "Xing" || string(b[x:x+4]) == "Info") {
		if be32(b[x+4:])&1 != 0 {
			if n := be32(b[x+8:]); n > 0 {
				return n, true
			}
		}
		return 0, false
	}
	if len(b) >= 36+18 && string(b[36:40]) == "VBRI" {
		if n := be32(b[36+14:]); n > 0 {
			return n, true
		}
	}
	return 0, false
}
