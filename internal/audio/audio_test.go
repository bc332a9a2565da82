package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestDuration(t *testing.T) {
	ms := time.Millisecond
	sec := time.Second
	frames := func(n int) time.Duration { return time.Duration(n) * 1152 * sec / 44100 }
	compressed := riff(fmtChunk(0x11, 1, 8000, 4055, 256, 4), chunk("fact", le32b(24000)), chunk("data", make([]byte, 5000)))
	streamed := pcmWAV(16000, 8000)
	binary.LittleEndian.PutUint32(streamed[40:], 0xFFFFFFFF) // data size unknown
	truncated := pcmWAV(8000, 8000)[:44+4000]                // says 1 s, holds 0.25 s
	ds64 := make([]byte, 28)
	binary.LittleEndian.PutUint64(ds64[8:], 32000)
	rf64 := append([]byte("RF64\xff\xff\xff\xffWAVE"), chunk("ds64", ds64)...)
	rf64 = append(rf64, fmtChunk(1, 1, 16000, 32000, 2, 16)...)
	rf64 = append(rf64, append([]byte("data\xff\xff\xff\xff"), make([]byte, 32000)...)...)

	tests := []durationCase{
		{"wav pcm 16k mono 1.5s", WAV, pcmWAV(16000, 24000), 1500 * ms},
		{"wav odd chunk before data", WAV, riff(fmtChunk(1, 2, 8000, 32000, 4, 16), chunk("LIST", []byte("abc")), chunk("data", make([]byte, 16000))), 500 * ms},
		{"wav compressed with fact", WAV, compressed, 3 * sec},
		{"wav streaming size", WAV, streamed, 500 * ms},
		{"wav pcm with a wrong byte rate field", WAV, riff(fmtChunk(1, 1, 8000, 1, 2, 16), chunk("data", make([]byte, 4000))), 250 * ms},
		{"wav truncated data", WAV, truncated, 250 * ms},
		{"wav rf64", WAV, rf64, sec},
		{"mp3 cbr walked", MP3, mpegFrames(mpeg1L3, 417, 100, false), frames(100)},
		{"mp3 padded frames, id3 in front, id3v1 behind", MP3, cat(id3(1000), mpegFrames(mpeg1L3, 417, 40, true), []byte("TAG"), make([]byte, 125)), frames(40)},
		{"mp3 junk between frames", MP3, cat(mpegFrames(mpeg1L3, 417, 10, false), []byte("junk!"), mpegFrames(mpeg1L3, 417, 10, false)), frames(20)},
		{"mp3 truncated last frame", MP3, mpegFrames(mpeg1L3, 417, 11, false)[:417*10+100], frames(10)},
		{"mp3 xing", MP3, cat(xingFrame("Xing", 1000), mpegFrames(mpeg1L3, 417, 5, false)), frames(1000)},
		{"mp3 info", MP3, cat(id3(20), xingFrame("Info", 250), mpegFrames(mpeg1L3, 417, 5, false)), frames(250)},
		{"mp3 vbri", MP3, cat(vbriFrame(500), mpegFrames(mpeg1L3, 417, 5, false)), frames(500)},
		{"mpeg2 layer III mono", MP3, mpegFrames(mpeg2L3, 208, 50, false), 50 * 576 * sec / 22050},
		{"flac", FLAC, flacFile(44100, 441000), 10 * sec},
		{"flac 96k", FLAC, flacFile(96000, 48000), 500 * ms},
		{"ogg opus", OGG, opusFile(312, 48000+312, 2*48000+312, 3*48000+312), 3 * sec},
		{"ogg opus header granule -1 skipped", OGG, opusFile(0, 24000, 1<<64-1), 500 * ms},
		{"ogg vorbis", OGG, vorbisFile(44100, 88200), 2 * sec},
		{"ogg truncated last page", OGG, opusFile(0, 48000, 96000)[:len(opusFile(0, 48000, 96000))-10], sec},
		{"m4a moov at end", MP4, cat(ftyp(), isoBox("mdat", make([]byte, 5000)), isoBox("moov", mvhd0(1000, 5500))), 5500 * ms},
		{"mp4 moov first v1", MP4, cat(ftyp(), isoBox("moov", mvhd1(44100, 44100*7)), isoBox("mdat", make([]byte, 10))), 7 * sec},
		{"mp4 fragmented mehd", MP4, cat(ftyp(), isoBox("moov", mvhd0(1000, 0), isoBox("mvex", isoBox("mehd", make([]byte, 4), binary.BigEndian.AppendUint32(nil, 4250))))), 4250 * ms},
		{"webm info duration", WebM, webmWithDuration(2500), 2500 * ms},
		{"webm recorded, blocks walked", WebM, webmRecorded(), 1980 * ms},
	}
	checkDurations(t, tests)
}

