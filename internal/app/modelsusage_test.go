package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
)

// Listing and reading models (OpenAI's and Anthropic's shapes) uses no
// model: it leaves no usage record, and no request that succeeded leaves
// one without a model (a list of video tasks neither), while a chat
// completion next to them is recorded as before.
func TestModelRequestsLeaveNoUsage(t *testing.T) {
	g := startGateway(t)
	ctx := context.Background()
	key := g.keys["default"]
	c := g.client(key)
	if page, err := c.Models.List(ctx); err != nil || len(page.Data) == 0 {
		t.Fatalf("models list: %v, %v", page, err)
	}
	if m, err := c.Models.Get(ctx, "demo-chat"); err != nil || m.ID != "demo-chat" {
		t.Fatalf("models get: %v, %v", m, err)
	}
	cc := g.claudeClient(key)
	if page, err := cc.Models.List(ctx, anthropic.ModelListParams{Limit: anthropic.Int(5)}); err != nil || len(page.Data) == 0 {
		t.Fatalf("anthropic models list: %v, %v", page, err)
	}
	if m, err := cc.Models.Get(ctx, "demo-chat", anthropic.ModelGetParams{}); err != nil || m.ID != "demo-chat" {
		t.Fatalf("anthropic models get: %v, %v", m, err)
	}
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/v1/videos", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("videos list: %v, %v", resp, err)
	}
	resp.Body.Close()
	if _, err := c.Chat.Completions.New(ctx, hello("demo-chat")); err != nil {
		t.Fatal(err)
	}
	recs := g.usage()
	chats := 0
	for _, r := range recs {
		switch {
		case r.Endpoint == "models.list" || r.Endpoint == "models.retrieve":
			t.Errorf("a models request left a usage record: %+v", r)
		case r.Model == "" && r.Status < 400:
			t.Errorf("a usage record without a model: %+v", r)
		case r.Endpoint == "chat.completions":
			chats++
		}
	}
	if chats != 1 {
		t.Errorf("%d chat records in %+v, want 1", chats, recs)
	}
}
