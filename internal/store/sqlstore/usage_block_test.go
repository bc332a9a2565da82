package sqlstore

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// TestBlockRoundTrip encodes records with appendBlock and reads them back,
// through next (every field, the charge) and skipToID (id and time only).
func TestBlockRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 8, 0, 0, 123456000, time.UTC)
	full := store.UsageRecord{RequestID: "req_0001", Time: t0, AccountID: "acct_1", KeyID: "key_1",
		Endpoint: "chat.completions", Model: "gpt-4o", Provider: "openai", UpstreamModel: "gpt-4o-2024-08-06",
		Stream: true, PromptTokens: 1200, CompletionTokens: 340, CachedTokens: 1024, ReasoningTokens: 64,
		Estimated: true, Cost: 5321, Latency: 1500 * time.Millisecond, TTFT: 230 * time.Millisecond, Status: 200}
	same := full // every string as the previous record's
	same.RequestID, same.Time, same.Stream, same.Estimated = "req_0002", t0.Add(-time.Hour), false, false
	failed := full
	failed.RequestID, failed.Time, failed.Status, failed.ErrorCode = "req_0003", t0.Add(time.Millisecond), 429, "rate_limit_exceeded"
	failed.Model, failed.Cost, failed.CompletionTokens, failed.TTFT = "", 0, 0, 0
	zero := store.UsageRecord{RequestID: "", AccountID: "acct_1"} // zero time, every string empty again
	negative := full
	negative.RequestID, negative.PromptTokens, negative.Cost = "req_neg", -5, -7
	retried := full // failed over, then answered
	retried.RequestID, retried.Attempts = "req_retry", []store.Attempt{
		{Provider: "azure", Status: 0, Error: "dial tcp: i/o timeout", Duration: 10*time.Second + 999}, // sub-µs dropped
		{Provider: "openai", Status: 429, Error: "rate limited", Duration: 12 * time.Millisecond},
		{Provider: "openai", Status: 200, Duration: 1500 * time.Millisecond},
	}
	failedOnce := failed
	failedOnce.RequestID, failedOnce.Attempts = "req_failed_once", []store.Attempt{{Provider: "openai", Status: 429, Error: "slow down", Duration: -time.Microsecond}}
	emptyAttempt := zero
	emptyAttempt.RequestID, emptyAttempt.Attempts = "req_empty_attempt", []store.Attempt{{}}
	tests := []struct {
		name    string
		recs    []store.UsageRecord
		charges []charge
	}{
		{"one charged", []store.UsageRecord{full}, []charge{{id: 17, balanceAfter: 994679}}},
		{"strings repeated, time going back", []store.UsageRecord{full, same}, []charge{{}, {id: 9, balanceAfter: -3}}},
		{"strings changing and back", []store.UsageRecord{full, failed, same, zero}, make([]charge, 4)},
		{"negative numbers", []store.UsageRecord{negative}, []charge{{id: 1 << 40, balanceAfter: -1 << 40}}},
		{"attempts between records without", []store.UsageRecord{full, retried, failedOnce, same, emptyAttempt},
			[]charge{{}, {id: 5, balanceAfter: 100}, {}, {id: 6, balanceAfter: 90}, {}}},
		{"attempts and a charge only", []store.UsageRecord{retried}, []charge{{id: 8, balanceAfter: -1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx := make([]int, len(tc.recs))
			for i := range idx {
				idx[i] = i
			}
			data := appendBlock(nil, tc.recs, tc.charges, idx)
			wantVersion := byte(blockVersion)
			for _, r := range tc.recs {
				if r.Attempts != nil {
					wantVersion = blockVersionAttempts
				}
			}
			if data[0] != wantVersion {
				t.Errorf("version %d, want %d", data[0], wantVersion)
			}
			br := newBlockReader(data, "acct_1")
			var got blockRecord
			for i, want := range tc.recs {
				if !br.next(&got) {
					t.Fatalf("record %d: no record, err %v", i, br.Err())
				}
				want.AccountID = "acct_1"
				want.Time = fromMicros(toMicros(want.Time))
				want.Attempts = slices.Clone(want.Attempts)
				for j := range want.Attempts {
					want.Attempts[j].Duration = want.Attempts[j].Duration.Truncate(time.Microsecond)
				}
				if !reflect.DeepEqual(got.UsageRecord, want) {
					t.Errorf("record %d:\n got %+v\nwant %+v", i, got.UsageRecord, want)
				}
				if got.charge != tc.charges[i] {
					t.Errorf("record %d: charge %+v, want %+v", i, got.charge, tc.charges[i])
				}
			}
			if br.next(&got) || br.Err() != nil {
				t.Errorf("after the last record: more or an error (%v)", br.Err())
			}
			ids := newBlockReader(data, "acct_1")
			for i, want := range tc.recs {
				id, at, ok := ids.skipToID()
				if !ok || string(id) != want.RequestID || at != toMicros(want.Time) {
					t.Errorf("skipToID %d = %q, %d, %v; want %q, %d", i, id, at, ok, want.RequestID, toMicros(want.Time))
				}
			}
			if _, _, ok := ids.skipToID(); ok || ids.Err() != nil {
				t.Errorf("skipToID after the last record: more or an error (%v)", ids.Err())
			}
		})
	}
}

