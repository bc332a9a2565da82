package sqlite

import (
	"errors"
	"reflect"
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
	tests := []struct {
		name    string
		recs    []store.UsageRecord
		charges []charge
	}{
		{"one charged", []store.UsageRecord{full}, []charge{{id: 17, balanceAfter: 994679}}},
		{"strings repeated, time going back", []store.UsageRecord{full, same}, []charge{{}, {id: 9, balanceAfter: -3}}},
		{"strings changing and back", []store.UsageRecord{full, failed, same, zero}, make([]charge, 4)},
		{"negative numbers", []store.UsageRecord{negative}, []charge{{id: 1 << 40, balanceAfter: -1 << 40}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx := make([]int, len(tc.recs))
			for i := range idx {
				idx[i] = i
			}
			data := appendBlock(nil, tc.recs, tc.charges, idx)
			br := newBlockReader(data, "acct_1")
			var got blockRecord
			for i, want := range tc.recs {
				if !br.next(&got) {
					t.Fatalf("record %d: no record, err %v", i, br.Err())
				}
				want.AccountID = "acct_1"
				want.Time = fromMicros(toMicros(want.Time))
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

// TestBlockMalformed checks that data which is not a whole block gives
// errBadBlock, never a panic or a record made up of garbage.
func TestBlockMalformed(t *testing.T) {
	rec := store.UsageRecord{RequestID: "req_1", Time: time.Unix(1e9, 0), Model: "m", Cost: 5, Status: 200}
	good := appendBlock(nil, []store.UsageRecord{rec}, []charge{{id: 3, balanceAfter: 10}}, []int{0})
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
