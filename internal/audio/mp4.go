package audio

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
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

// each visits the child boxes between start and end, stopping at the
// first that does not fit; fn may move the cursor.
func each(c *cursor, start, end int64, fn func(b box)) {
	for pos := start; pos+8 <= end; {
		c.pos = pos
		b, err := nextBox(c, end)
		if err != nil {
			return
		}
		fn(b)
		pos = b.end
	}
}

// body peeks at up to n bytes of b's body.
func (b box) body(c *cursor, n int) []byte {
	c.pos = b.start
	p, err := c.peek(int(min(int64(n), b.end-b.start)))
	if err != nil {
		return nil
	}
	return p
}

// mp4Track is what the file says about one track.
type mp4Track struct {
	id        uint64
	audio     bool
	timescale uint64
	mdhd      uint64 // the media header's duration (a claim)
	samples   uint64 // samples listed in the sample table
	ticks     uint64 // their durations summed (stts)
	frame     uint64 // samples a decoder outputs per listed sample; 0 unknown codec
	frameRate uint64 // the rate of those
}

// mp4Frags is what the fragments (moof) add to a track id.
type mp4Frags struct {
	samples, ticks uint64
	undated        uint64 // samples whose duration is trex's default
}

// mp4File collects the movie's facts while its top-level boxes are walked.
type mp4File struct {
	scale, mvhd, mehd uint64
	traks             []*mp4Track
	trex              map[uint64]uint64 // track id → default sample duration
	frags             map[uint64]*mp4Frags
}

// mp4Duration walks the top-level boxes. The claims are the movie header's
// duration (mvhd, or mehd for fragmented files) and each audio track's
// media header. The content is each audio track's samples: every sample
// listed in the sample table (stsz) and in every fragment (trun) is one
// the decoder decodes, and for the codecs whose frame length is fixed or
// in the sample entry (AAC, ALAC, MPEG audio, AMR, AC-3; Opus and FLAC at
// their shortest frame; PCM) count × frame length is a length that
// timestamps (stts) cannot shrink; the summed sample durations count too.
// Only the first moov counts, as for decoders; fragments join the first
// track of their id.
func mp4Duration(c *cursor) (reading, error) {
	m := &mp4File{trex: map[uint64]uint64{}, frags: map[uint64]*mp4Frags{}}
	haveMoov := false
	for pos := c.pos; pos+8 <= c.size; {
		c.pos = pos
		b, err := nextBox(c, c.size)
		if err != nil {
			break
		}
		switch {
		case b.typ == "moov" && !haveMoov:
			haveMoov = true
			m.moov(c, b)
		case b.typ == "moof":
			m.moof(c, b)
		}
		pos = b.end
	}
	if !haveMoov {
		return reading{}, errors.New("no moov box")
	}
	rd := reading{claim: max(claimed(m.mvhd, m.scale), claimed(m.mehd, m.scale))}
	seen := map[uint64]bool{}
	for _, t := range m.traks {
		first := !seen[t.id]
		seen[t.id] = true
		if !t.audio {
			continue
		}
		rd.claim = max(rd.claim, claimed(t.mdhd, t.timescale))
		samples, ticks := t.samples, t.ticks
		if f := m.frags[t.id]; f != nil && first {
			samples = satAdd(samples, f.samples)
			ticks = satAdd(ticks, satAdd(f.ticks, satMul(f.undated, m.trex[t.id])))
		}
		if samples == 0 && ticks == 0 {
			continue
		}
		d, err := seconds(ticks, t.timescale)
		if err != nil {
			return reading{}, err
		}
		if t.frame > 0 {
			f, err := seconds(satMul(samples, t.frame), t.frameRate)
			if err != nil {
				return reading{}, err
			}
			d = max(d, f)
		}
		rd.content = max(rd.content, d)
	}
	if rd.claim == 0 && rd.content == 0 {
		return reading{}, fmt.Errorf("%w: mp4 without a movie duration or audio samples", ErrUnknownDuration)
	}
	return rd, nil
}