func TestDurationUnknown(t *testing.T) {
	tests := []struct {
		name string
		f    Format
		file []byte
	}{
		{"wav without data", WAV, riff(fmtChunk(1, 1, 8000, 16000, 2, 16))},
		{"wav without fmt", WAV, riff(chunk("data", make([]byte, 100)))},
		{"wav zero rate", WAV, riff(fmtChunk(1, 1, 0, 0, 0, 16), chunk("data", make([]byte, 100)))},
		{"mp3 no frames", MP3, bytes.Repeat([]byte("not audio "), 100)},
		{"mp3 free format", MP3, mpegFrames([4]byte{0xFF, 0xFB, 0x00, 0x00}, 400, 3, false)},
		{"flac without total", FLAC, flacFile(44100, 0)},
		{"flac without streaminfo", FLAC, []byte("fLaC\x84\x00\x00\x04abcd")},
		{"ogg unknown codec", OGG, oggPage(1, 0, 0, []byte("SomeCodec......................"))},
		{"ogg headers only", OGG, opusFile(0)},
		{"mp4 without moov", MP4, cat(ftyp(), isoBox("mdat", make([]byte, 20)))},
		{"mp4 fragmented without mehd", MP4, cat(ftyp(), isoBox("moov", mvhd0(1000, 0)))},
		{"mp4 bad box size", MP4, cat(ftyp(), []byte{0, 0, 0, 3, 'm', 'o', 'o', 'v'})},
		{"webm without duration or blocks", WebM, append(ebmlHeader("webm"), ebmlOpen(idSegment)...)},
		{"absurd flac", FLAC, flacFile(1, 1<<36-1)},
		{"empty", WAV, nil},
		{"unknown format", Format("aiff"), []byte("FORM")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Duration(bytes.NewReader(tc.file), int64(len(tc.file)), tc.f)
			if !errors.Is(err, ErrUnknownDuration) {
				t.Fatalf("Duration = %v, %v; want ErrUnknownDuration", d, err)
			}
		})
	}
}

func TestSniffRefuses(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10")
	for name, b := range map[string][]byte{
		"png":           png,
		"text":          []byte("hello, this is not audio at all"),
		"empty":         nil,
		"matroska":      append(ebmlHeader("matroska"), ebmlOpen(idSegment)...),
		"lone sync":     {0xFF, 0xFB, 0x90, 0x00, 1, 2, 3},
		"riff avi":      []byte("RIFF\x10\x00\x00\x00AVI LIST"),
		"junk then mp3": cat([]byte("xx"), mpegFrames(mpeg1L3, 417, 3, false)),
	} {
		if f := Sniff(bytes.NewReader(b), int64(len(b))); f != "" {
			t.Errorf("%s: Sniff = %q, want none", name, f)
		}
	}
}

func TestFormatOfName(t *testing.T) {
	for name, want := range map[string]Format{
		"a.wav": WAV, "A.WAV": WAV, "x.mp3": MP3, "x.mpga": MP3, "x.mpeg": MP3, "v.mp4": MP4, "v.m4a": MP4,
		"v.ogg": OGG, "v.webm": WebM, "v.flac": FLAC, "anonymous_file": "", "a.txt": "", "dir.wav/file": "", "": "",
	} {
		if got := FormatOfName(name); got != want {
			t.Errorf("FormatOfName(%q) = %q, want %q", name, got, want)
		}
	}
}

// FuzzDuration checks the parsers never panic or loop on any input, and
// answer a duration in range; seeded with the table's files and the lying
// ones.
func FuzzDuration(f *testing.F) {
	seeds := [][]byte{pcmWAV(8000, 100), mpegFrames(mpeg1L3, 417, 3, true), xingFrame("Xing", 3), flacFile(8000, 8000),
		opusFile(312, 48312), vorbisFile(8000, 8000), cat(ftyp(), isoBox("moov", mvhd0(1000, 10))),
		webmWithDuration(10), webmRecorded(), cat(id3(10), mpegFrames(mpeg2L3, 208, 3, false))}
	for _, tc := range lyingFiles() {
		if len(tc.file) < 64<<10 {
			seeds = append(seeds, tc.file)
		}
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		format := Sniff(r, int64(len(b)))
		for _, ff := range []Format{format, WAV, MP3, FLAC, OGG, MP4, WebM} {
			d, err := Duration(r, int64(len(b)), ff)
			if err == nil && (d < 0 || d > maxDuration) {
				t.Fatalf("%s: duration %v out of range", ff, d)
			}
		}
	})
}

// durationCase is a file and the format and duration it must be read as.
type durationCase struct {
	name string
	f    Format
	file []byte
	want time.Duration
}

// checkDurations checks that each file is sniffed as its format and read
// as its duration.
func checkDurations(t *testing.T, cases []durationCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sniff(bytes.NewReader(tc.file), int64(len(tc.file))); got != tc.f {
				t.Errorf("Sniff = %q, want %q", got, tc.f)
			}
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
