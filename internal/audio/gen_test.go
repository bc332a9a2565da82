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

// Builders of files whose headers lie: real frames behind a short claim.

// flacFrameBytes is one FLAC frame (fixed 4096-sample blocks at 44.1 kHz,
// stereo, 16-bit) numbered n, with a little payload.
func flacFrameBytes(n int, block uint16) []byte {
	h := []byte{0xFF, 0xF8, 0xC9, 0x18}
	if block != 4096 {
		h[2] = 0x79 // block size from the 16-bit field that follows the number
	}
	switch {
	case n < 0x80:
		h = append(h, byte(n))
	case n < 0x800:
		h = append(h, 0xC0|byte(n>>6), 0x80|byte(n&0x3F))
	default:
		h = append(h, 0xE0|byte(n>>12), 0x80|byte(n>>6&0x3F), 0x80|byte(n&0x3F))
	}
	if block != 4096 {
		h = binary.BigEndian.AppendUint16(h, block-1)
	}
	h = append(h, crc8(h))
	return append(h, make([]byte, 60)...) // subframes and CRC-16, zero
}

// flacLie is STREAMINFO claiming total samples, then n real frames.
func flacLie(total uint64, n int) []byte {
	b := flacFile(44100, total)
	for i := range n {
		b = append(b, flacFrameBytes(i, 4096)...)
	}
	return b
}

// oggPageF is oggPage with header flags (1 continued, 2 first, 4 last).
func oggPageF(flags byte, serial, seq uint32, granule uint64, body []byte) []byte {
	p := oggPage(serial, seq, granule, body)
	p[5] = flags
	return p
}

// opusStream is an Opus logical stream of n 20 ms packets (CELT, TOC
// 0xFC) whose granule positions all say granule.
func opusStream(serial uint32, n int, granule uint64) []byte {
	head := append([]byte("OpusHead"), 1, 1)
	head = binary.LittleEndian.AppendUint16(head, 0)
	head = binary.LittleEndian.AppendUint32(head, 48000)
	head = append(head, 0, 0, 0)
	b := oggPageF(2, serial, 0, 0, head)
	b = append(b, oggPageF(0, serial, 1, 0, []byte("OpusTags........"))...)
	for i := range n {
		b = append(b, oggPageF(0, serial, uint32(2+i), granule, append([]byte{0xFC}, make([]byte, 60)...))...)
	}
	return b
}

// vorbisBits packs a Vorbis (LSB-first) bitstream.
type vorbisBits struct {
	b []byte
	n int
}

func (w *vorbisBits) put(v uint64, bits int) {
	for i := range bits {
		if w.n%8 == 0 {
			w.b = append(w.b, 0)
		}
		w.b[len(w.b)-1] |= byte(v>>i&1) << (w.n % 8)
		w.n++
	}
}

// vorbisHeaders are the three header packets of a 44.1 kHz stream with
// 256/2048 blocks and two modes, short and long.
func vorbisHeaders() (id, comment, setup []byte) {
	id = append([]byte("\x01vorbis"), 0, 0, 0, 0, 2)
	id = binary.LittleEndian.AppendUint32(id, 44100)
	id = append(id, make([]byte, 12)...)
	id = append(id, 0xB8, 1) // blocksizes 2^8 and 2^11, framing
	comment = append([]byte("\x03vorbis"), make([]byte, 8)...)
	w := vorbisBits{b: append([]byte("\x05vorbis"), make([]byte, 300)...), n: (7 + 300) * 8}
	w.put(1, 6) // two modes
	for _, long := range []uint64{0, 1} {
		w.put(long, 1)
		w.put(0, 16)
		w.put(0, 16)
		w.put(0, 8)
	}
	w.put(1, 1) // framing
	return id, comment, w.b
}

// vorbisStream has n long-block audio packets (1024 samples each after
// the first) and granule positions that all say granule.
func vorbisStream(n int, granule uint64) []byte {
	id, comment, setup := vorbisHeaders()
	b := oggPageF(2, 3, 0, 0, id)
	b = append(b, oggTwoPackets(3, 1, comment, setup)...)
	for i := range n {
		b = append(b, oggPageF(0, 3, uint32(2+i), granule, append([]byte{1 << 1}, make([]byte, 40)...))...)
	}
	return b
}

// oggTwoPackets is one page holding two packets.
func oggTwoPackets(serial, seq uint32, p, q []byte) []byte {
	var segs []byte
	for _, x := range [][]byte{p, q} {
		n := len(x)
		for n >= 255 {
			segs = append(segs, 255)
			n -= 255
		}
		segs = append(segs, byte(n))
	}
	h := []byte("OggS")
	h = append(h, 0, 0)
	h = binary.LittleEndian.AppendUint64(h, 0)
	h = binary.LittleEndian.AppendUint32(h, serial)
	h = binary.LittleEndian.AppendUint32(h, seq)
	h = append(h, 0, 0, 0, 0, byte(len(segs)))
	h = append(h, segs...)
	return append(append(h, p...), q...)
}