// moov reads the movie header, the fragment defaults and the tracks.
func (m *mp4File) moov(c *cursor, moov box) {
	each(c, moov.start, moov.end, func(b box) {
		switch b.typ {
		case "mvhd":
			p := b.body(c, 32)
			switch {
			case len(p) >= 32 && p[0] == 1:
				m.scale, m.mvhd = be32(p[20:]), be64(p[24:])
			case len(p) >= 20 && p[0] == 0:
				m.scale, m.mvhd = be32(p[12:]), be32(p[16:])
			}
			if m.mvhd == 0xFFFFFFFF || m.mvhd == 1<<64-1 {
				m.mvhd = 0 // "unknown"
			}
		case "mvex":
			each(c, b.start, b.end, func(x box) {
				p := x.body(c, 16)
				switch {
				case x.typ == "mehd" && len(p) >= 12 && p[0] == 1:
					m.mehd = be64(p[4:])
				case x.typ == "mehd" && len(p) >= 8:
					m.mehd = be32(p[4:])
				case x.typ == "trex" && len(p) >= 16:
					m.trex[be32(p[4:])] = be32(p[12:])
				}
			})
		case "trak":
			m.trak(c, b)
		}
	})
}

// trak reads one track: its id, media header, handler and sample table.
func (m *mp4File) trak(c *cursor, trak box) {
	t := &mp4Track{}
	m.traks = append(m.traks, t)
	each(c, trak.start, trak.end, func(b box) {
		switch b.typ {
		case "tkhd":
			p := b.body(c, 24)
			switch {
			case len(p) >= 24 && p[0] == 1:
				t.id = be32(p[20:])
			case len(p) >= 16:
				t.id = be32(p[12:])
			}
		case "mdia":
			each(c, b.start, b.end, func(x box) {
				switch x.typ {
				case "mdhd":
					p := x.body(c, 32)
					switch {
					case len(p) >= 32 && p[0] == 1:
						t.timescale, t.mdhd = be32(p[20:]), be64(p[24:])
					case len(p) >= 20:
						t.timescale, t.mdhd = be32(p[12:]), be32(p[16:])
					}
					if t.mdhd == 0xFFFFFFFF || t.mdhd == 1<<64-1 {
						t.mdhd = 0
					}
				case "hdlr":
					p := x.body(c, 12)
					t.audio = len(p) >= 12 && string(p[8:12]) == "soun"
				case "minf":
					each(c, x.start, x.end, func(y box) {
						if y.typ == "stbl" {
							t.sampleTable(c, y)
						}
					})
				}
			})
		}
	})
}

// sampleTable reads the codec (stsd), the sample durations (stts) and the
// sample count (stsz or stz2).
func (t *mp4Track) sampleTable(c *cursor, stbl box) {
	each(c, stbl.start, stbl.end, func(b box) {
		switch b.typ {
		case "stsd":
			t.sampleEntry(c, b)
		case "stts":
			p := b.body(c, 8)
			if len(p) < 8 {
				return
			}
			c.pos = b.start + 8
			for n := be32(p[4:]); n > 0 && c.pos+8 <= b.end; n-- {
				e, err := c.read(8)
				if err != nil {
					return
				}
				t.ticks = satAdd(t.ticks, satMul(be32(e), be32(e[4:])))
			}
		case "stsz", "stz2":
			if p := b.body(c, 12); len(p) >= 12 {
				t.samples = satAdd(t.samples, be32(p[8:]))
			}
		}
	})
}

// aacRates are the sampling frequencies of AudioSpecificConfig's index.
var aacRates = [13]uint64{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350}

