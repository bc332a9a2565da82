package audio

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Matroska/WebM element IDs the reader needs.
const (
	idEBML        = 0x1A45DFA3
	idDocType     = 0x4282
	idSegment     = 0x18538067
	idInfo        = 0x1549A966
	idTimecodeScl = 0x2AD7B1
	idDuration    = 0x4489
	idCluster     = 0x1F43B675
	idTimecode    = 0xE7
	idSimpleBlock = 0xA3
	idBlockGroup  = 0xA0
	idBlock       = 0xA1
	idBlockDur    = 0x9B
)

// level1 are the children of Segment; one of them ends a Cluster of
// unknown size (as browsers' MediaRecorder writes them).
var level1 = map[uint64]bool{0x114D9B74: true, idInfo: true, 0x1654AE6B: true, 0x1043A770: true,
	idCluster: true, 0x1C53BB6B: true, 0x1941A469: true, 0x1254C367: true, idEBML: true}

const unknownSize = -1

// vint reads an EBML variable-length integer; id keeps the length marker
// (element IDs), otherwise it is removed and all ones means unknown.
func vint(c *cursor, id bool) (uint64, int64, error) {
	b, err := c.peek(1)
	if err != nil {
		return 0, 0, err
	}
	n := 1
	for n <= 8 && b[0]&(0x80>>(n-1)) == 0 {
		n++
	}
	if n > 8 || (id && n > 4) {
		return 0, 0, errors.New("bad EBML varint")
	}
	b, err = c.read(n)
	if err != nil {
		return 0, 0, err
	}
	v := uint64(b[0])
	if !id {
		v &= 0xFF >> n
	}
	for _, x := range b[1:] {
		v = v<<8 | uint64(x)
	}
	if !id && v == 1<<(7*n)-1 {
		return v, unknownSize, nil
	}
	return v, int64(v), nil
}

// element reads an element header: its ID and body size (unknownSize
// when unknown, else clamped to nothing beyond the file).
func element(c *cursor) (uint64, int64, error) {
	id, _, err := vint(c, true)
	if err != nil {
		return 0, 0, err
	}
	_, size, err := vint(c, false)
	if err != nil {
		return 0, 0, err
	}
	if size > c.left() {
		size = c.left() // a truncated file: read what is there
	}
	return id, size, nil
}

