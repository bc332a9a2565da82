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
	idTracks      = 0x1654AE6B
	idTrackEntry  = 0xAE
	idTrackNumber = 0xD7
	idTrackType   = 0x83
	idCodecID     = 0x86
	idCodecPriv   = 0x63A2
	idCodecDelay  = 0x56AA
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

// webmTrack is an audio track whose frames the reader can time.
type webmTrack struct {
	opus    bool
	vorbis  *vorbisInfo
	rate    uint64 // of the samples counted
	delay   uint64 // CodecDelay, ns
	samples uint64
}

// webmFile collects what the walk learns.
type webmFile struct {
	scale  uint64
	last   int64 // the latest block end seen, in TimecodeScale ticks; -1 none
	tracks map[uint64]*webmTrack
}

// webmDuration walks the segment. The claims are Info's Duration (×
// TimecodeScale) and the latest block timestamp (plus its BlockDuration),
// which browser recordings (MediaRecorder, no Duration) rely on. The
// content is every frame of every Opus or Vorbis track (the two audio
// codecs WebM allows), laced frames included, timed from the frames' own
// bytes: a decoder plays them all, whatever the timestamps say.
func webmDuration(c *cursor) (reading, error) {
	id, size, err := element(c)
	if err != nil || id != idEBML || size == unknownSize {
		return reading{}, errors.New("no EBML header")
	}
	if err := c.skip(size); err != nil {
		return reading{}, err
	}
	id, size, err = element(c)
	if err != nil || id != idSegment {
		return reading{}, errors.New("no Segment")
	}
	end := c.size
	if size != unknownSize {
		end = c.pos + size
	}
	w := &webmFile{scale: 1_000_000, last: -1, tracks: map[uint64]*webmTrack{}}
	var rd reading
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
			w.cluster(c, cend, size == unknownSize)
			continue
		case size == unknownSize:
			return reading{}, fmt.Errorf("%w: webm element %x of unknown size", ErrUnknownDuration, id)
		case id == idInfo:
			s, d, err := info(c, c.pos+size)
			if err != nil {
				return reading{}, err
			}
			w.scale = s
			if ns := d * float64(s); d > 0 && ns < float64(maxDuration) {
				rd.claim = time.Duration(ns)
			}
			continue
		case id == idTracks:
			w.readTracks(c, c.pos+size)
			continue
		}
		if err := c.skip(size); err != nil {
			break
		}
	}
	if w.last >= 0 && w.scale > 0 && uint64(w.last) <= uint64(maxDuration)/w.scale {
		rd.claim = max(rd.claim, time.Duration(uint64(w.last)*w.scale))
	}
	for _, t := range w.tracks {
		d, err := seconds(t.samples, t.rate)
		if err != nil {
			return reading{}, err
		}
		rd.content = max(rd.content, d-min(d, time.Duration(min(t.delay, uint64(maxDuration)))))
	}
	if rd.claim == 0 && rd.content == 0 {
		return reading{}, fmt.Errorf("%w: webm without Duration or blocks", ErrUnknownDuration)
	}
	return rd, nil
}

// readTracks notes the Opus and Vorbis audio tracks, and leaves the
// cursor at end.
func (w *webmFile) readTracks(c *cursor, end int64) {
	for c.pos < end {
		id, n, err := element(c)
		if err != nil || n == unknownSize {
			break
		}
		next := c.pos + n
		if id == idTrackEntry {
			w.trackEntry(c, next)
		}
		c.pos = next
	}
	c.pos = end
}

// trackEntry reads one TrackEntry up to end.
func (w *webmFile) trackEntry(c *cursor, end int64) {
	var (
		num, typ, delay uint64
		codec           string
		private         []byte
	)
	for c.pos < end {
		id, n, err := element(c)
		if err != nil || n == unknownSize {
			break
		}
		next := c.pos + n
		switch id {
		case idTrackNumber, idTrackType, idCodecDelay:
			if b, err := c.peek(int(min(n, 8))); err == nil {
				switch v := uintBody(b); id {
				case idTrackNumber:
					num = v
				case idTrackType:
					typ = v
				default:
					delay = v
				}
			}
		case idCodecID:
			if b, err := c.peek(int(min(n, 32))); err == nil {
				codec = string(b)
			}
		case idCodecPriv:
			if n <= maxSetup {
				if b, err := c.peek(int(n)); err == nil {
					private = append([]byte(nil), b...)
				}
			}
		}
		c.pos = next
	}
	if _, dup := w.tracks[num]; typ != 2 || dup {
		return // not audio, or a number already taken (the first track keeps it)
	}
	switch codec {
	case "A_OPUS":
		w.tracks[num] = &webmTrack{opus: true, rate: 48000, delay: delay}
	case "A_VORBIS":
		if v := vorbisPrivate(private); v != nil {
			w.tracks[num] = &webmTrack{vorbis: v, rate: v.rate, delay: delay}
		}
	}
}