// sampleEntry reads the first sample entry of stsd: the codec and, where
// it fixes one, how many samples each listed sample decodes to.
func (t *mp4Track) sampleEntry(c *cursor, stsd box) {
	c.pos = stsd.start + 8
	e, err := nextBox(c, stsd.end)
	if err != nil {
		return
	}
	p := e.body(c, 64)
	if len(p) < 28 {
		return
	}
	rate := be32(p[24:]) >> 16
	children := e.start + 28
	switch be16(p[8:]) { // QuickTime sound description versions
	case 1:
		children += 16
	case 2:
		children += 36
		if len(p) >= 40 {
			rate = uint64(math.Float64frombits(be64(p[32:])))
		}
	}
	t.frameRate = rate
	switch e.typ {
	case "mp4a":
		t.frame = 1024 // AAC, unless esds says otherwise
		t.esds(c, children, e.end)
	case ".mp3":
		t.frame = mpegFrameLen(rate)
	case "alac":
		each(c, children, e.end, func(b box) {
			if p := b.body(c, 28); b.typ == "alac" && len(p) >= 28 {
				t.frame = be32(p[4:])
				if r := be32(p[24:]); r > 0 {
					t.frameRate = r
				}
			}
		})
	case "samr":
		t.frame, t.frameRate = 160, 8000
	case "sawb":
		t.frame, t.frameRate = 320, 16000
	case "ac-3":
		t.frame = 1536
	case "ec-3":
		t.frame = 256 // E-AC-3 frames hold 1 to 6 blocks of 256
	case "Opus":
		t.frame, t.frameRate = 120, 48000 // 2.5 ms, the shortest Opus frame
	case "fLaC":
		t.frame = 16 // the smallest FLAC block
		each(c, children, e.end, func(b box) {
			if p := b.body(c, 8+18); b.typ == "dfLa" && len(p) >= 26 {
				t.frame = max(be16(p[8:]), 16)
				if r, _ := streamInfo(p[8:]); r > 0 {
					t.frameRate = r
				}
			}
		})
	case "sowt", "twos", "lpcm", "in24", "in32", "fl32", "fl64", "raw ", "ulaw", "alaw":
		t.frame = 1
	}
}

// mpegFrameLen is the samples per MPEG audio layer III frame at rate.
func mpegFrameLen(rate uint64) uint64 {
	if rate >= 32000 {
		return 1152
	}
	return 576
}

// esds reads the ES descriptor of an mp4a entry (possibly inside a
// QuickTime wave box): the object type, and for AAC the frame length and
// core rate from the AudioSpecificConfig.
func (t *mp4Track) esds(c *cursor, start, end int64) {
	each(c, start, end, func(b box) {
		switch b.typ {
		case "wave":
			t.esds(c, b.start, b.end)
		case "esds":
			p := b.body(c, 512)
			if len(p) < 4 {
				return
			}
			oti, asc := esDescriptor(p[4:])
			switch {
			case oti == 0x69 || oti == 0x6B:
				t.frame = mpegFrameLen(t.frameRate)
			case len(asc) >= 2:
				if f, r := audioSpecificConfig(asc); f > 0 && r > 0 {
					t.frame, t.frameRate = f, r
				}
			}
		}
	})
}

// esDescriptor finds the object type indication and the decoder specific
// info in an ES_Descriptor.
func esDescriptor(p []byte) (oti byte, asc []byte) {
	tag, body, _ := descriptor(p)
	if tag != 0x03 || len(body) < 3 {
		return 0, nil
	}
	flags, q := body[2], body[3:]
	if flags&0x80 != 0 && len(q) >= 2 {
		q = q[2:]
	}
	if flags&0x40 != 0 && len(q) >= 1 && len(q) >= 1+int(q[0]) {
		q = q[1+int(q[0]):]
	}
	if flags&0x20 != 0 && len(q) >= 2 {
		q = q[2:]
	}
	tag, dcd, _ := descriptor(q)
	if tag != 0x04 || len(dcd) < 13 {
		return 0, nil
	}
	oti = dcd[0]
	if tag, dsi, _ := descriptor(dcd[13:]); tag == 0x05 {
		asc = dsi
	}
	return oti, asc
}

