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
		if !c.seek2(0xFF, 0xE0, 0xE0) || c.pos-start > limit {
			return mpegFrame{}, false
		}
		b, err := c.peek(4)
		if err != nil {
			return mpegFrame{}, false
		}
		if f, ok := parseFrame(b); ok && chained(c, f, c.pos == start) {
			return f, true
		}
		c.pos++
	}
	return mpegFrame{}, false
}

// chained reports whether the frame f at the position is followed by a
// frame of the same stream, or by fewer than 4 bytes; with lone, a frame
// that ends exactly at the end of the file counts too. The frame and its
// successor's header are read at once, so a search never thrashes the
// cursor's window.
func chained(c *cursor, f mpegFrame, lone bool) bool {
	next := c.pos + f.length
	switch {
	case next > c.size:
		return false
	case next == c.size:
		return lone
	case c.size-next < 4:
		return true // fewer than 4 bytes follow it
	}
	b, err := c.peek(int(f.length) + 4)
	if err != nil {
		return false
	}
	g, ok := parseFrame(b[f.length:])
	return ok && g.sameAs32 == f.sameAs32
}

// frameTally sums the samples of frames by sample rate (a stream may
// change rate; each frame plays at its own).
type frameTally map[uint64]uint64

func (t frameTally) add(samples, rate uint64) { t[rate] = satAdd(t[rate], samples) }

func (t frameTally) duration() (time.Duration, error) {
	var d time.Duration
	for rate, n := range t {
		x, err := seconds(n, rate)
		if err != nil {
			return 0, err
		}
		if d += x; d > maxDuration {
			return 0, fmt.Errorf("%w: frames too long", ErrUnknownDuration)
		}
	}
	return d, nil
}

// mp3Duration reads the first frame's Xing/Info or VBRI frame count as the
// claim, and walks every frame of the file for the content: a decoder
// plays every frame it finds, whatever a header says, so a frame count of
// 1 in front of five minutes of frames is five minutes. Junk and tags
// between frames (ID3v1, APE, Lyrics3, even a "TAG" in the middle) are
// skipped up to the next frame whose successor agrees; a frame of another
// rate or layer counts when its successor confirms the change. Free-format
// frames are not counted: decoders refuse them too.
func mp3Duration(c *cursor) (reading, error) {
	if err := skipID3(c); err != nil {
		return reading{}, err
	}
	first, ok := findFrame(c, 64<<10)
	if !ok {
		return reading{}, errors.New("no MPEG audio frame")
	}
	var rd reading
	if n, tagged := vbrFrames(c, first); tagged {
		rd.claim = claimed(satMul(n, first.samples), first.rate)
		c.pos += first.length // the tag's frame carries no audio
	}
	tally, err := walkFrames(c, first)
	if err != nil {
		return reading{}, err
	}
	if rd.content, err = tally.duration(); err != nil {
		return reading{}, err
	}
	if rd.claim == 0 && rd.content == 0 {
		return reading{}, fmt.Errorf("%w: no complete MPEG audio frame", ErrUnknownDuration)
	}
	return rd, nil
}

// walkFrames counts every frame from the position to the end of the file,
// starting in first's stream.
func walkFrames(c *cursor, first mpegFrame) (frameTally, error) {
	tally, cur := frameTally{}, first
	for {
		b, err := c.peek(4)
		if err != nil {
			break
		}
		f, ok := parseFrame(b)
		if ok && f.length <= c.left() && (f.sameAs32 == cur.sameAs32 || chained(c, f, false)) {
			tally.add(f.samples, f.rate)
			cur = f
			c.pos += f.length
			continue
		}
		if ok && f.length > c.left() {
			break // a truncated last frame
		}
		c.pos++
		if _, ok := findFrame(c, c.left()); !ok {
			break // junk to the end
		}
	}
	return tally, nil
}

// vbrFrames reads the frame count of a Xing/Info or VBRI header in the
// frame at the position; tagged says such a header is there (the frame
// then carries no audio), n is its frame count (0 when it gives none).
func vbrFrames(c *cursor, f mpegFrame) (n uint64, tagged bool) {
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
			return be32(b[x+8:]), true
		}
		return 0, true
	}
	if len(b) >= 36+18 && string(b[36:40]) == "VBRI" {
		return be32(b[36+14:]), true
	}
	return 0, false
}