// vorbisPrivate reads Vorbis's CodecPrivate: the three header packets,
// Xiph-laced.
func vorbisPrivate(p []byte) *vorbisInfo {
	if len(p) < 3 || p[0] != 2 {
		return nil
	}
	var sizes [2]int
	i := 1
	for k := range sizes {
		for i < len(p) {
			sizes[k] += int(p[i])
			i++
			if p[i-1] != 255 {
				break
			}
		}
	}
	if i+sizes[0]+sizes[1] > len(p) {
		return nil
	}
	v, ok := parseVorbisID(p[i : i+sizes[0]])
	if !ok {
		return nil
	}
	v.readSetup(p[i+sizes[0]+sizes[1]:])
	return v
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

// cluster walks one cluster's blocks, raising w.last to the latest block
// end seen and counting the audio tracks' frames. A cluster of unknown
// size ends at the next top-level element.
func (w *webmFile) cluster(c *cursor, end int64, open bool) {
	var base int64
	for c.pos < end {
		if open {
			save := c.pos
			id, _, err := vint(c, true)
			c.pos = save
			if err != nil || level1[id] {
				return
			}
		}
		id, n, err := element(c)
		if err != nil || n == unknownSize {
			return // a truncated or odd tail: keep what was read
		}
		body := c.pos + n
		switch id {
		case idTimecode:
			b, err := c.read(int(min(n, 8)))
			if err != nil {
				return
			}
			base = int64(min(uintBody(b), 1<<53))
		case idSimpleBlock:
			if ts, ok := w.block(c, body); ok {
				w.last = max(w.last, base+ts)
			}
		case idBlockGroup:
			var ts, dur int64
			ok := false
			for c.pos < body {
				cid, cn, err := element(c)
				if err != nil || cn == unknownSize {
					return
				}
				cend := c.pos + cn
				switch cid {
				case idBlock:
					ts, ok = w.block(c, cend)
				case idBlockDur:
					if b, err := c.read(int(min(cn, 8))); err == nil {
						dur = int64(min(uintBody(b), 1<<53))
					}
				}
				c.pos = cend
			}
			if ok {
				w.last = max(w.last, base+ts+dur)
			}
		}
		c.pos = body
	}
}

// block reads a (Simple)Block ending at end: its timestamp relative to the
// cluster, and, for a counted audio track, its frames' samples.
func (w *webmFile) block(c *cursor, end int64) (int64, bool) {
	num, _, err := vint(c, false)
	if err != nil {
		return 0, false
	}
	b, err := c.read(3)
	if err != nil {
		return 0, false
	}
	ts := int64(int16(be16(b)))
	if t := w.tracks[num]; t != nil {
		t.frames(c, end, (b[2]>>1)&3)
	}
	return ts, true
}

// frames counts the frames of a block body from the position to end,
// laced as lacing says (0 none, 1 Xiph, 2 fixed-size, 3 EBML).
func (t *webmTrack) frames(c *cursor, end int64, lacing byte) {
	var sizes []int64
	if lacing != 0 {
		b, err := c.read(1)
		if err != nil {
			return
		}
		count := int(b[0]) + 1
		switch {
		case count == 1:
		case lacing == 1:
			for range count - 1 {
				var n int64
				for {
					x, err := c.read(1)
					if err != nil {
						return
					}
					n += int64(x[0])
					if x[0] != 255 {
						break
					}
				}
				sizes = append(sizes, n)
			}
		case lacing == 3:
			v, n, err := vint(c, false)
			if err != nil || n == unknownSize {
				return
			}
			sizes = append(sizes, int64(v))
			for range count - 2 {
				start := c.pos
				v, _, err := vint(c, false)
				if err != nil {
					return
				}
				bias := int64(1)<<(7*(c.pos-start)-1) - 1
				sizes = append(sizes, max(sizes[len(sizes)-1]+int64(v)-bias, 0))
			}
		case lacing == 2:
			each := (end - c.pos) / int64(count)
			for range count - 1 {
				sizes = append(sizes, each)
			}
		}
	}
	var rest int64
	for _, n := range sizes {
		rest += n
	}
	sizes = append(sizes, end-c.pos-rest) // the last frame takes what is left
	for _, n := range sizes {
		if n <= 0 || c.pos+n > end {
			return
		}
		p, err := c.peek(int(min(n, 2)))
		if err != nil {
			return
		}
		var s uint64
		if t.opus {
			s = opusSamples(p)
		} else {
			s = t.vorbis.packet(p)
		}
		t.samples = satAdd(t.samples, s)
		c.pos += n
	}
}
