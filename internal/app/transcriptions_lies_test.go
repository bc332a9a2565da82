package app_test

import (
	"bytes"
	"encoding/binary"
	"net/http"
	"testing"
)

// lyingMP3 is issue 11's file: 12,001 MPEG-1 layer III frames (128 kbit/s,
// 44.1 kHz: 313.4955 s) behind a first frame whose Xing header claims one
// frame.
func lyingMP3() []byte {
	frame := func() []byte {
		f := make([]byte, 417)
		copy(f, []byte{0xFF, 0xFB, 0x90, 0x00})
		return f
	}
	xing := frame()
	copy(xing[36:], "Xing")
	binary.BigEndian.PutUint32(xing[40:], 1) // the frame count is present
	binary.BigEndian.PutUint32(xing[44:], 1) // and says one frame
	b := xing
	for range 12001 {
		b = append(b, frame()...)
	}
	return b
}

// With response_format text the vendor reports no duration, so the
// gateway bills from the file: from its frames, not from what its Xing
// header claims. 313.4955 s of whisper-1 ($0.006/min) costs 0.031350,
// not the claim's 0.000003.
func TestTranscriptionsBilledFromFramesNotHeader(t *testing.T) {
	g := startAudioGateway(t)
	for _, format := range []string{"text", "srt", "vtt"} {
		t.Run(format, func(t *testing.T) {
			body, ct := rawForm(tpart{"file", "talk.mp3", "audio/mpeg", string(lyingMP3())},
				tpart{name: "model", value: "whisper-1"}, tpart{name: "response_format", value: format})
			resp, b := g.post("/v1/audio/transcriptions", ct, g.keys["default"], bytes.NewReader(body))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if got := resp.Header.Get("X-Modelgate-Cost"); got != "0.031350" {
				t.Errorf("cost %s, want 0.031350 (313.496 s at $0.0001/s)", got)
			}
		})
	}
	// The file reached the vendor untouched: refusing it is not the fix.
	if got := g.upstream.Last(); !bytes.Contains(got.Body, lyingMP3()[:4096]) {
		t.Errorf("the upstream did not receive the file")
	}
	n := 0
	for _, r := range g.usage() {
		if r.Endpoint == "audio.transcriptions" && r.Model == "whisper-1" {
			n++
			if r.Cost.String() != "0.031350" || !r.Estimated {
				t.Errorf("record %+v: want cost 0.031350, estimated", r)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d records, want 3", n)
	}
}
