package audio

import (
	"errors"
	"fmt"
	"time"
)

// flacDuration reads STREAMINFO's total samples as the claim (0 means the
// encoder did not know it, as in a live stream) and counts the frames for
// the content: the metadata blocks are skipped by their sizes, then every
// frame header found is added up (block sizes at the frames' sample rate).
// A decoder plays every frame whatever STREAMINFO says, so its total is
// never the only word.
func flacDuration(c *cursor) (reading, error) {
	if err := skipID3(c); err != nil {
		return reading{}, err
	}
	b, err := c.read(8)
	if err != nil {
		return reading{}, err
	}
	if string(b[:4]) != "fLaC" || b[4]&0x7F != 0 || be24(b[5:]) < 18 {
		return reading{}, errors.New("no STREAMINFO block")
	}
	info, err := c.peek(18)
	if err != nil {
		return reading{}, err
	}
	rate, total := streamInfo(info)
	var rd reading
	if total > 0 {
		rd.claim = claimed(total, rate)
	}
	// The remaining metadata blocks, up to the one flagged last.
	last, size := b[4]&0x80 != 0, int64(be24(b[5:]))
	for {
		if err := c.skip(size); err != nil {
			return rd, nil // truncated inside the metadata: no frames
		}
		if last {
			break
		}
		h, err := c.read(4)
		if err != nil || h[0]&0x7F == 127 {
			return rd, nil
		}
		last, size = h[0]&0x80 != 0, int64(be24(h[1:]))
	}
	rd.content, err = flacFrames(c, rate)
	if err != nil {
		return reading{}, err
	}
	if rd.claim == 0 && rd.content == 0 {
		return reading{}, fmt.Errorf("%w: flac without a sample count or frames", ErrUnknownDuration)
	}
	return rd, nil
}

// streamInfo decodes the rate and sample count of a STREAMINFO block body.
func streamInfo(b []byte) (rate, total uint64) {
	rate = uint64(b[10])<<12 | uint64(b[11])<<4 | uint64(b[12])>>4
	total = uint64(b[13]&0x0F)<<32 | be32(b[14:])
	return rate, total
}

// flacFrames scans from the position to the end for frame headers and
// sums their block sizes. A header counts when its CRC-8 holds and its
// fixed fields (blocking strategy, sample rate, sample size, channel
// count) match the first header's, so a sync code inside compressed data
// is not taken for a frame.
func flacFrames(c *cursor, siRate uint64) (time.Duration, error) {
	var (
		samples, rate uint64
		key           uint32
		seen          bool
	)
	for c.seek2(0xFF, 0xFE, 0xF8) {
		b, err := c.peek(int(min(c.left(), 16)))
		if err != nil {
			break
		}
		f, ok := parseFLACFrame(b, siRate)
		if ok && (!seen || f.key == key && f.rate == rate) {
			if !seen {
				seen, key, rate = true, f.key, f.rate
			}
			samples = satAdd(samples, f.block)
			c.pos += int64(f.hdrLen)
			continue
		}
		c.pos++
	}
	if !seen {
		return 0, nil
	}
	return seconds(samples, rate)
}

// flacFrame is a decoded FLAC frame header.
type flacFrame struct {
	block, rate uint64
	key         uint32 // blocking strategy, rate code, channel count, sample size code
	hdrLen      int
}

// flacRates are the sample rates of codes 1 to 11.
var flacRates = [12]uint64{0, 88200, 176400, 192000, 8000, 16000, 22050, 24000, 32000, 44100, 48000, 96000}

// parseFLACFrame decodes the frame header at the start of b (RFC 9639
// section 9.1), with siRate standing in for "rate from STREAMINFO".
func parseFLACFrame(b []byte, siRate uint64) (flacFrame, bool) {
	if len(b) < 6 || b[0] != 0xFF || b[1]&0xFE != 0xF8 {
		return flacFrame{}, false
	}
	bsCode, rateCode := b[2]>>4, b[2]&0x0F
	chanCode, sizeCode := b[3]>>4, (b[3]>>1)&7
	if bsCode == 0 || rateCode == 15 || chanCode > 10 || sizeCode == 3 || b[3]&1 != 0 {
		return flacFrame{}, false
	}
	// The coded frame or sample number: UTF-8 style, 1 to 7 bytes.
	i := 4
	n := 0
	switch x := b[i]; {
	case x&0x80 == 0:
	case x&0xE0 == 0xC0:
		n = 1
	case x&0xF0 == 0xE0:
		n = 2
	case x&0xF8 == 0xF0:
		n = 3
	case x&0xFC == 0xF8:
		n = 4
	case x&0xFE == 0xFC:
		n = 5
	case x == 0xFE:
		n = 6
	default:
		return flacFrame{}, false
	}
	i++
	for ; n > 0; n-- {
		if i >= len(b) || b[i]&0xC0 != 0x80 {
			return flacFrame{}, false
		}
		i++
	}
	var f flacFrame
	switch {
	case bsCode == 1:
		f.block = 192
	case bsCode <= 5:
		f.block = 576 << (bsCode - 2)
	case bsCode == 6:
		if i+1 > len(b) {
			return flacFrame{}, false
		}
		f.block, i = uint64(b[i])+1, i+1
	case bsCode == 7:
		if i+2 > len(b) {
			return flacFrame{}, false
		}
		f.block, i = be16(b[i:])+1, i+2
	default:
		f.block = 256 << (bsCode - 8)
	}
	switch {
	case rateCode == 0:
		f.rate = siRate
	case rateCode <= 11:
		f.rate = flacRates[rateCode]
	case rateCode == 12:
		if i+1 > len(b) {
			return flacFrame{}, false
		}
		f.rate, i = uint64(b[i])*1000, i+1
	default:
		if i+2 > len(b) {
			return flacFrame{}, false
		}
		f.rate = be16(b[i:])
		if rateCode == 14 {
			f.rate *= 10
		}
		i += 2
	}
	if f.rate == 0 || i >= len(b) || crc8(b[:i]) != b[i] {
		return flacFrame{}, false
	}
	channels := uint32(chanCode) + 1
	if chanCode >= 8 {
		channels = 2
	}
	f.key = uint32(b[1]&1)<<16 | uint32(rateCode)<<8 | channels<<4 | uint32(sizeCode)
	f.hdrLen = i + 1
	return f, true
}

// crc8 is FLAC's header CRC (polynomial x^8 + x^2 + x + 1, initial 0).
func crc8(b []byte) byte {
	var crc byte
	for _, x := range b {
		crc ^= x
		for range 8 {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x07
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
