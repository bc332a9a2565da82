package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// testRefusals covers store.Refusals: counts add up per account, key,
// minute and reason, list newest first, filter, and purge by minute.
func testRefusals(t *testing.T, newStore func(t *testing.T) store.Store) {
	row := func(acct, key string, minute time.Duration, reason string, status int, n int64) store.RefusalCount {
		return store.RefusalCount{AccountID: acct, KeyID: key, Minute: at(minute * time.Minute), Endpoint: "chat", Reason: reason, Status: status, Count: n}
	}
	add := func(t *testing.T, s store.Store, cs ...store.RefusalCount) {
		t.Helper()
		if err := s.AddRefusals(ctx(t), cs); err != nil {
			t.Fatalf("AddRefusals: %v", err)
		}
	}
	list := func(t *testing.T, s store.Store, f store.RefusalFilter) string {
		t.Helper()
		cs, err := s.ListRefusals(ctx(t), f)
		if err != nil {
			t.Fatalf("ListRefusals: %v", err)
		}
		out := ""
		for _, c := range cs {
			if c.Minute.Location() != time.UTC || c.Minute.Second() != 0 || c.Minute.Nanosecond() != 0 {
				t.Errorf("minute %v: not the start of a UTC minute", c.Minute)
			}
			e := ""
			if c.Endpoint != "chat" {
				e = " " + c.Endpoint
			}
			out += fmt.Sprintf("[%s %s %s%s %s %d %d]", c.AccountID, c.KeyID, c.Minute.Format("15:04"), e, c.Reason, c.Status, c.Count)
		}
		return out
	}

	t.Run("AddsUp", func(t *testing.T) {
		s := newStore(t)
		// at(0) is 15:09:26.5: the same minute as at(0)+30s, not at(0)+40s.
		add(t, s, row("acct_a", "key_1", 0, "insufficient_quota", 429, 3),
			row("acct_a", "key_1", 0, "model_not_found", 404, 1))
		add(t, s, row("acct_a", "key_1", 0, "insufficient_quota", 429, 2),
			store.RefusalCount{AccountID: "acct_a", KeyID: "key_1", Minute: at(30 * time.Second), Endpoint: "chat", Reason: "insufficient_quota", Status: 429, Count: 1},
			store.RefusalCount{AccountID: "acct_a", KeyID: "key_1", Minute: at(40 * time.Second), Endpoint: "chat", Reason: "insufficient_quota", Status: 429, Count: 1},
			row("acct_a", "key_2", 0, "insufficient_quota", 429, 7),
			store.RefusalCount{AccountID: "acct_a", KeyID: "key_1", Minute: at(0), Endpoint: "images", Reason: "insufficient_quota", Status: 429, Count: 2},
			row("acct_b", "key_9", -60, "invalid_request_error", 400, 4))
		want := "[acct_a key_1 15:10 insufficient_quota 429 1]" +
			"[acct_a key_1 15:09 insufficient_quota 429 6][acct_a key_1 15:09 model_not_found 404 1]" +
			"[acct_a key_1 15:09 images insufficient_quota 429 2]" +
			"[acct_a key_2 15:09 insufficient_quota 429 7]" +
			"[acct_b key_9 14:09 invalid_request_error 400 4]"
		if got := list(t, s, store.RefusalFilter{}); got != want {
			t.Errorf("rows\n got %s\nwant %s", got, want)
		}
		if got := list(t, s, store.RefusalFilter{AccountID: "acct_a", KeyID: "key_1", Since: at(-time.Minute), Until: at(30 * time.Second), Limit: 1}); got != "[acct_a key_1 15:09 insufficient_quota 429 6]" {
			t.Errorf("filtered: %s", got)
		}
		if got := list(t, s, store.RefusalFilter{AccountID: "acct_c"}); got != "" {
			t.Errorf("another account's rows: %s", got)
		}
	})

	t.Run("BadCountsAddNothing", func(t *testing.T) {
		s := newStore(t)
		for _, c := range []store.RefusalCount{
			row("", "key_1", 0, "x", 400, 1),
			row("acct_a", "key_1", 0, "", 400, 1),
			row("acct_a", "key_1", 0, "x", 400, 0),
		} {
			if err := s.AddRefusals(ctx(t), []store.RefusalCount{row("acct_a", "key_1", 0, "ok", 400, 1), c}); err == nil {
				t.Errorf("AddRefusals(%+v) = nil, want an error", c)
			}
		}
		if got := list(t, s, store.RefusalFilter{}); got != "" {
			t.Errorf("a failed batch left %s", got)
		}
	})

	t.Run("Purge", func(t *testing.T) {
		s := newStore(t)
		for i := range 5 {
			add(t, s, row("acct_a", "key_1", time.Duration(i-3), "r", 429, 1))
		}
		n, err := s.PurgeRefusals(ctx(t), at(-time.Minute), 2)
		if err != nil || n != 2 {
			t.Fatalf("PurgeRefusals = %d, %v; want 2 (the limit)", n, err)
		}
		// Minutes compare by their start: 15:08 is before 15:08:26.
		if n, err = s.PurgeRefusals(ctx(t), at(-time.Minute), 10); err != nil || n != 1 {
			t.Fatalf("second PurgeRefusals = %d, %v; want 1 (the 15:08 row)", n, err)
		}
		if got := list(t, s, store.RefusalFilter{}); got != "[acct_a key_1 15:10 r 429 1][acct_a key_1 15:09 r 429 1]" {
			t.Errorf("left %s", got)
		}
		if _, err := s.PurgeRefusals(ctx(t), at(0), 0); err == nil {
			t.Error("a zero limit was accepted")
		}
	})
}
