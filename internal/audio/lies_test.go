package audio

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"time"
)

// samplesAt is n samples at rate, as Duration computes it.
func samplesAt(n, rate uint64) time.Duration {
	d, err := seconds(n, rate)
	if err != nil {
		panic(err)
	}
	return d
}

// mp3Frames is n MPEG-1 layer III frames at 44.1 kHz.
func mp3Frames(n int) time.Duration { return samplesAt(uint64(n)*1152, 44100) }

// mpeg1L3At48 is a 128 kbit/s, 48 kHz frame header: 384 bytes.
var mpeg1L3At48 = [4]byte{0xFF, 0xFB, 0x94, 0x00}

// lyingFiles are files whose headers claim less than their frames hold,
// with what the frames hold. Each was billed from the claim before.
func lyingFiles() []durationCase {
	pcm := pcmWAV(16000, 16000)[44:] // 1 s of samples, no header
	shortData := riff(fmtChunk(1, 1, 16000, 32000, 2, 16), chunk("data", pcm[:100]))
	shortData = append(shortData, pcm[100:]...)
	ima := riff(fmtChunk(0x11, 1, 8000, 0xFFFFFFFF, 256, 4), chunk("fact", le32b(1)), chunk("data", make([]byte, 256*50)))
	mp3InWAV := riff(fmtChunk(0x55, 2, 44100, 0xFFFFFFFF, 1, 0), chunk("fact", le32b(1)), chunk("data", mpegFrames(mpeg1L3, 417, 100, false)))
	opusA, opusB := opusStream(7, 50, 1000), opusStream(7, 50, 1000)
	opusB = opusB[len(opusStream(7, 0, 0)):] // its audio pages only
	noCount := xingFrame("Xing", 0)
	binary.BigEndian.PutUint32(noCount[40:], 0) // a Xing tag without a frame count

	return []durationCase{
		{"mp3 xing claims 1 frame", MP3, cat(xingFrame("Xing", 1), mpegFrames(mpeg1L3, 417, 12001, false)), mp3Frames(12001)},
		{"mp3 vbri claims 1 frame", MP3, cat(vbriFrame(1), mpegFrames(mpeg1L3, 417, 500, false)), mp3Frames(500)},
		{"mp3 xing without a count", MP3, cat(noCount, mpegFrames(mpeg1L3, 417, 500, false)), mp3Frames(500)},
		{"mp3 TAG in the middle", MP3, cat(mpegFrames(mpeg1L3, 417, 10, false), []byte("TAG"), make([]byte, 125), mpegFrames(mpeg1L3, 417, 100, false)), mp3Frames(110)},
		{"mp3 rate change after two frames", MP3, cat(mpegFrames(mpeg1L3, 417, 2, false), mpegFrames(mpeg1L3At48, 384, 100, false)),
			mp3Frames(2) + samplesAt(100*1152, 48000)},
		{"mp3 70 KB of junk between frames", MP3, cat(mpegFrames(mpeg1L3, 417, 5, false), make([]byte, 70000), mpegFrames(mpeg1L3, 417, 200, false)), mp3Frames(205)},
		{"wav data size 100, 1 s of samples", WAV, shortData, time.Second},
		{"wav pcm block align 65535", WAV, riff(fmtChunk(1, 1, 16000, 32000, 65535, 16), chunk("data", pcm)), time.Second},
		{"wav float byte rate lie", WAV, riff(fmtChunk(3, 1, 16000, 0xFFFFFFF0, 4, 32), chunk("data", make([]byte, 64000))), time.Second},
		{"wav ima adpcm fact 1", WAV, ima, samplesAt(50*505, 8000)},
		{"wav mp3 fact 1", WAV, mp3InWAV, mp3Frames(100)},
		{"wav unknown codec fact 1", WAV, riff(fmtChunk(0x9999, 1, 8000, 0xFFFFFFFF, 1, 0), chunk("fact", le32b(1)), chunk("data", make([]byte, 50000))), 50 * time.Second},
		{"flac streaminfo claims 1 sample", FLAC, flacLie(1, 100), samplesAt(100*4096, 44100)},
		{"flac streaminfo without a total", FLAC, flacLie(0, 50), samplesAt(50*4096, 44100)},
		{"flac short last block", FLAC, cat(flacLie(1, 10), flacFrameBytes(10, 1000)), samplesAt(10*4096+1000, 44100)},
		{"ogg opus granules claim 1000 samples", OGG, opusStream(7, 100, 1000), samplesAt(99*960, 48000)},
		{"ogg opus junk between pages", OGG, cat(opusA, []byte("junk!"), opusB), samplesAt(99*960, 48000)},
		{"ogg chained links add up", OGG, cat(opusStream(7, 100, 100*960), opusStream(8, 100, 100*960)), 4 * time.Second},
		{"ogg vorbis granule lie", OGG, vorbisStream(200, 1000), samplesAt(198*1024, 44100)},
		{"m4a mvhd and stts lie", MP4, aacMP4(500, 500, 1), samplesAt(500*1024, 44100)},
		{"fragmented mp4 mehd lie", MP4, fragmentedMP4(10, 50, 1), samplesAt(500*1024, 44100)},
		{"webm duration and timestamps lie", WebM, opusWebM(300, 1, false), 6 * time.Second},
		{"webm laced frames", WebM, opusWebM(300, 1, true), 6 * time.Second},
	}
}

