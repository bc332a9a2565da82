package audio

import (
	"errors"
	"fmt"
	"time"
)

// WAVE format tags the reader knows the layout of.
const (
	wavPCM        = 0x0001
	wavMSADPCM    = 0x0002
	wavFloat      = 0x0003
	wavALaw       = 0x0006
	wavMuLaw      = 0x0007
	wavIMAADPCM   = 0x0011
	wavGSM        = 0x0031
	wavMPEG       = 0x0050
	wavMP3        = 0x0055
	wavExtensible = 0xFFFE
)

// minBytesPerSecond is the bitrate (8 kbit/s) assumed of audio whose codec
// the reader cannot count: a lower bound for speech codecs at usable
// quality, so bytes ÷ it bounds the length from above. It is the bound the
// transcription endpoint uses for a file whose length is unreadable.
const minBytesPerSecond = 1000

// wavFormat is the fmt chunk.
type wavFormat struct {
	tag, channels, rate, byteRate, align, bits uint64
}

// wavDuration reads a RIFF/WAVE (or RF64) file. The audio is the data
// chunk, its size trusted only as far as the file goes (an unset size, 0
// or 0xFFFFFFFF as streaming writers leave it, runs to the end), plus,
// after it, any later data chunk and every byte that is not a well-formed
// chunk (a data size written too small does not hide the samples behind
// it). Well-formed chunks after the data (LIST, id3, ...) are metadata.
func wavDuration(c *cursor) (reading, error) {
	h, err := c.read(12)
	if err != nil {
		return reading{}, err
	}
	rf64 := string(h[:4]) == "RF64"
	var (
		f                   wavFormat
		haveFmt, haveData   bool
		ds64Data, dataStart int64
		audioBytes          int64
		factSamples         uint64
		haveFact            bool
	)
	for {
		if c.left() < 8 {
			if haveData {
				audioBytes += c.left() // too short for a chunk
			}
			break
		}
		ch, _ := c.peek(8)
		id, size := ch[:4], int64(le32(ch[4:]))
		if haveData && !chunkID(id) {
			audioBytes += c.left() // not a chunk: after the data, bytes a decoder may play
			break
		}
		c.pos += 8
		switch string(id) {
		case "ds64":
			b, err := c.peek(int(min(size, 24)))
			if err != nil || len(b) < 16 {
				return reading{}, errors.New("short ds64 chunk")
			}
			ds64Data = int64(min(le64(b[8:]), 1<<62))
		case "fmt ":
			if f, err = readFmt(c, size); err != nil {
				return reading{}, err
			}
			haveFmt = true
		case "fact":
			if b, err := c.peek(4); err == nil && size >= 4 {
				factSamples, haveFact = le32(b), true
			}
		case "data":
			if rf64 && size == 0xFFFFFFFF {
				size = ds64Data
			}
			if size == 0 || size == 0xFFFFFFFF {
				size = c.left()
			}
			size = min(size, c.left())
			if !haveData {
				dataStart = c.pos
			}
			haveData = true
			audioBytes += size
		}
		if size >= c.left() {
			break // the last chunk
		}
		c.pos += size
		if size&1 == 1 && c.left() > 0 {
			// The pad byte, skipped when the end or a chunk follows it.
			// Writers that forget it put the next chunk here instead.
			b, _ := c.peek(int(min(c.left(), 5)))
			if len(b) == 1 || !chunkID(b) && chunkID(b[1:]) {
				c.pos++
			}
		}
	}
	if !haveFmt || !haveData {
		return reading{}, fmt.Errorf("%w: wav without fmt or data chunk", ErrUnknownDuration)
	}
	return wavLength(c, f, dataStart, audioBytes, factSamples, haveFact)
}

// readFmt decodes the fmt chunk; WAVE_FORMAT_EXTENSIBLE gives its real
// format tag in the sub-format GUID.
func readFmt(c *cursor, size int64) (wavFormat, error) {
	b, err := c.peek(int(min(size, 40)))
	if err != nil || len(b) < 16 {
		return wavFormat{}, errors.New("short fmt chunk")
	}
	f := wavFormat{tag: le16(b), channels: le16(b[2:]), rate: le32(b[4:]), byteRate: le32(b[8:]),
		align: le16(b[12:]), bits: le16(b[14:])}
	if f.tag == wavExtensible && len(b) >= 26 {
		f.tag = le16(b[24:])
	}
	return f, nil
}

// wavLength turns n bytes of audio into a reading for format f.
func wavLength(c *cursor, f wavFormat, dataStart, n int64, fact uint64, haveFact bool) (reading, error) {
	if f.rate == 0 {
		return reading{}, fmt.Errorf("%w: wav with a zero sample rate", ErrUnknownDuration)
	}
	bytes := uint64(n)
	switch f.tag {
	case wavPCM, wavFloat, wavALaw, wavMuLaw:
		// The byte rate field is redundant here: the frame layout is what a
		// decoder uses. Of block align and channels × sample bytes, the
		// smaller (the longer audio) wins.
		frame := f.channels * ((f.bits + 7) / 8)
		if f.align > 0 && (frame == 0 || f.align < frame) {
			frame = f.align
		}
		rate := satMul(f.rate, frame)
		if frame == 0 {
			rate = f.byteRate
		}
		if rate == 0 {
			return reading{}, fmt.Errorf("%w: wav without a frame size", ErrUnknownDuration)
		}
		d, err := seconds(bytes, rate)
		return reading{content: d}, err
	}
	// Compressed: fact's sample count and the byte rate field are claims.
	var rd reading
	if haveFact {
		rd.claim = claimed(fact, f.rate)
	}
	if f.byteRate > 0 {
		rd.claim = max(rd.claim, claimed(bytes, f.byteRate))
	}
	ch := max(f.channels, 1)
	var err error
	switch {
	case f.tag == wavIMAADPCM && f.align > 4*ch:
		rd.content, err = seconds(satMul(bytes, (f.align-4*ch)*2/ch+1)/f.align, f.rate)
	case f.tag == wavMSADPCM && f.align > 7*ch:
		rd.content, err = seconds(satMul(bytes, (f.align-7*ch)*2/ch+2)/f.align, f.rate)
	case f.tag == wavGSM:
		rd.content, err = seconds(bytes/65*320, f.rate)
	case f.tag == wavMPEG || f.tag == wavMP3:
		rd.content, err = wavMPEGFrames(c, dataStart)
	default:
		// A codec the reader cannot count: the most audio the bytes hold
		// at 8 kbit/s, as for a file whose length is unreadable.
		rd.content = time.Duration(bytes/minBytesPerSecond) * time.Second
	}
	return rd, err
}

// wavMPEGFrames walks the MPEG audio frames from the data chunk on.
func wavMPEGFrames(c *cursor, dataStart int64) (time.Duration, error) {
	c.pos = dataStart
	first, ok := findFrame(c, 64<<10)
	if !ok {
		return 0, nil
	}
	t, err := walkFrames(c, first)
	if err != nil {
		return 0, err
	}
	return t.duration()
}

// chunkID reports whether b starts with four printable ASCII characters,
// as every RIFF chunk ID is.
func chunkID(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	for _, x := range b[:4] {
		if x < 0x20 || x > 0x7E {
			return false
		}
	}
	return true
}