// oldBlock is a block as the version before attempts wrote it: the records
// of TestBlockOldFormat, the first charged.
const oldBlock = "01057265715f61808992eba6c5b006066b65795f3111636861742e636f6d706c6574696f6e73026d027000000518060000c08d" +
	"b701c0b8029003c6010e8a0e057265715f6280897a00000000000f757073747265616d5f6572726f720018060000c08db701c0b802ec0700"

// TestBlockOldFormat: blocks written before attempts existed read as they
// did, with nil Attempts, and records without attempts (an empty
// Attempts too) are still written byte for byte as they were.
func TestBlockOldFormat(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 8, 0, 0, 123456000, time.UTC)
	a := store.UsageRecord{RequestID: "req_a", Time: t0, AccountID: "acct_1", KeyID: "key_1", Endpoint: "chat.completions",
		Model: "m", Provider: "p", Stream: true, PromptTokens: 12, CompletionTokens: 3, Cost: 99,
		Latency: 1500 * time.Millisecond, TTFT: 20 * time.Millisecond, Status: 200}
	b := a
	b.RequestID, b.Time, b.Status, b.ErrorCode, b.Cost, b.Stream = "req_b", t0.Add(time.Second), 502, "upstream_error", 0, false
	charges := []charge{{id: 7, balanceAfter: 901}, {}}
	data, err := hex.DecodeString(oldBlock)
	if err != nil {
		t.Fatal(err)
	}
	br := newBlockReader(data, "acct_1")
	var got blockRecord
	for i, want := range []store.UsageRecord{a, b} {
		if !br.next(&got) || !reflect.DeepEqual(got.UsageRecord, want) || got.charge != charges[i] {
			t.Errorf("record %d = %+v, %+v (err %v); want %+v, %+v", i, got.UsageRecord, got.charge, br.Err(), want, charges[i])
		}
	}
	if br.next(&got) || br.Err() != nil {
		t.Errorf("after the last record: more or an error (%v)", br.Err())
	}
	b.Attempts = []store.Attempt{}
	if again := appendBlock(nil, []store.UsageRecord{a, b}, charges, []int{0, 1}); !bytes.Equal(again, data) {
		t.Errorf("records without attempts written as\n%x, want\n%x", again, data)
	}
}