// TestDurationLyingHeaders: a header that claims less than the file's
// frames hold is overruled by the frames.
func TestDurationLyingHeaders(t *testing.T) {
	checkDurations(t, lyingFiles())
}

// TestDurationMP3XingOneFrame is issue 11's file: 313 s of MP3 whose Xing
// header claims one frame, billed 0.000003 instead of 0.031350.
func TestDurationMP3XingOneFrame(t *testing.T) {
	file := cat(id3(300), xingFrame("Xing", 1), mpegFrames(mpeg1L3, 417, 12001, true), []byte("TAG"), make([]byte, 125))
	got, err := Duration(bytes.NewReader(file), int64(len(file)), MP3)
	if err != nil {
		t.Fatal(err)
	}
	if want := mp3Frames(12001); got != want || got < 313*time.Second {
		t.Errorf("Duration = %v, want %v (313.4955 s)", got, want)
	}
}

// TestDurationHonestFiles: claims and content agree; the answer is the
// claim, not a frame more.
func TestDurationHonestFiles(t *testing.T) {
	tests := []struct {
		name string
		f    Format
		file []byte
		want time.Duration
	}{
		{"mp3 xing", MP3, cat(xingFrame("Info", 300), mpegFrames(mpeg1L3, 417, 300, true)), mp3Frames(300)},
		{"flac", FLAC, flacLie(100*4096, 100), samplesAt(100*4096, 44100)},
		{"ogg opus", OGG, opusStream(7, 100, 100*960), 2 * time.Second},
		{"ogg vorbis", OGG, vorbisStream(200, 199*1024), samplesAt(199*1024, 44100)},
		{"m4a", MP4, aacMP4(500, 500*1024, 11610), 11610 * time.Millisecond},
		{"webm", WebM, opusWebM(100, 2000, false), 2 * time.Second},
		{"wav with LIST after data", WAV, cat(pcmWAV(16000, 16000), chunk("LIST", []byte("INFOISFT\x05\x00\x00\x00test\x00"))), time.Second},
		{"wav with odd data, no pad byte, then LIST", WAV,
			cat(riff(fmtChunk(1, 1, 8000, 8000, 1, 8), []byte("data\x41\x1f\x00\x00"), make([]byte, 8001)), chunk("LIST", []byte("INFO"))),
			samplesAt(8001, 8000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Duration(bytes.NewReader(tc.file), int64(len(tc.file)), tc.f)
			if err != nil {
				t.Fatalf("Duration: %v", err)
			}
			if got != tc.want {
				t.Errorf("Duration = %v, want %v", got, tc.want)
			}
		})
	}
}

// lie builds a file of kind (one per container) holding n real frames
// whose header claims claim (in the header's own units). It returns the
// length the frames play (real), the least Duration may answer (floor:
// real, less a last packet a granule may trim) and the claim as a length
// (0 when the container clamps claims to the file, as WAV does).
func lie(kind uint8, n int, claim uint32) (f Format, file []byte, real, floor, claimed time.Duration) {
	switch kind % 9 {
	case 0:
		real = mp3Frames(n)
		return MP3, cat(xingFrame("Xing", claim), mpegFrames(mpeg1L3, 417, n, true)), real, real, mp3Frames(int(claim))
	case 1:
		data := make([]byte, 2*n)
		size := claim % uint32(len(data)+1)
		file = riff(fmtChunk(1, 1, 16000, 32000, 2, 16), []byte("data"), le32b(size))
		file = append(file[:len(file):len(file)], data...)
		// An odd size leaves a byte that may be the chunk's pad byte.
		real = samplesAt(uint64(len(data)), 32000)
		return WAV, file, real, samplesAt(uint64(len(data))-uint64(size&1), 32000), 0
	case 2:
		real = samplesAt(uint64(n)*4096, 44100)
		return FLAC, flacLie(uint64(claim), n), real, real, samplesAt(uint64(claim), 44100)
	case 3:
		real = samplesAt(uint64(n)*960, 48000)
		floor = samplesAt(uint64(n-1)*960, 48000)
		return OGG, opusStream(7, n, uint64(claim)), real, floor, samplesAt(uint64(claim), 48000)
	case 4:
		real = samplesAt(uint64(n)*1024, 44100)
		return MP4, aacMP4(uint32(n), claim, claim), real, real, max(samplesAt(uint64(claim), 1000), samplesAt(uint64(claim), 44100))
	case 5:
		k := max(n/4, 1)
		real = samplesAt(uint64(4*k)*1024, 44100)
		return MP4, fragmentedMP4(4, k, claim), real, real, samplesAt(uint64(claim), 1000)
	case 6:
		real = time.Duration(n) * 20 * time.Millisecond
		return WebM, opusWebM(n, float64(claim), claim%2 == 0), real, real, time.Duration(claim) * time.Millisecond
	case 7:
		// The first packet completes no block; each later one 1024 samples.
		real = samplesAt(uint64(n-1)*1024, 44100)
		floor = samplesAt(uint64(max(n-2, 0))*1024, 44100)
		return OGG, vorbisStream(n, uint64(claim)), real, floor, samplesAt(uint64(claim), 44100)
	default:
		real = samplesAt(uint64(n)*505, 8000)
		file = riff(fmtChunk(0x11, 1, 8000, 0xFFFFFFFF, 256, 4), chunk("fact", le32b(claim)), chunk("data", make([]byte, 256*n)))
		return WAV, file, real, real, samplesAt(uint64(claim), 8000)
	}
}

