package audio

import (
	"bytes"
	"encoding/binary"
	"math"
)

// Builders of small, valid files of each format for the table tests.

func le32b(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// chunk is a RIFF chunk, padded to an even length.
func chunk(id string, body []byte) []byte {
	b := append([]byte(id), le32b(uint32(len(body)))...)
	b = append(b, body...)
	if len(body)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

func fmtChunk(format, channels uint16, rate, byteRate uint32, align, bits uint16) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint16(b, format)
	b = binary.LittleEndian.AppendUint16(b, channels)
	b = binary.LittleEndian.AppendUint32(b, rate)
	b = binary.LittleEndian.AppendUint32(b, byteRate)
	b = binary.LittleEndian.AppendUint16(b, align)
	b = binary.LittleEndian.AppendUint16(b, bits)
	return chunk("fmt ", b)
}

func riff(chunks ...[]byte) []byte {
	body := []byte("WAVE")
	for _, c := range chunks {
		body = append(body, c...)
	}
	return append(append([]byte("RIFF"), le32b(uint32(len(body)))...), body...)
}

// pcmWAV is a 16-bit mono PCM sine of n samples at rate.
func pcmWAV(rate uint32, n int) []byte {
	data := make([]byte, 0, 2*n)
	for i := range n {
		v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate)))
		data = binary.LittleEndian.AppendUint16(data, uint16(v))
	}
	return riff(fmtChunk(1, 1, rate, rate*2, 2, 16), chunk("data", data))
}

// mpegFrames is n frames with header h (4 bytes) and length l, the rest
// zero; with pad, every other frame has the padding bit and one more byte.
func mpegFrames(h [4]byte, l, n int, pad bool) []byte {
	var b []byte
	for i := range n {
		f := make([]byte, l)
		copy(f, h[:])
		if pad && i%2 == 1 {
			f[2] |= 2
			f = append(f, 0)
		}
		b = append(b, f...)
	}
	return b
}

var (
	mpeg1L3 = [4]byte{0xFF, 0xFB, 0x90, 0x00} // 128 kbit/s, 44.1 kHz, stereo: 417 bytes, 1152 samples
	mpeg2L3 = [4]byte{0xFF, 0xF3, 0x80, 0xC0} // 64 kbit/s, 22.05 kHz, mono: 208 bytes, 576 samples
)

// xingFrame is a first frame whose Xing (or Info) header claims frames.
func xingFrame(tag string, frames uint32) []byte {
	f := make([]byte, 417)
	copy(f, mpeg1L3[:])
	copy(f[36:], tag)
	binary.BigEndian.PutUint32(f[40:], 1)
	binary.BigEndian.PutUint32(f[44:], frames)
	return f
}

func vbriFrame(frames uint32) []byte {
	f := make([]byte, 417)
	copy(f, mpeg1L3[:])
	copy(f[36:], "VBRI")
	binary.BigEndian.PutUint32(f[36+14:], frames)
	return f
}

// id3 is an ID3v2.4 tag of n body bytes.
func id3(n int) []byte {
	b := []byte{'I', 'D', '3', 4, 0, 0, byte(n >> 21 & 0x7F), byte(n >> 14 & 0x7F), byte(n >> 7 & 0x7F), byte(n & 0x7F)}
	return append(b, make([]byte, n)...)
}

// flacFile is fLaC + STREAMINFO (rate, total samples) + a little payload.
func flacFile(rate uint32, total uint64) []byte {
	si := make([]byte, 34)
	si[10] = byte(rate >> 12)
	si[11] = byte(rate >> 4)
	si[12] = byte(rate<<4) | 1<<1 // 2 channels
	si[13] = 15<<4 | byte(total>>32&0x0F)
	binary.BigEndian.PutUint32(si[14:], uint32(total))
	b := append([]byte("fLaC"), 0x80, 0, 0, 34)
	b = append(b, si...)
	return append(b, make([]byte, 100)...)
}

// oggPage is one page of a logical stream carrying body.
func oggPage(serial uint32, seq uint32, granule uint64, body []byte) []byte {
	var segs []byte
	n := len(body)
	for n >= 255 {
		segs = append(segs, 255)
		n -= 255
	}
	segs = append(segs, byte(n))
	h := []byte("OggS")
	h = append(h, 0, 0)
	h = binary.LittleEndian.AppendUint64(h, granule)
	h = binary.LittleEndian.AppendUint32(h, serial)
	h = binary.LittleEndian.AppendUint32(h, seq)
	h = append(h, 0, 0, 0, 0, byte(len(segs)))
	h = append(h, segs...)
	return append(h, body...)
}