// be32b is a big-endian uint32.
func be32b(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// fullBox is an ISO full box (version 0, flags).
func fullBox(typ string, flags uint32, body ...[]byte) []byte {
	return isoBox(typ, append([][]byte{be32b(flags)}, body...)...)
}

// aacTrak is an AAC-LC 44.1 kHz stereo audio track with id 1 listing n
// samples whose durations (stts) sum to ticks at timescale 44100.
func aacTrak(n, ticks uint32) []byte {
	tkhd := fullBox("tkhd", 3, make([]byte, 8), be32b(1), make([]byte, 64))
	mdhd := fullBox("mdhd", 0, make([]byte, 8), be32b(44100), be32b(ticks), make([]byte, 4))
	hdlr := fullBox("hdlr", 0, make([]byte, 4), []byte("soun"), make([]byte, 13))
	asc := []byte{0x12, 0x10} // AAC LC, 44.1 kHz, stereo, 1024-sample frames
	dsi := append([]byte{0x05, byte(len(asc))}, asc...)
	dcd := append([]byte{0x04, byte(13 + len(dsi)), 0x40, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, dsi...)
	es := append([]byte{0x03, byte(3 + len(dcd) + 3), 0, 0, 0}, dcd...)
	es = append(es, 0x06, 0x01, 0x02)
	entry := isoBox("mp4a", make([]byte, 6), []byte{0, 1}, make([]byte, 8), []byte{0, 2, 0, 16, 0, 0, 0, 0},
		be32b(44100<<16), fullBox("esds", 0, es))
	stsd := fullBox("stsd", 0, be32b(1), entry)
	var stts []byte
	if n > 0 {
		stts = fullBox("stts", 0, be32b(1), be32b(n), be32b(ticks/max(n, 1)))
	} else {
		stts = fullBox("stts", 0, be32b(0))
	}
	stsz := fullBox("stsz", 0, be32b(10), be32b(n))
	minf := isoBox("minf", isoBox("stbl", stsd, stts, stsz))
	return isoBox("trak", tkhd, isoBox("mdia", mdhd, hdlr, minf))
}

// aacMP4 is an M4A of n AAC frames (n × 1024 samples) whose headers claim
// claimMS milliseconds and whose sample table claims ticks.
func aacMP4(n, ticks, claimMS uint32) []byte {
	return cat(ftyp(), isoBox("moov", mvhd0(1000, claimMS), aacTrak(n, ticks)), isoBox("mdat", make([]byte, 10*n)))
}

// fragmentedMP4 has the track in fragments of k samples each, mehd
// claiming claimMS, trex's default duration 1 tick.
func fragmentedMP4(frags, k int, claimMS uint32) []byte {
	trex := fullBox("trex", 0, be32b(1), be32b(1), be32b(1), be32b(0), be32b(0))
	moov := isoBox("moov", mvhd0(1000, 0), isoBox("mvex", fullBox("mehd", 0, be32b(claimMS)), trex), aacTrak(0, 0))
	b := cat(ftyp(), moov)
	for i := range frags {
		tfhd := fullBox("tfhd", 0, be32b(1))
		trun := fullBox("trun", 0, be32b(uint32(k)))
		b = append(b, isoBox("moof", fullBox("mfhd", 0, be32b(uint32(i+1))), isoBox("traf", tfhd, trun))...)
		b = append(b, isoBox("mdat", make([]byte, 10*k))...)
	}
	return b
}

// opusWebM is a WebM with an Opus track, Info claiming claimMS, and n
// 20 ms frames in blocks whose timestamps are all 0; with laced, three
// frames per block (Xiph lacing).
func opusWebM(n int, claimMS float64, laced bool) []byte {
	d := binary.BigEndian.AppendUint64(nil, math.Float64bits(claimMS))
	b := append(ebmlHeader("webm"), ebmlOpen(idSegment)...)
	b = append(b, ebml(idInfo, ebml(idTimecodeScl, []byte{0x0F, 0x42, 0x40}), ebml(idDuration, d))...)
	b = append(b, ebml(idTracks, ebml(idTrackEntry, ebml(idTrackNumber, []byte{1}), ebml(idTrackType, []byte{2}),
		ebml(idCodecID, []byte("A_OPUS"))))...)
	b = append(b, ebmlOpen(idCluster)...)
	b = append(b, ebml(idTimecode, []byte{0})...)
	frame := append([]byte{0xFC}, make([]byte, 30)...)
	for i := 0; i < n; {
		if laced && n-i >= 3 {
			body := []byte{0x81, 0, 0, 0x80 | 0x02, 2, byte(len(frame)), byte(len(frame))}
			for range 3 {
				body = append(body, frame...)
			}
			b = append(b, ebml(idSimpleBlock, body)...)
			i += 3
			continue
		}
		b = append(b, ebml(idSimpleBlock, []byte{0x81, 0, 0, 0x80}, frame)...)
		i++
	}
	return b
}
