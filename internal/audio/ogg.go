package audio

import (
	"errors"
	"fmt"
)

// oggCodec is the codec of a logical stream, from its first packet.
type oggCodec int

const (
	oggUnknown oggCodec = iota
	oggOpus
	oggVorbis
	oggFLAC
	oggSpeex
)

// oggStream is one logical stream: its codec, the claim of its granule
// positions, and the content of its packets.
type oggStream struct {
	link          int // streams of one link play side by side; links play one after another
	codec         oggCodec
	rate, preskip uint64
	packets       int    // packets begun, header packets included
	granule       uint64 // the last page's granule position
	haveGranule   bool
	samples, last uint64 // audio samples of all packets, and of the latest one
	vorbis        *vorbisInfo
	speexFrames   uint64 // frames per packet
	speexHeaders  int    // header packets before audio
	inPacket      bool   // the latest packet continues on the next page
	setup         []byte // the Vorbis setup header being assembled
}

// maxSetup bounds the Vorbis setup header kept to read its modes.
const maxSetup = 1 << 20

// oggDuration walks every page (junk between pages is skipped to the next
// "OggS"), and for each logical stream takes the larger of its last
// granule position (the claim) and the sum of its packets' durations (the
// content, read from each packet's first bytes; the last packet is left
// out, since the last granule may legitimately trim it). Streams that
// start together (one link) play side by side and count once, as the
// longest; chained links (a new beginning-of-stream after audio) add up.
// A truncated last page is ignored.
func oggDuration(c *cursor) (reading, error) {
	streams := map[uint64]*oggStream{}
	var order []*oggStream
	link, sawData := 0, false
	for {
		h, err := c.peek(27)
		if err != nil {
			break
		}
		if string(h[:4]) != "OggS" || h[4] != 0 {
			c.pos++
			if !c.seek2('O', 0xFF, 'g') {
				break
			}
			continue
		}
		flags, granule, serial, nseg := h[5], le64(h[6:]), le32(h[14:]), int(h[26])
		page, err := c.peek(27 + nseg)
		if err != nil {
			break
		}
		lacing := page[27:]
		var body int
		for _, s := range lacing {
			body += int(s)
		}
		page, err = c.peek(27 + nseg + body)
		if err != nil {
			break // a truncated last page
		}
		s := streams[serial]
		if s == nil {
			if flags&0x02 != 0 && sawData {
				link++ // a new chain link begins
			}
			s = &oggStream{link: link}
			streams[serial] = s
			order = append(order, s)
		}
		if flags&0x02 == 0 {
			sawData = true
		}
		s.page(flags, page[27:27+nseg], page[27+nseg:])
		if granule != 1<<64-1 {
			s.granule, s.haveGranule = granule, true
		}
		c.pos += int64(27 + nseg + body)
	}
	if len(order) == 0 {
		return reading{}, errors.New("no ogg page")
	}
	var rd reading
	links := map[int]reading{}
	for _, s := range order {
		r, err := s.reading()
		if err != nil {
			return reading{}, err
		}
		l := links[s.link]
		links[s.link] = reading{claim: max(l.claim, r.claim), content: max(l.content, r.content)}
	}
	for _, l := range links {
		// Each link counts as the larger of its claim and content; the
		// total is the claim side when one of them tells only that.
		rd.content += max(l.claim, l.content)
		if rd.content > maxDuration {
			return reading{}, fmt.Errorf("%w: ogg too long", ErrUnknownDuration)
		}
	}
	if rd.content == 0 {
		return reading{}, fmt.Errorf("%w: ogg without a granule position or audio packets", ErrUnknownDuration)
	}
	return rd, nil
}

// page feeds one page's packets to the stream.
func (s *oggStream) page(flags byte, lacing, body []byte) {
	off := 0
	cont := flags&0x01 != 0
	if !cont {
		s.inPacket, s.setup = false, nil // an unfinished packet ended
	}
	for _, n := range lacing {
		seg := body[off : off+int(n)]
		off += int(n)
		if !s.inPacket && !cont {
			s.begin(seg)
		} else if s.setup != nil && len(s.setup)+len(seg) <= maxSetup {
			s.setup = append(s.setup, seg...)
		}
		s.inPacket = n == 255
		if !s.inPacket {
			cont = false
			if s.setup != nil {
				s.vorbis.readSetup(s.setup)
				s.setup = nil
			}
		}
	}
}

// begin takes the first segment of a new packet (its first 255 bytes, or
// all of it).
func (s *oggStream) begin(p []byte) {
	i := s.packets
	s.packets++
	if i == 0 {
		s.identify(p)
		return
	}
	var n uint64
	switch s.codec {
	case oggOpus:
		if i >= 2 { // OpusHead, OpusTags
			n = opusSamples(p)
		}
	case oggVorbis:
		if s.vorbis == nil {
			break
		}
		if len(p) > 0 && p[0] == 5 && s.vorbis.modeLong == nil {
			s.setup = append([]byte(nil), p...)
		}
		n = s.vorbis.packet(p)
	case oggFLAC:
		if f, ok := parseFLACFrame(p, s.rate); ok && f.rate == s.rate {
			n = f.block
		}
	case oggSpeex:
		if i > s.speexHeaders {
			n = s.speexFrames * (s.rate / 50) // 20 ms frames
		}
	}
	if n > 0 {
		s.samples, s.last = satAdd(s.samples, n), n
	}
}

// identify reads the codec and its rate from a stream's first packet.
func (s *oggStream) identify(p []byte) {
	switch {
	case len(p) >= 19 && string(p[:8]) == "OpusHead":
		s.codec, s.rate, s.preskip = oggOpus, 48000, le16(p[10:])
	case len(p) >= 16 && string(p[:7]) == "\x01vorbis":
		s.codec, s.rate = oggVorbis, le32(p[12:])
		s.vorbis, _ = parseVorbisID(p) // nil: block sizes unreadable, packets uncounted
	case len(p) >= 17+18 && string(p[:5]) == "\x7fFLAC" && string(p[9:13]) == "fLaC":
		s.codec = oggFLAC
		s.rate, _ = streamInfo(p[17:])
	case len(p) >= 72 && string(p[:8]) == "Speex   ":
		s.codec, s.rate = oggSpeex, le32(p[36:])
		s.speexFrames = max(le32(p[64:]), 1)
		s.speexHeaders = 1 + int(min(le32(p[68:]), 1000))
	}
}

// reading is the stream's claim (last granule) and content (its packets
// but the last).
func (s *oggStream) reading() (reading, error) {
	if s.codec == oggUnknown || s.rate == 0 {
		return reading{}, nil // not audio the reader knows: video, metadata
	}
	var rd reading
	if s.haveGranule && s.granule > s.preskip && s.granule <= 1<<62 {
		rd.claim = claimed(s.granule-s.preskip, s.rate)
	}
	if n := s.samples - s.last; n > s.preskip {
		d, err := seconds(n-s.preskip, s.rate)
		if err != nil {
			return reading{}, err
		}
		rd.content = d
	}
	return rd, nil
}
