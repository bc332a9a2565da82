package sqlstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// A usage block holds the records one batch stored for one account, as one
// row of usage_blocks (0009_usage_blocks.sql) whose data column is the
// encoding below. One row per batch and account instead of one per record
// is what brings a record's cost in the database to a few microseconds
// (docs/usage-records.md): SQLite's work per row (binding ~20 values,
// inserting into four B-trees) was most of it.
//
// data is a version byte (blockVersion, or blockVersionAttempts when a
// record of the block has attempts), then each record in the batch's order:
//
//	request_id       uvarint length, bytes
//	time             varint, Unix microseconds minus the previous record's (0 before the first)
//	key_id, endpoint, model, provider, upstream_model, error_code:
//	                 uvarint 0 when equal to the previous record's, else
//	                 uvarint length+1, bytes (the previous of the first is "")
//	flags            one byte: flagStream, flagEstimated, flagCharged,
//	                 flagAttempts
//	prompt, completion, cached, reasoning tokens, latency µs, ttft µs,
//	status, cost     varints
//	charge id, balance after
//	                 varints, only with flagCharged
//	attempts         only with flagAttempts (store.UsageRecord.Attempts not
//	                 empty): uvarint count (at least 1), then per attempt
//	                 provider (uvarint length, bytes), status (varint),
//	                 error (uvarint length, bytes), duration µs (varint)
//
// The account is the row's account_id; a charged record's ledger entry is
// (charge id, account, 'charge', -cost, balance after, request_id, time).
//
// Both versions are read the same way; blockVersionAttempts only marks the
// blocks that an earlier version, which knows no flagAttempts, must refuse
// rather than misread. A block without attempts is written exactly as
// before they existed.
const (
	blockVersion         = 1
	blockVersionAttempts = 2
)

// minAttempt is the fewest bytes an encoded attempt takes: two empty
// strings and two one-byte varints.
const minAttempt = 4

// Record flags.
const (
	flagStream = 1 << iota
	flagEstimated
	flagCharged
	flagAttempts
)

// blockRecord is a record read from a block, with its charge (id 0: it
// charged nothing) and, for PurgeUsage, the block it came from.
type blockRecord struct {
	store.UsageRecord
	charge
	block int64
}

// blockStrings are the record fields coded against the previous record.
func blockStrings(r *store.UsageRecord) [6]*string {
	return [6]*string{&r.KeyID, &r.Endpoint, &r.Model, &r.Provider, &r.UpstreamModel, &r.ErrorCode}
}

// appendBlock appends the encoding of the records recs[i], with their
// charges charges[i], for i in idx, to dst.
func appendBlock(dst []byte, recs []store.UsageRecord, charges []charge, idx []int) []byte {
	version := len(dst)
	dst = append(dst, blockVersion)
	var prevTime int64
	var prev [6]string
	for _, i := range idx {
		r := &recs[i]
		dst = binary.AppendUvarint(dst, uint64(len(r.RequestID)))
		dst = append(dst, r.RequestID...)
		t := toMicros(r.Time)
		dst = binary.AppendVarint(dst, t-prevTime)
		prevTime = t
		for j, s := range blockStrings(r) {
			if *s == prev[j] {
				dst = append(dst, 0)
				continue
			}
			dst = binary.AppendUvarint(dst, uint64(len(*s))+1)
			dst = append(dst, *s...)
			prev[j] = *s
		}
		var flags byte
		if r.Stream {
			flags |= flagStream
		}
		if r.Estimated {
			flags |= flagEstimated
		}
		c := charges[i]
		if c.id != 0 {
			flags |= flagCharged
		}
		if len(r.Attempts) > 0 {
			flags |= flagAttempts
			dst[version] = blockVersionAttempts
		}
		dst = append(dst, flags)
		for _, v := range [...]int64{r.PromptTokens, r.CompletionTokens, r.CachedTokens, r.ReasoningTokens,
			r.Latency.Microseconds(), r.TTFT.Microseconds(), int64(r.Status), int64(r.Cost)} {
			dst = binary.AppendVarint(dst, v)
		}
		if c.id != 0 {
			dst = binary.AppendVarint(dst, c.id)
			dst = binary.AppendVarint(dst, int64(c.balanceAfter))
		}
		if len(r.Attempts) > 0 {
			dst = appendAttempts(dst, r.Attempts)
		}
	}
	return dst
}

// appendAttempts appends the attempts of a record with flagAttempts.
func appendAttempts(dst []byte, as []store.Attempt) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(as)))
	for i := range as {
		a := &as[i]
		dst = binary.AppendUvarint(dst, uint64(len(a.Provider)))
		dst = append(dst, a.Provider...)
		dst = binary.AppendVarint(dst, int64(a.Status))
		dst = binary.AppendUvarint(dst, uint64(len(a.Error)))
		dst = append(dst, a.Error...)
		dst = binary.AppendVarint(dst, a.Duration.Microseconds())
	}
	return dst
}