func opusFile(preskip uint16, granules ...uint64) []byte {
	head := append([]byte("OpusHead"), 1, 1)
	head = binary.LittleEndian.AppendUint16(head, preskip)
	head = binary.LittleEndian.AppendUint32(head, 16000)
	head = append(head, 0, 0, 0)
	b := oggPage(7, 0, 0, head)
	b = append(b, oggPage(7, 1, 0, []byte("OpusTags........"))...)
	for i, g := range granules {
		b = append(b, oggPage(7, uint32(2+i), g, bytes.Repeat([]byte{0x55}, 300))...)
	}
	return b
}

func vorbisFile(rate uint32, granule uint64) []byte {
	id := append([]byte("\x01vorbis"), 0, 0, 0, 0, 2)
	id = binary.LittleEndian.AppendUint32(id, rate)
	id = append(id, make([]byte, 14)...)
	b := oggPage(9, 0, 0, id)
	b = append(b, oggPage(9, 1, granule/2, make([]byte, 500))...)
	b = append(b, oggPage(5, 0, 99999999, make([]byte, 20))...) // another stream: ignored
	return append(b, oggPage(9, 2, granule, make([]byte, 500))...)
}

// isoBox is an ISO base media box.
func isoBox(typ string, body ...[]byte) []byte {
	n := 8
	for _, b := range body {
		n += len(b)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(n))
	out = append(out, typ...)
	for _, b := range body {
		out = append(out, b...)
	}
	return out
}

func mvhd0(scale, dur uint32) []byte {
	b := make([]byte, 100)
	binary.BigEndian.PutUint32(b[12:], scale)
	binary.BigEndian.PutUint32(b[16:], dur)
	return isoBox("mvhd", b)
}

func mvhd1(scale uint32, dur uint64) []byte {
	b := make([]byte, 112)
	b[0] = 1
	binary.BigEndian.PutUint32(b[20:], scale)
	binary.BigEndian.PutUint64(b[24:], dur)
	return isoBox("mvhd", b)
}

func ftyp() []byte { return isoBox("ftyp", []byte("M4A \x00\x00\x00\x00M4A isom")) }

// ebml is an element with a known size (sizes here stay below 2^14).
func ebml(id uint32, body ...[]byte) []byte {
	var out []byte
	for s := 24; s >= 0; s -= 8 {
		if x := byte(id >> s); x != 0 || len(out) > 0 {
			out = append(out, x)
		}
	}
	n := 0
	for _, b := range body {
		n += len(b)
	}
	out = append(out, 0x40|byte(n>>8), byte(n))
	for _, b := range body {
		out = append(out, b...)
	}
	return out
}

// ebmlOpen is an element header of unknown size.
func ebmlOpen(id uint32) []byte {
	return append(binary.BigEndian.AppendUint32(nil, id), 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)
}

func ebmlHeader(doc string) []byte {
	return ebml(idEBML, ebml(0x4286, []byte{1}), ebml(idDocType, []byte(doc)))
}

func simpleBlock(rel int16) []byte {
	return ebml(idSimpleBlock, []byte{0x81, byte(uint16(rel) >> 8), byte(rel), 0x80}, make([]byte, 40))
}

// webmWithDuration has Info/Duration (an 8-byte float of ms ticks).
func webmWithDuration(ms float64) []byte {
	d := binary.BigEndian.AppendUint64(nil, math.Float64bits(ms))
	seg := ebml(idInfo, ebml(idTimecodeScl, []byte{0x0F, 0x42, 0x40}), ebml(idDuration, d))
	return append(append(ebmlHeader("webm"), ebmlOpen(idSegment)...), seg...)
}

// webmRecorded is what a browser's MediaRecorder writes: no Duration,
// clusters of unknown size; the last block is at 1980 ms.
func webmRecorded() []byte {
	b := append(ebmlHeader("webm"), ebmlOpen(idSegment)...)
	b = append(b, ebml(idInfo, ebml(idTimecodeScl, []byte{0x0F, 0x42, 0x40}))...)
	for c := range 2 {
		b = append(b, ebmlOpen(idCluster)...)
		b = append(b, ebml(idTimecode, []byte{byte(1000 * c >> 8), byte(1000 * c)})...)
		for i := range 50 {
			b = append(b, simpleBlock(int16(20*i))...)
		}
	}
	return b
}