// descriptor splits an MPEG-4 descriptor into its tag, body and the rest.
func descriptor(p []byte) (byte, []byte, []byte) {
	if len(p) < 2 {
		return 0, nil, nil
	}
	tag, n, i := p[0], 0, 1
	for ; i < len(p) && i <= 4; i++ {
		n = n<<7 | int(p[i]&0x7F)
		if p[i]&0x80 == 0 {
			i++
			break
		}
	}
	if n > len(p)-i {
		n = len(p) - i
	}
	return tag, p[i : i+n], p[i+n:]
}

// audioSpecificConfig reads an AAC AudioSpecificConfig: the samples per
// frame and the core sampling rate (with SBR the output has twice both).
func audioSpecificConfig(p []byte) (frame, rate uint64) {
	r := fwdBits{p: p}
	aot := func() uint64 {
		if a := r.bits(5); a != 31 {
			return a
		}
		return 32 + r.bits(6)
	}
	freq := func() uint64 {
		if i := r.bits(4); i < 13 {
			return aacRates[i]
		} else if i == 15 {
			return r.bits(24)
		}
		return 0
	}
	a := aot()
	rate = freq()
	r.bits(4) // channel configuration
	if a == 5 || a == 29 {
		freq() // the SBR output rate
		a = aot()
	}
	frame = 1024
	if a == 23 || a == 39 {
		frame = 512 // low delay
	}
	switch a {
	case 1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22, 23, 39:
		if r.bits(1) == 1 {
			frame = frame * 15 / 16 // 960 or 480
		}
	}
	if r.short {
		return 0, 0
	}
	return frame, rate
}

// fwdBits reads a big-endian bitstream; short is set when it ran out.
type fwdBits struct {
	p     []byte
	pos   int
	short bool
}

func (r *fwdBits) bits(n int) uint64 {
	var v uint64
	for range n {
		if r.pos >= len(r.p)*8 {
			r.short = true
			return v
		}
		v = v<<1 | uint64(r.p[r.pos>>3]>>(7-r.pos&7)&1)
		r.pos++
	}
	return v
}

// moof adds a fragment's samples to their track ids: each traf's trun
// sample counts, and their durations (per sample, tfhd's default, or
// trex's).
func (m *mp4File) moof(c *cursor, moof box) {
	each(c, moof.start, moof.end, func(traf box) {
		if traf.typ != "traf" {
			return
		}
		var (
			f          *mp4Frags
			defaultDur uint64
			haveDef    bool
		)
		each(c, traf.start, traf.end, func(b box) {
			switch {
			case b.typ == "tfhd":
				p := b.body(c, 32)
				if len(p) < 8 {
					return
				}
				flags, id := be24(p[1:]), be32(p[4:])
				if f = m.frags[id]; f == nil {
					f = &mp4Frags{}
					m.frags[id] = f
				}
				off := 8
				if flags&0x01 != 0 {
					off += 8
				}
				if flags&0x02 != 0 {
					off += 4
				}
				if flags&0x08 != 0 && len(p) >= off+4 {
					defaultDur, haveDef = be32(p[off:]), true
				}
			case b.typ == "trun" && f != nil:
				f.trun(c, b, defaultDur, haveDef)
			}
		})
	})
}

// trun adds one track run.
func (f *mp4Frags) trun(c *cursor, b box, defaultDur uint64, haveDef bool) {
	p := b.body(c, 8)
	if len(p) < 8 {
		return
	}
	flags, count := be24(p[1:]), be32(p[4:])
	f.samples = satAdd(f.samples, count)
	c.pos = b.start + 8
	if flags&0x01 != 0 {
		c.pos += 4
	}
	if flags&0x04 != 0 {
		c.pos += 4
	}
	size := int64(4 * bits.OnesCount64(flags&0xF00))
	switch {
	case flags&0x100 != 0:
		for n := count; n > 0 && c.pos+size <= b.end; n-- {
			e, err := c.read(int(size))
			if err != nil {
				return
			}
			f.ticks = satAdd(f.ticks, be32(e))
		}
	case haveDef:
		f.ticks = satAdd(f.ticks, satMul(count, defaultDur))
	default:
		f.undated = satAdd(f.undated, count)
	}
}
