package usage

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// A journal segment (suffix journalSuffix) is a sequence of frames:
//
//	length  uint32, little endian: bytes of payload
//	crc     uint32, little endian: CRC-32C of payload
//	payload version byte (1), then the record's fields in struct order:
//	        strings as uvarint length + bytes, integers and durations as
//	        varints, booleans as one byte, Time as varint Unix seconds +
//	        uvarint nanoseconds (read back in UTC)
//	attempts only when the record has any (store.UsageRecord.Attempts):
//	        uvarint count (at least 1), then per attempt provider
//	        (string), status (varint), error (string), duration (varint
//	        nanoseconds). A payload that ends after the error code is a
//	        record without attempts (nil), as every frame written before
//	        attempts existed is.
//
// A frame cut short by a crash, or whose checksum does not match, ends the
// segment's readable part; Replay counts it as torn. A length of zero ends
// it too, silently: a segment file is created larger than its frames and
// zero-filled after them (journal.go). Segments written by
// earlier versions (legacySuffix) hold one JSON record per line.

const (
	frameHeader  = 8
	frameVersion = 1
	maxFrame     = 1 << 20 // no record comes near; a larger length is garbage
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// appendFrame appends rec's frame to b.
func appendFrame(b []byte, rec *store.UsageRecord) []byte {
	start := len(b)
	b = append(b, make([]byte, frameHeader)...)
	b = append(b, frameVersion)
	b = appendString(b, rec.RequestID)
	b = binary.AppendVarint(b, rec.Time.Unix())
	b = binary.AppendUvarint(b, uint64(rec.Time.Nanosecond()))
	for _, s := range [...]string{rec.AccountID, rec.KeyID, rec.Endpoint, rec.Model, rec.Provider, rec.UpstreamModel} {
		b = appendString(b, s)
	}
	b = appendBool(b, rec.Stream)
	for _, n := range [...]int64{rec.PromptTokens, rec.CompletionTokens, rec.CachedTokens, rec.ReasoningTokens} {
		b = binary.AppendVarint(b, n)
	}
	b = appendBool(b, rec.Estimated)
	for _, n := range [...]int64{int64(rec.Cost), int64(rec.Latency), int64(rec.TTFT), int64(rec.Status)} {
		b = binary.AppendVarint(b, n)
	}
	b = appendString(b, rec.ErrorCode)
	if len(rec.Attempts) > 0 {
		b = binary.AppendUvarint(b, uint64(len(rec.Attempts)))
		for i := range rec.Attempts {
			a := &rec.Attempts[i]
			b = appendString(b, a.Provider)
			b = binary.AppendVarint(b, int64(a.Status))
			b = appendString(b, a.Error)
			b = binary.AppendVarint(b, int64(a.Duration))
		}
	}
	payload := b[start+frameHeader:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(payload, crcTable))
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

var errBadFrame = errors.New("bad frame")

// decoder reads a payload's fields in order; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err, d.b = errBadFrame, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err, d.b = errBadFrame, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err, d.b = errBadFrame, nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) bool() bool {
	if len(d.b) == 0 {
		d.err = errBadFrame
		return false
	}
	v := d.b[0] != 0
	d.b = d.b[1:]
	return v
}

// decodePayload is the inverse of appendFrame's payload.
func decodePayload(p []byte) (store.UsageRecord, error) {
	if len(p) == 0 || p[0] != frameVersion {
		return store.UsageRecord{}, errBadFrame
	}
	d := &decoder{b: p[1:]}
	var r store.UsageRecord
	r.RequestID = d.str()
	sec := d.varint()
	r.Time = time.Unix(sec, int64(d.uvarint())).UTC()
	for _, s := range [...]*string{&r.AccountID, &r.KeyID, &r.Endpoint, &r.Model, &r.Provider, &r.UpstreamModel} {
		*s = d.str()
	}
	r.Stream = d.bool()
	for _, n := range [...]*int64{&r.PromptTokens, &r.CompletionTokens, &r.CachedTokens, &r.ReasoningTokens} {
		*n = d.varint()
	}
	r.Estimated = d.bool()
	r.Cost = money.Micros(d.varint())
	r.Latency = time.Duration(d.varint())
	r.TTFT = time.Duration(d.varint())
	r.Status = int(d.varint())
	r.ErrorCode = d.str()
	if len(d.b) > 0 {
		r.Attempts = d.attempts()
	}
	if d.err != nil || len(d.b) != 0 || r.RequestID == "" {
		return store.UsageRecord{}, errBadFrame
	}
	return r, nil
}

// minAttempt is the fewest bytes an encoded attempt takes: two empty
// strings and two one-byte varints.
const minAttempt = 4

// attempts reads a record's attempts: a count of at least one, then each.
func (d *decoder) attempts() []store.Attempt {
	n := d.uvarint()
	if n == 0 || n > uint64(len(d.b)/minAttempt) { // never written; garbage
		d.err, d.b = errBadFrame, nil
		return nil
	}
	as := make([]store.Attempt, n)
	for i := range as {
		a := &as[i]
		a.Provider = d.str()
		a.Status = int(d.varint())
		a.Error = d.str()
		a.Duration = time.Duration(d.varint())
	}
	return as
}

// readFrames returns the records of a segment file; a bad or cut frame
// ends it and counts as one torn record.
func readFrames(path string) (recs []store.UsageRecord, torn int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	for len(b) > 0 {
		if len(b) < frameHeader {
			return recs, torn + 1, nil
		}
		n := binary.LittleEndian.Uint32(b)
		if n == 0 { // the zeros after the last frame of a mapped segment
			return recs, torn, nil
		}
		if n > maxFrame || int(n) > len(b)-frameHeader {
			return recs, torn + 1, nil
		}
		payload := b[frameHeader : frameHeader+int(n)]
		if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(b[4:]) {
			return recs, torn + 1, nil
		}
		r, err := decodePayload(payload)
		if err != nil {
			return recs, torn + 1, nil
		}
		recs = append(recs, r)
		b = b[frameHeader+int(n):]
	}
	return recs, torn, nil
}

// readLegacy returns the records of a JSON-lines segment (the format
// before frames); lines that do not parse are counted as torn.
func readLegacy(path string) (recs []store.UsageRecord, torn int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r store.UsageRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.RequestID == "" {
			torn++
			continue
		}
		recs = append(recs, r)
	}
	return recs, torn, sc.Err()
}
