package audio

import (
	"errors"
	"fmt"
	"time"
)

// oggDuration walks the pages of the first logical stream (headers only;
// payloads are skipped) and divides the last granule position by the
// codec's rate: Opus (48 kHz, minus the pre-skip), Vorbis, FLAC, Speex.
// A truncated last page is ignored.
func oggDuration(c *cursor) (time.Duration, error) {
	var (
		serial   uint64
		rate     uint64
		preskip  uint64
		last     uint64
		haveLast bool
	)
	for first := true; ; first = false {
		h, err := c.peek(27)
		if err != nil || string(h[:4]) != "OggS" || h[4] != 0 {
			if first {
				return 0, errors.New("no ogg page")
			}
			break
		}
		granule, ser, nseg := le64(h[6:]), le32(h[14:]), int(h[26])
		seg, err := c.peek(27 + nseg)
		if err != nil {
			break
		}
		var body int64
		for _, s := range seg[27:] {
			body += int64(s)
		}
		if 27+int64(nseg)+body > c.left() {
			break
		}
		if first {
			serial = ser
			if err := c.skip(27 + int64(nseg)); err != nil {
				return 0, err
			}
			packet, err := c.peek(int(min(body, 64)))
			if err != nil {
				return 0, err
			}
			if rate, preskip, err = oggCodec(packet); err != nil {
				return 0, err
			}
			if err := c.skip(body); err != nil {
				return 0, err
			}
			continue
		}
		if ser == serial && granule != 1<<64-1 {
			last, haveLast = granule, true
		}
		if err := c.skip(27 + int64(nseg) + body); err != nil {
			break
		}
	}
	if !haveLast {
		return 0, fmt.Errorf("%w: ogg without a granule position", ErrUnknownDuration)
	}
	if last <= preskip || last > 1<<62 {
		return 0, fmt.Errorf("%w: ogg granule %d", ErrUnknownDuration, last)
	}
	return seconds(last-preskip, rate)
}

// oggCodec reads the sample rate (and Opus's pre-skip) from a logical
// stream's identification packet.
func oggCodec(p []byte) (rate, preskip uint64, err error) {
	switch {
	case len(p) >= 19 && string(p[:8]) == "OpusHead":
		return 48000, le16(p[10:]), nil
	case len(p) >= 16 && string(p[:7]) == "\x01vorbis":
		return le32(p[12:]), 0, nil
	case len(p) >= 17+18 && string(p[:5]) == "\x7fFLAC" && string(p[9:13]) == "fLaC":
		b := p[17:]
		return uint64(b[10])<<12 | uint64(b[11])<<4 | uint64(b[12])>>4, 0, nil
	case len(p) >= 40 && string(p[:8]) == "Speex   ":
		return le32(p[36:]), 0, nil
	}
	return 0, 0, fmt.Errorf("%w: unknown ogg codec", ErrUnknownDuration)
}