// TestBlockMalformed checks that data which is not a whole block gives
// errBadBlock, never a panic or a record made up of garbage.
func TestBlockMalformed(t *testing.T) {
	rec := store.UsageRecord{RequestID: "req_1", Time: time.Unix(1e9, 0), Model: "m", Cost: 5, Status: 200}
	good := appendBlock(nil, []store.UsageRecord{rec}, []charge{{id: 3, balanceAfter: 10}}, []int{0})
	tried := rec
	tried.Attempts = []store.Attempt{{Provider: "p", Status: 500, Error: "boom", Duration: time.Second}}
	withAttempts := appendBlock(nil, []store.UsageRecord{tried}, []charge{{}}, []int{0})
	// withTail is the block of a record whose numbers are all 0, with
	// flagAttempts set and tail in place of the attempts.
	withTail := func(tail ...byte) []byte {
		zero := store.UsageRecord{RequestID: "req_1", Time: rec.Time, Model: "m"}
		b := appendBlock(nil, []store.UsageRecord{zero}, []charge{{}}, []int{0})
		b[0] = blockVersionAttempts
		b[len(b)-9] |= flagAttempts // the flags, then 8 varints of one byte
		return append(b, tail...)
	}
	var one blockRecord
	if br := newBlockReader(withTail(1, 0, 0, 0, 0), "a"); !br.next(&one) || !reflect.DeepEqual(one.Attempts, []store.Attempt{{}}) {
		t.Fatalf("withTail with one empty attempt = %+v, %v", one.UsageRecord, br.Err())
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"unknown version", append([]byte{9}, good[1:]...)},
		{"cut in the id", good[:3]},
		{"cut before the charge", good[:len(good)-2]},
		{"id longer than the block", []byte{blockVersion, 200, 1}},
		{"varint overflow", append([]byte{blockVersion, 1, 'x'}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)},
		{"cut in the attempts", withAttempts[:len(withAttempts)-1]},
		{"cut before the attempts", withTail()},
		{"attempt count zero", withTail(0)},
		{"attempt count past the block", withTail(2, 1, 'p', 0, 0, 0)},
		{"huge attempt count", withTail(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)},
		{"provider longer than the block", withTail(1, 100, 'p', 0, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			br := newBlockReader(tc.data, "a")
			var got blockRecord
			for br.next(&got) {
				t.Errorf("decoded a record from malformed data: %+v", got)
			}
			if !errors.Is(br.Err(), errBadBlock) {
				t.Errorf("Err() = %v, want errBadBlock", br.Err())
			}
			ids := newBlockReader(tc.data, "a")
			for _, _, ok := ids.skipToID(); ok; _, _, ok = ids.skipToID() {
				t.Error("skipToID read a record from malformed data")
			}
			if !errors.Is(ids.Err(), errBadBlock) {
				t.Errorf("skipToID: Err() = %v, want errBadBlock", ids.Err())
			}
		})
	}
}

// FuzzBlockReader feeds arbitrary bytes to the decoder: it must not panic,
// and skipToID must read the same ids and times as next.
func FuzzBlockReader(f *testing.F) {
	rec := store.UsageRecord{RequestID: "req_1", Time: time.Unix(1e9, 0), Model: "m", Cost: money.Micros(5), Status: 200}
	f.Add(appendBlock(nil, []store.UsageRecord{rec, rec}, []charge{{id: 3, balanceAfter: 10}, {}}, []int{0, 1}))
	f.Add([]byte{blockVersion})
	tried := rec
	tried.Attempts = []store.Attempt{{Provider: "p", Status: 502, Error: "bad gateway", Duration: time.Second}, {Provider: "q", Status: 200}}
	f.Add(appendBlock(nil, []store.UsageRecord{rec, tried, rec}, []charge{{}, {id: 4, balanceAfter: 1}, {}}, []int{0, 1, 2}))
	f.Fuzz(func(t *testing.T, data []byte) {
		full, ids := newBlockReader(data, "a"), newBlockReader(data, "a")
		var rec blockRecord
		for full.next(&rec) {
			id, at, ok := ids.skipToID()
			if !ok || string(id) != rec.RequestID || at != toMicros(rec.Time) {
				t.Fatalf("skipToID = %q, %d, %v; next read %q at %d", id, at, ok, rec.RequestID, toMicros(rec.Time))
			}
		}
		if _, _, ok := ids.skipToID(); ok {
			t.Fatal("skipToID read a record more than next")
		}
		if (full.Err() == nil) != (ids.Err() == nil) {
			t.Fatalf("next ended with %v, skipToID with %v", full.Err(), ids.Err())
		}
	})
}
