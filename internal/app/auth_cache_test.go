package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/store"
)

// With the key cache alone (a TTL of a minute here, on a clock the test
// moves, and no keys watch), a key revoked and an account disabled through
// the store, as the CLI and the console do it, are refused through the
// official SDK once the TTL has passed; the other keys go on working.
// Within the TTL the cached keys still work, which shows the cache is in
// play: past it they are revalidated by the store's keys version, not
// looked up one by one. (A running gateway also watches the version, see
// TestKeysWatchRefusesAtOnce.)
func TestAuthCacheSeesRevocations(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	cfg := testConfig(t, "http://127.0.0.1:1")
	cfg.AuthCacheTTL = config.Duration(time.Minute)
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test", Now: clock.Now, NoKeysWatch: true})
	keys := map[string]string{}
	for _, name := range []string{"kept", "revoked", "disabled"} {
		keys[name] = g.createKey("default", false)
	}
	ctx := context.Background()
	st := g.app.Store()
	ask := func(key string) error { return askDemo(g, key) }
	principal := func(key string) store.Key {
		k, err := st.KeyByHash(ctx, apikey.Hash(key))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}

	steps := []struct {
		name   string
		change func()
		wait   time.Duration
		ok     map[string]bool
	}{
		{name: "first use", ok: map[string]bool{"kept": true, "revoked": true, "disabled": true}},
		{name: "past the TTL, nothing changed", wait: 2 * time.Minute,
			ok: map[string]bool{"kept": true, "revoked": true, "disabled": true}},
		// Each change alone, so each must move the keys version itself.
		{name: "account disabled, within the TTL (cached)", change: func() {
			if err := st.SetAccountDisabled(ctx, principal(keys["disabled"]).AccountID, clock.Now()); err != nil {
				t.Fatal(err)
			}
		}, wait: time.Second, ok: map[string]bool{"kept": true, "revoked": true, "disabled": true}},
		{name: "account disabled, past the TTL", wait: time.Minute, ok: map[string]bool{"kept": true, "revoked": true}},
		{name: "key revoked, within the TTL (cached)", change: func() {
			if _, err := st.RevokeKey(ctx, principal(keys["revoked"]).ID, clock.Now()); err != nil {
				t.Fatal(err)
			}
		}, wait: time.Second, ok: map[string]bool{"kept": true, "revoked": true}},
		{name: "key revoked, past the TTL", wait: time.Minute, ok: map[string]bool{"kept": true}},
		{name: "and later", wait: 2 * time.Minute, ok: map[string]bool{"kept": true}},
	}
	for _, step := range steps {
		if step.change != nil {
			step.change()
		}
		clock.Advance(step.wait)
		for _, name := range []string{"kept", "revoked", "disabled"} {
			err := ask(keys[name])
			if step.ok[name] {
				if err != nil {
					t.Fatalf("%s: key %s: %v", step.name, name, err)
				}
				continue
			}
			apiError(t, err, http.StatusUnauthorized, "invalid_api_key")
		}
	}
}

// TestKeysWatchRefusesAtOnce: with an hour's key cache, a key revoked and
// an account disabled through the store (as the CLI and the console do, or
// another replica) are refused within about a quarter second, since the
// running gateway watches the keys version; the bound checked is a hang
// guard, the delay is logged.
func TestKeysWatchRefusesAtOnce(t *testing.T) {
	cfg := testConfig(t, "http://127.0.0.1:1")
	cfg.AuthCacheTTL = config.Duration(time.Hour)
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test"})
	ctx := context.Background()
	st := g.app.Store()
	ask := func(key string) error { return askDemo(g, key) }
	for _, c := range []struct {
		name   string
		change func(k store.Key) error
	}{
		{"key revoked", func(k store.Key) error { _, err := st.RevokeKey(ctx, k.ID, time.Now()); return err }},
		{"account disabled", func(k store.Key) error { return st.SetAccountDisabled(ctx, k.AccountID, time.Now()) }},
	} {
		key := g.createKey("default", false)
		if err := ask(key); err != nil {
			t.Fatalf("%s: before: %v", c.name, err)
		}
		k, err := st.KeyByHash(ctx, apikey.Hash(key))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.change(k); err != nil {
			t.Fatal(err)
		}
		changed := time.Now()
		for ask(key) == nil {
			if time.Since(changed) > 10*time.Second {
				t.Fatalf("%s: still accepted 10 s later with an hour's key cache", c.name)
			}
			time.Sleep(10 * time.Millisecond)
		}
		apiError(t, ask(key), http.StatusUnauthorized, "invalid_api_key")
		t.Logf("%s: refused %v after the change", c.name, time.Since(changed).Round(time.Millisecond))
	}
}

// askDemo asks the demo model once with key, through the official SDK.
func askDemo(g *gateway, key string) error {
	c := g.client(key)
	_, err := c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
		Model: "demo-chat", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Hello!")}})
	return err
}
