package audio

import (
	"errors"
	"fmt"
	"time"
)

// wavDuration reads a RIFF/WAVE (or RF64) file: data bytes over the fmt
// chunk's byte rate, or the fact chunk's sample count for compressed WAV.
// A data chunk whose size is unset (0 or 0xFFFFFFFF, as streaming writers
// leave it) or larger than the file runs to the end of the file.
func wavDuration(c *cursor) (time.Duration, error) {
	h, err := c.read(12)
	if err != nil {
		return 0, err
	}
	rf64 := string(h[:4]) == "RF64"
	var (
		haveFmt, haveData        bool
		format                   uint64
		rate, byteRate, align    uint64
		dataSize, factSamples    uint64
		ds64Data                 uint64
		haveFact, dataRunsToTail bool
	)
	for c.left() >= 8 && !(haveFmt && haveData) {
		ch, err := c.read(8)
		if err != nil {
			return 0, err
		}
		id, size := string(ch[:4]), le32(ch[4:])
		switch id {
		case "ds64":
			b, err := c.peek(min(int(size), 24))
			if err != nil || len(b) < 16 {
				return 0, errors.New("short ds64 chunk")
			}
			ds64Data = le64(b[8:])
		case "fmt ":
			b, err := c.peek(min(int(size), 16))
			if err != nil || len(b) < 16 {
				return 0, errors.New("short fmt chunk")
			}
			format, rate, byteRate, align = le16(b), le32(b[4:]), le32(b[8:]), le16(b[12:])
			haveFmt = true
		case "fact":
			if b, err := c.peek(4); err == nil && size >= 4 {
				factSamples, haveFact = le32(b), true
			}
		case "data":
			haveData = true
			dataSize = size
			switch {
			case rf64 && size == 0xFFFFFFFF:
				dataSize = ds64Data
			case size == 0 || size == 0xFFFFFFFF:
				dataRunsToTail = true
			}
			if dataRunsToTail || dataSize > uint64(c.left()) {
				dataSize = uint64(c.left())
			}
		}
		if id == "data" && (dataRunsToTail || dataSize >= uint64(c.left())) {
			break // nothing after it
		}
		if err := c.skip(int64(size + size&1)); err != nil {
			break // a truncated last chunk
		}
	}
	if !haveFmt || !haveData {
		return 0, fmt.Errorf("%w: wav without fmt or data chunk", ErrUnknownDuration)
	}
	// PCM, IEEE float and WAVE_FORMAT_EXTENSIBLE have a fixed byte rate;
	// other codecs say how many samples they hold in fact.
	if haveFact && format != 1 && format != 3 && format != 0xFFFE && rate > 0 {
		return seconds(factSamples, rate)
	}
	if byteRate == 0 || (format == 1 && rate*align > 0) {
		byteRate = rate * align // PCM's byte rate field is redundant; trust the frame layout
	}
	return seconds(dataSize, byteRate)
}
