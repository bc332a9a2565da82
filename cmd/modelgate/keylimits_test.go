package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/store"
)

func TestKeysRateLimits(t *testing.T) {
	c := newCLI(t, "")
	if code, _, stderr := c.run("keys", "create", "--group", "default", "--rpm", "3", "--tpm", "1000", "--concurrency", "2"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	if code, _, stderr := c.run("keys", "create", "--group", "default"); code != 0 {
		t.Fatalf("create plain: %d %s", code, stderr)
	}
	var keys []store.Key
	c.withDB(func(ctx context.Context, st store.Store) {
		var err error
		if keys, err = st.ListKeys(ctx); err != nil || len(keys) != 2 {
			t.Fatalf("keys: %v %v", keys, err)
		}
	})
	if want := (store.KeyLimits{RPM: 3, TPM: 1000, Concurrency: 2}); keys[0].Limits != want || keys[1].Limits != (store.KeyLimits{}) {
		t.Fatalf("limits %+v and %+v, want %+v and none", keys[0].Limits, keys[1].Limits, want)
	}
	code, out, _ := c.run("keys", "list", "--json")
	var list []keyJSON
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 {
		t.Fatalf("list: %d %s", code, out)
	}
	if l := list[0].Limits; l == nil || *l != (keyLimitsJSON{RPM: 3, TPM: 1000, Concurrency: 2}) || list[1].Limits != nil {
		t.Errorf("listed limits:\n%s", out)
	}

	steps := []struct {
		args []string
		code int
		want store.KeyLimits
		msg  string
	}{
		{[]string{"keys", "limits", keys[0].ID, "--rpm", "10"}, 0, store.KeyLimits{RPM: 10}, "rpm 10, tpm 0, concurrency 0"},
		{[]string{"keys", "limits", keys[0].Prefix, "--tpm", "500", "--concurrency", "1"}, 0, store.KeyLimits{TPM: 500, Concurrency: 1}, "tpm 500"},
		{[]string{"keys", "limits", keys[0].ID}, 0, store.KeyLimits{}, "rpm 0, tpm 0, concurrency 0"},
		{[]string{"keys", "limits", keys[0].ID, "--rpm", "-1"}, 2, store.KeyLimits{}, "take a count"},
		{[]string{"keys", "limits", "key_doesnotexist", "--rpm", "1"}, 1, store.KeyLimits{}, "no key matches"},
		{[]string{"keys", "limits"}, 2, store.KeyLimits{}, "usage"},
		{[]string{"keys", "create", "--group", "default", "--tpm", "-5"}, 2, store.KeyLimits{}, "take a count"},
	}
	for _, st := range steps {
		code, out, stderr := c.run(st.args...)
		if code != st.code || !strings.Contains(out+stderr, st.msg) {
			t.Errorf("%v: exit %d, %q %q; want %d, %q", st.args, code, out, stderr, st.code, st.msg)
			continue
		}
		c.withDB(func(ctx context.Context, s store.Store) {
			k, err := s.KeyByID(ctx, keys[0].ID)
			if err != nil || k.Limits != st.want {
				t.Errorf("%v: stored %+v %v, want %+v", st.args, k.Limits, err, st.want)
			}
		})
	}
}
