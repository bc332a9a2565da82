package audio

import "math/bits"

// Packet durations from the packets' own bytes, for the codecs carried in
// OGG and WebM: what a decoder will output for a packet, whatever the
// container's timestamps say.

// opusSamples is the duration of an Opus packet in 48 kHz samples, from
// its TOC byte (RFC 6716 section 3.1); 0 for a malformed packet, which a
// decoder refuses too.
func opusSamples(p []byte) uint64 {
	if len(p) == 0 {
		return 0
	}
	toc := p[0]
	cfg := toc >> 3
	var frame uint64
	switch {
	case cfg < 12: // SILK: 10, 20, 40, 60 ms
		frame = [4]uint64{480, 960, 1920, 2880}[cfg&3]
	case cfg < 16: // hybrid: 10, 20 ms
		frame = [2]uint64{480, 960}[cfg&1]
	default: // CELT: 2.5, 5, 10, 20 ms
		frame = [4]uint64{120, 240, 480, 960}[cfg&3]
	}
	n := uint64(1)
	switch toc & 3 {
	case 1, 2:
		n = 2
	case 3:
		if len(p) < 2 {
			return 0
		}
		n = uint64(p[1] & 0x3F)
	}
	if d := n * frame; d <= 5760 { // at most 120 ms per packet
		return d
	}
	return 0
}

// vorbisInfo is what a Vorbis stream's headers tell about packet lengths.
type vorbisInfo struct {
	rate     uint64
	short    uint64 // blocksize_0
	long     uint64 // blocksize_1
	modeLong []bool // each mode's blockflag; nil when the setup header was not read
	prev     uint64 // the previous audio packet's block size, 0 before the first
}

// parseVorbisID reads the identification header (packet type 1).
func parseVorbisID(p []byte) (*vorbisInfo, bool) {
	if len(p) < 30 || string(p[:7]) != "\x01vorbis" {
		return nil, false
	}
	e0, e1 := p[28]&0x0F, p[28]>>4
	if e0 < 6 || e1 > 13 || e0 > e1 {
		return nil, false
	}
	return &vorbisInfo{rate: le32(p[12:]), short: 1 << e0, long: 1 << e1}, true
}

// readSetup finds the modes' blockflags at the end of the setup header
// (packet type 5). The modes are the header's last fields, after
// codebooks that cannot be skipped without decoding them, so this reads
// backwards from the framing bit as FFmpeg's vorbis_parser does: each mode
// is a blockflag, two 16-bit zeros and a mapping number below 64, preceded
// by a 6-bit mode count.
func (v *vorbisInfo) readSetup(p []byte) {
	if len(p) < 7 || string(p[:7]) != "\x05vorbis" {
		return
	}
	r := backBits{p: p, pos: len(p) * 8}
	framing := -1
	for r.pos > 97 {
		if r.bits(1) == 1 {
			framing = r.pos
			break
		}
	}
	if framing < 0 {
		return
	}
	count, found := 0, 0
	for r.pos >= 97 {
		if r.bits(8) > 63 || r.bits(16) != 0 || r.bits(16) != 0 {
			break
		}
		r.pos--
		if count++; count > 64 {
			break
		}
		peek := r
		if peek.bits(6)+1 == uint64(count) {
			found = count
		}
	}
	if found == 0 {
		return
	}
	flags := make([]bool, found)
	r = backBits{p: p, pos: framing}
	for i := found - 1; i >= 0; i-- {
		r.pos -= 40
		flags[i] = r.bits(1) == 1
	}
	v.modeLong = flags
}

// packet is the number of samples an audio packet adds (samples overlap:
// a packet completes half of the previous block and half of its own), or
// 0 for a header packet. Without the modes, every block counts as short.
func (v *vorbisInfo) packet(p []byte) uint64 {
	if len(p) == 0 || p[0]&1 != 0 {
		return 0
	}
	cur := v.short
	if n := len(v.modeLong); n > 1 {
		mode := int(p[0]>>1) & (1<<bits.Len(uint(n-1)) - 1)
		if mode >= n {
			return 0
		}
		if v.modeLong[mode] {
			cur = v.long
		}
	} else if n == 1 && v.modeLong[0] {
		cur = v.long
	}
	var d uint64
	if v.prev > 0 {
		d = (v.prev + cur) / 4
	}
	v.prev = cur
	return d
}

// backBits reads a Vorbis (LSB-first) bitstream backwards: pos counts the
// bits not yet read from the start, and each field comes out with its
// value intact because its most significant bit was written last.
type backBits struct {
	p   []byte
	pos int
}

func (r *backBits) bits(n int) uint64 {
	var v uint64
	for range n {
		if r.pos <= 0 {
			return v << 1
		}
		r.pos--
		v = v<<1 | uint64(r.p[r.pos>>3]>>(r.pos&7)&1)
	}
	return v
}