// errBadBlock reports data that is not a block this version can read.
var errBadBlock = errors.New("malformed usage block")

// blockReader decodes a block's records one at a time. Strings equal to
// the previous record's share its memory.
type blockReader struct {
	data     []byte
	off      int
	account  string
	prevTime int64
	prev     [6]string
	err      error
}

// newBlockReader reads data, the block of account.
func newBlockReader(data []byte, account string) *blockReader {
	r := &blockReader{data: data, account: account}
	if len(data) == 0 || data[0] != blockVersion && data[0] != blockVersionAttempts {
		r.err = fmt.Errorf("%w: version %v", errBadBlock, data[:min(1, len(data))])
	} else {
		r.off = 1
	}
	return r
}

// next decodes the next record into rec; false at the end or on an error
// (see Err).
func (r *blockReader) next(rec *blockRecord) bool {
	if r.err != nil || r.off >= len(r.data) {
		return false
	}
	*rec = blockRecord{}
	u := &rec.UsageRecord
	u.AccountID = r.account
	id := r.bytes()
	u.RequestID = string(id)
	r.prevTime += r.varint()
	u.Time = fromMicros(r.prevTime)
	for j, s := range blockStrings(u) {
		if n := r.uvarint(); n == 0 {
			*s = r.prev[j]
		} else {
			r.prev[j] = string(r.take(int(n - 1)))
			*s = r.prev[j]
		}
	}
	flags := r.take(1)
	var v [8]int64
	for i := range v {
		v[i] = r.varint()
	}
	u.PromptTokens, u.CompletionTokens, u.CachedTokens, u.ReasoningTokens = v[0], v[1], v[2], v[3]
	u.Latency, u.TTFT = time.Duration(v[4])*time.Microsecond, time.Duration(v[5])*time.Microsecond
	u.Status, u.Cost = int(v[6]), money.Micros(v[7])
	if len(flags) == 1 {
		u.Stream, u.Estimated = flags[0]&flagStream != 0, flags[0]&flagEstimated != 0
		if flags[0]&flagCharged != 0 {
			rec.charge = charge{id: r.varint(), balanceAfter: money.Micros(r.varint())}
		}
		if flags[0]&flagAttempts != 0 {
			u.Attempts = r.attempts()
		}
	}
	return r.err == nil
}

// attempts decodes a record's attempts (flagAttempts).
func (r *blockReader) attempts() []store.Attempt {
	n := r.attemptCount()
	if n == 0 {
		return nil
	}
	as := make([]store.Attempt, n)
	for i := range as {
		a := &as[i]
		a.Provider = string(r.bytes())
		a.Status = int(r.varint())
		a.Error = string(r.bytes())
		a.Duration = time.Duration(r.varint()) * time.Microsecond
	}
	return as
}

// skipAttempts passes over a record's attempts (flagAttempts).
func (r *blockReader) skipAttempts() {
	for range r.attemptCount() {
		r.bytes()
		r.varint()
		r.bytes()
		r.varint()
	}
}

// attemptCount reads the count of a record's attempts: at least one, and
// no more than the rest of the block can hold (0 after failing).
func (r *blockReader) attemptCount() int {
	n := r.uvarint()
	if r.err == nil && (n == 0 || n > uint64((len(r.data)-r.off)/minAttempt)) {
		r.fail()
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

// skipToID decodes the next record's request id and time only, skipping
// the rest: what looking for stored ids needs, without allocating. The id
// is valid until the next call.
func (r *blockReader) skipToID() (id []byte, at int64, ok bool) {
	if r.err != nil || r.off >= len(r.data) {
		return nil, 0, false
	}
	id = r.bytes()
	r.prevTime += r.varint()
	for range r.prev {
		if n := r.uvarint(); n != 0 {
			r.take(int(n - 1))
		}
	}
	flags := r.take(1)
	for range 8 {
		r.varint()
	}
	if len(flags) == 1 && flags[0]&flagCharged != 0 {
		r.varint()
		r.varint()
	}
	if len(flags) == 1 && flags[0]&flagAttempts != 0 {
		r.skipAttempts()
	}
	return id, r.prevTime, r.err == nil
}

// Err is the first decoding error.
func (r *blockReader) Err() error { return r.err }

func (r *blockReader) fail() {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated at byte %d of %d", errBadBlock, r.off, len(r.data))
		r.off = len(r.data)
	}
}

func (r *blockReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.data[r.off:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.off += n
	return v
}

// varint reads a signed varint: a uvarint, zigzag-decoded (as binary.Varint).
func (r *blockReader) varint() int64 {
	ux := r.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

// take returns the next n bytes.
func (r *blockReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.data)-r.off {
		r.fail()
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

// bytes reads a uvarint length and that many bytes.
func (r *blockReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.data)) {
		r.fail()
		return nil
	}
	return r.take(int(n))
}