// FuzzLyingHeader is the size-consistency property: whatever a header
// claims, the duration is at least what the file's frames play, at least
// the claim (a claim above the frames is honoured), and no more than the
// larger of the two.
func FuzzLyingHeader(f *testing.F) {
	for kind := range uint8(9) {
		f.Add(kind, uint16(40), uint32(1))
		f.Add(kind, uint16(3), uint32(1_000_000))
		f.Add(kind, uint16(200), uint32(0))
	}
	f.Fuzz(func(t *testing.T, kind uint8, frames uint16, claim uint32) {
		n := int(frames%600) + 2
		format, file, real, floor, claimed := lie(kind, n, claim)
		d, err := Duration(bytes.NewReader(file), int64(len(file)), format)
		if err != nil {
			if floor == 0 && claimed == 0 {
				return // nothing to bill from: the caller's size bound applies
			}
			t.Fatalf("kind %d: %v", kind%9, err)
		}
		if d < floor {
			t.Errorf("kind %d: %d frames play %v, claim %v: Duration %v is short", kind%9, n, real, claimed, d)
		}
		if claimed <= maxDuration && d < claimed {
			t.Errorf("kind %d: claim %v not honoured: %v", kind%9, claimed, d)
		}
		if top := max(real, claimed); d > top {
			t.Errorf("kind %d: Duration %v above both the frames (%v) and the claim (%v)", kind%9, d, real, claimed)
		}
	})
}

// TestDurationWorstCaseTime: files of sync-like junk behind a valid
// start are read in linear time by every parser (a search never re-reads
// a window per candidate). Measured in bytes read, not seconds, so the
// test cannot flake on a busy machine: at most a few passes over 8 MB, a
// third of the upload limit.
func TestDurationWorstCaseTime(t *testing.T) {
	size := 8 << 20
	junk := map[string][]byte{
		"0xFF":       bytes.Repeat([]byte{0xFF}, size),
		"mpeg syncs": bytes.Repeat([]byte{0xFF, 0xFB, 0x90, 0x00, 0xFF, 0xE2}, size/6),
		"flac syncs": bytes.Repeat([]byte{0xFF, 0xF8, 0xC9, 0x18, 0x00}, size/5),
		"OggS":       bytes.Repeat([]byte("OggSOgg"), size/7),
	}
	starts := map[Format][]byte{
		WAV:  riff(fmtChunk(0x55, 1, 8000, 1000, 1, 0), chunk("data", make([]byte, 16))),
		MP3:  mpegFrames(mpeg1L3, 417, 3, false),
		FLAC: flacFile(44100, 1),
		OGG:  opusStream(7, 3, 100),
		MP4:  cat(ftyp(), isoBox("moov", mvhd0(1000, 10), aacTrak(1, 1))),
		WebM: opusWebM(10, 1, false),
	}
	for name, b := range junk {
		for f, start := range starts {
			file := cat(start, b)
			cr := &countingReaderAt{r: bytes.NewReader(file)}
			_, _ = Duration(cr, int64(len(file)), f)
			if cr.n > 4*int64(len(file)) {
				t.Errorf("%s behind a %s start: read %d bytes of a %d-byte file", name, f, cr.n, len(file))
			}
		}
	}
}

// countingReaderAt counts the bytes a parser reads.
type countingReaderAt struct {
	r io.ReaderAt
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}