func uintBody(b []byte) uint64 {
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

// webmDocType reports whether the EBML header at the position names WebM.
func webmDocType(c *cursor) bool {
	id, size, err := element(c)
	if err != nil || id != idEBML || size == unknownSize {
		return false
	}
	end := c.pos + size
	for c.pos < end {
		id, n, err := element(c)
		if err != nil || n == unknownSize || n > 64 {
			return false
		}
		b, err := c.read(int(n))
		if err != nil {
			return false
		}
		if id == idDocType {
			return string(b) == "webm"
		}
	}
	return false
}

// webmDuration reads Segment/Info/Duration (× TimecodeScale) when the
// muxer wrote it. Browser recordings usually lack it; then the clusters
// are walked (block payloads skipped) and the last block's timestamp,
// plus its BlockDuration when given, is the length: best effort, short by
// the last frame's length (typically 20 to 60 ms) when no duration is given.
func webmDuration(c *cursor) (time.Duration, error) {
	id, size, err := element(c)
	if err != nil || id != idEBML || size == unknownSize {
		return 0, errors.New("no EBML header")
	}
	if err := c.skip(size); err != nil {
		return 0, err
	}
	id, size, err = element(c)
	if err != nil || id != idSegment {
		return 0, errors.New("no Segment")
	}
	end := c.size
	if size != unknownSize {
		end = c.pos + size
	}
	scale, last := uint64(1_000_000), int64(-1)
	for c.pos < end {
		id, size, err := element(c)
		if err != nil {
			break
		}
		switch {
		case id == idCluster:
			cend := end
			if size != unknownSize {
				cend = c.pos + size
			}
			if err := cluster(c, cend, size == unknownSize, &last); err != nil {
				return 0, err
			}
			continue
		case size == unknownSize:
			return 0, fmt.Errorf("%w: webm element %x of unknown size", ErrUnknownDuration, id)
		case id == idInfo:
			s, d, err := info(c, c.pos+size)
			if err != nil {
				return 0, err
			}
			scale = s
			if d > 0 {
				ns := d * float64(scale)
				if math.IsNaN(ns) || ns > float64(maxDuration) {
					return 0, fmt.Errorf("%w: webm duration %v", ErrUnknownDuration, d)
				}
				return time.Duration(ns), nil
			}
			continue
		}
		if err := c.skip(size); err != nil {
			break
		}
	}
	if last < 0 {
		return 0, fmt.Errorf("%w: webm without Duration or blocks", ErrUnknownDuration)
	}
	if scale > 0 && uint64(last) > uint64(maxDuration)/scale {
		return 0, fmt.Errorf("%w: webm timestamps too large", ErrUnknownDuration)
	}
	return time.Duration(uint64(last) * scale), nil
}

// info reads Info's TimecodeScale (ns per tick, default 1ms) and Duration
// (ticks, a float; 0 when absent) and leaves the cursor at end.
func info(c *cursor, end int64) (uint64, float64, error) {
	scale, dur := uint64(1_000_000), 0.0
	for c.pos < end {
		id, n, err := element(c)
		if err != nil || n == unknownSize {
			return 0, 0, errors.New("bad Info element")
		}
		b, err := c.read(int(min(n, 16)))
		if err != nil {
			return 0, 0, err
		}
		if err := c.skip(n - int64(len(b))); err != nil {
			return 0, 0, err
		}
		switch {
		case id == idTimecodeScl && n <= 8:
			if s := uintBody(b); s > 0 {
				scale = s
			}
		case id == idDuration && n == 4:
			dur = float64(math.Float32frombits(uint32(be32(b))))
		case id == idDuration && n == 8:
			dur = math.Float64frombits(be64(b))
		}
	}
	if dur < 0 || math.IsNaN(dur) || math.IsInf(dur, 0) {
		dur = 0
	}
	return scale, dur, nil
}

// cluster walks one cluster's blocks and raises *last to the latest
// block end seen (in TimecodeScale ticks). A cluster of unknown size ends
// at the next top-level element.
func cluster(c *cursor, end int64, open bool, last *int64) error {
	var base int64
	for c.pos < end {
		if open {
			save := c.pos
			id, _, err := vint(c, true)
			c.pos = save
			if err != nil || level1[id] {
				return nil
			}
		}
		id, n, err := element(c)
		if err != nil || n == unknownSize {
			return nil // a truncated or odd tail: keep what was read
		}
		body := c.pos + n
		switch id {
		case idTimecode:
			b, err := c.read(int(min(n, 8)))
			if err != nil {
				return nil
			}
			base = int64(min(uintBody(b), 1<<53))
		case idSimpleBlock:
			if ts, ok := blockTime(c); ok {
				*last = max(*last, base+ts)
			}
		case idBlockGroup:
			var ts, dur int64
			ok := false
			for c.pos < body {
				cid, cn, err := element(c)
				if err != nil || cn == unknownSize {
					return nil
				}
				cend := c.pos + cn
				switch cid {
				case idBlock:
					ts, ok = blockTime(c)
				case idBlockDur:
					if b, err := c.read(int(min(cn, 8))); err == nil {
						dur = int64(min(uintBody(b), 1<<53))
					}
				}
				c.pos = cend
			}
			if ok {
				*last = max(*last, base+ts+dur)
			}
		}
		c.pos = body
	}
	return nil
}

// blockTime reads a (Simple)Block's timestamp relative to its cluster.
func blockTime(c *cursor) (int64, bool) {
	if _, _, err := vint(c, false); err != nil { // track number
		return 0, false
	}
	b, err := c.read(2)
	if err != nil {
		return 0, false
	}
	return int64(int16(be16(b))), true
}
