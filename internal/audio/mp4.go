package audio

import (
	"errors"
	"fmt"
	"time"
)

// box is an ISO base media box: its type and where its body lies.
type box struct {
	typ        string
	start, end int64 // body
}

// nextBox reads the box header at the position (32-bit, 64-bit, or
// "to the end of its parent" sizes) and leaves the cursor at its body.
func nextBox(c *cursor, parentEnd int64) (box, error) {
	h, err := c.read(8)
	if err != nil {
		return box{}, err
	}
	size, typ, hdr := int64(be32(h)), string(h[4:8]), int64(8)
	switch size {
	case 0:
		size = parentEnd - c.pos + hdr
	case 1:
		l, err := c.read(8)
		if err != nil {
			return box{}, err
		}
		if be64(l) > 1<<62 {
			return box{}, errors.New("absurd box size")
		}
		size, hdr = int64(be64(l)), 16
	}
	b := box{typ: typ, start: c.pos, end: c.pos - hdr + size}
	if size < hdr || b.end > parentEnd {
		return box{}, fmt.Errorf("box %q of %d bytes does not fit", typ, size)
	}
	return b, nil
}

// findBox moves to the body of the first box of type typ between the
// position and end.
func findBox(c *cursor, end int64, typ string) (box, error) {
	for c.pos+8 <= end {
		b, err := nextBox(c, end)
		if err != nil {
			return box{}, err
		}
		if b.typ == typ {
			return b, nil
		}
		c.pos = b.end
	}
	return box{}, fmt.Errorf("no %s box", typ)
}

// mp4Duration reads the movie header (moov/mvhd): duration over timescale.
// Fragmented files whose mvhd says 0 use the movie extends header
// (moov/mvex/mehd); fragmented files without one are not read.
func mp4Duration(c *cursor) (time.Duration, error) {
	moov, err := findBox(c, c.size, "moov")
	if err != nil {
		return 0, err
	}
	mvhd, err := findBox(c, moov.end, "mvhd")
	if err != nil {
		return 0, err
	}
	b, err := c.peek(int(min(mvhd.end-mvhd.start, 32)))
	if err != nil || len(b) < 20 {
		return 0, errors.New("short mvhd")
	}
	var scale, dur uint64
	if b[0] == 1 {
		if len(b) < 32 {
			return 0, errors.New("short mvhd")
		}
		scale, dur = be32(b[20:]), be64(b[24:])
		if dur == 1<<64-1 {
			dur = 0
		}
	} else {
		scale, dur = be32(b[12:]), be32(b[16:])
		if dur == 0xFFFFFFFF {
			dur = 0
		}
	}
	if dur == 0 {
		c.pos = moov.start
		if mvex, err := findBox(c, moov.end, "mvex"); err == nil {
			if mehd, err := findBox(c, mvex.end, "mehd"); err == nil {
				if b, err := c.peek(int(min(mehd.end-mehd.start, 12))); err == nil && len(b) >= 8 {
					if b[0] == 1 && len(b) >= 12 {
						dur = be64(b[4:])
					} else {
						dur = be32(b[4:])
					}
				}
			}
		}
	}
	if dur == 0 {
		return 0, fmt.Errorf("%w: mp4 without a movie duration", ErrUnknownDuration)
	}
	return seconds(dur, scale)
}
