package audio

import (
	"errors"
	"fmt"
	"time"
)

// flacDuration reads total samples and sample rate from STREAMINFO, the
// first metadata block of every FLAC stream. A total of 0 means the
// encoder did not know it (a live stream).
func flacDuration(c *cursor) (time.Duration, error) {
	if err := skipID3(c); err != nil {
		return 0, err
	}
	b, err := c.read(8)
	if err != nil {
		return 0, err
	}
	if string(b[:4]) != "fLaC" || b[4]&0x7F != 0 {
		return 0, errors.New("no STREAMINFO block")
	}
	info, err := c.peek(18)
	if err != nil {
		return 0, err
	}
	return streamInfo(info)
}

// streamInfo decodes the rate and sample count of a STREAMINFO block body.
func streamInfo(b []byte) (time.Duration, error) {
	rate := uint64(b[10])<<12 | uint64(b[11])<<4 | uint64(b[12])>>4
	total := uint64(b[13]&0x0F)<<32 | be32(b[14:])
	if total == 0 {
		return 0, fmt.Errorf("%w: flac without a sample count", ErrUnknownDuration)
	}
	return seconds(total, rate)
}
