package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// fakeClock is a clock tests move by hand, for the 24-hour expiry and
// the task timeout.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// videoConfig makes video tasks quick: the demo finishes in 150 ms and is
// polled every 20 ms. It adds "priced-video", the demo's landscape model
// at $0.10 a second, and a group without video models.
func videoConfig(cfg *config.Config) {
	cfg.Video.DemoDelay = config.Duration(150 * time.Millisecond)
	cfg.Video.PollMin = config.Duration(20 * time.Millisecond)
	cfg.Video.PollMax = config.Duration(40 * time.Millisecond)
	video, perSecond := "video", config.Amount(money.Unit/10)
	cfg.Models = append(cfg.Models, config.ModelConfig{ID: "priced-video", Modality: &video, VideoPerSecond: &perSecond,
		Sizes: []string{"1280x720"}, VideoDurations: []int{4, 8, 12}, VideoDurationMap: map[int]int{5: 4, 10: 8, 15: 12}})
	cfg.Providers = append(cfg.Providers, config.Provider{Name: "demo-priced", Type: "demo",
		Models: []config.ModelRef{{ID: "priced-video", Upstream: "demo-video-landscape"}}})
	cfg.Groups["chat-only"] = config.Group{Models: []string{"gpt-4o-mini"}}
}

// startVideoGateway is startGateway with videoConfig and, when clock is
// not nil, the gateway's clock.
func startVideoGateway(t *testing.T, clock *fakeClock, mutate ...func(*config.Config)) *gateway {
	t.Helper()
	if clock == nil {
		g := startGateway(t, append([]func(*config.Config){videoConfig}, mutate...)...)
		g.keys["chat-only"] = g.createKey("chat-only", false)
		return g
	}
	cfg := testConfig(t, "http://127.0.0.1:1")
	videoConfig(cfg)
	for _, m := range mutate {
		m(cfg)
	}
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test", Now: clock.Now})
	g.keys["default"] = g.createKey("default", false)
	return g
}

// getJSON sends an authenticated GET and decodes the answer into v.
func (g *gateway) getJSON(path, key string, v any) int {
	g.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.URL+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			g.t.Fatalf("GET %s: %d %s: %v", path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

type specTask struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Status    string `json:"status"`
	CreatedAt int64  `json:"created_at"`
	Duration  int    `json:"duration"`
	Seconds   int    `json:"seconds"`
	Progress  int    `json:"progress"`
	VideoURL  string `json:"video_url"`
	Error     string `json:"error"`
	ExpiresAt int64  `json:"expires_at"`
}

// submitSpec posts to /v1/videos/generations and returns the task.
func (g *gateway) submitSpec(key, body string) specTask {
	g.t.Helper()
	resp, b := g.post("/v1/videos/generations", "application/json", key, strings.NewReader(body))
	if resp.StatusCode != http.StatusOK {
		g.t.Fatalf("submit: %d %s", resp.StatusCode, b)
	}
	var task specTask
	if err := json.Unmarshal(b, &task); err != nil {
		g.t.Fatal(err)
	}
	return task
}

// waitSpec polls a task until it is final, stepping clock (when set) so
// the demo and the poller see time pass.
func (g *gateway) waitSpec(key, id string, clock *fakeClock) specTask {
	g.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var task specTask
		if code := g.getJSON("/v1/videos/generations/"+id, key, &task); code != http.StatusOK {
			g.t.Fatalf("poll: %d", code)
		}
		if task.Status == "completed" || task.Status == "failed" {
			return task
		}
		if clock != nil {
			clock.Advance(time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.t.Fatalf("task %s did not finish", id)
	return specTask{}
}

// TestVideoSDKWorkflow drives OpenAI's Videos API with the official
// client: create, poll, download, list, delete.
func TestVideoSDKWorkflow(t *testing.T) {
	g := startVideoGateway(t, nil)
	ctx := context.Background()
	c := g.client(g.keys["default"])
	v, err := c.Videos.New(ctx, oai.VideoNewParams{Model: "demo-video-portrait", Prompt: "a fox in the snow", Seconds: "5"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != oai.VideoStatusQueued || v.Seconds != "5" || v.Size != "720x1280" || v.Object != "video" || v.ExpiresAt-v.CreatedAt != 86400 {
		t.Fatalf("created: %+v", v)
	}
	deadline := time.Now().Add(20 * time.Second)
	seen := map[oai.VideoStatus]bool{}
	for v.Status != oai.VideoStatusCompleted && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if v, err = c.Videos.Get(ctx, v.ID); err != nil {
			t.Fatal(err)
		}
		seen[v.Status] = true
		if v.Status == oai.VideoStatusFailed {
			t.Fatalf("failed: %+v", v.Error)
		}
	}
	if v.Status != oai.VideoStatusCompleted || v.Progress != 100 || v.CompletedAt == 0 {
		t.Fatalf("final: %+v", v)
	}
	res, err := c.Videos.DownloadContent(ctx, v.ID, oai.VideoDownloadContentParams{})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.Header.Get("Content-Type") != "video/mp4" || len(body) < 1000 || string(body[4:8]) != "ftyp" {
		t.Fatalf("content: %s, %d bytes", res.Header.Get("Content-Type"), len(body))
	}
	page, err := c.Videos.List(ctx, oai.VideoListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != v.ID || page.HasMore {
		t.Fatalf("list: %+v, %v", page, err)
	}
	del, err := c.Videos.Delete(ctx, v.ID)
	if err != nil || !del.Deleted || del.ID != v.ID {
		t.Fatalf("delete: %+v, %v", del, err)
	}
	_, err = c.Videos.Get(ctx, v.ID)
	apiError(t, err, http.StatusNotFound, "task_not_found")
	// Another account's key sees nothing of it either.
	other := g.client(g.keys["basic"])
	_, err = other.Videos.Get(ctx, page.Data[0].ID)
	apiError(t, err, http.StatusNotFound, "task_not_found")
}

// TestVideoSDKInputReference sends a first frame as a multipart upload.
func TestVideoSDKInputReference(t *testing.T) {
	g := startVideoGateway(t, nil)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	c := g.client(g.keys["default"])
	v, err := c.Videos.New(context.Background(), oai.VideoNewParams{Model: "demo-video-landscape",
		Prompt: "waves", InputReference: oai.VideoNewParamsInputReferenceUnion{OfFile: oai.File(bytes.NewReader(png), "frame.png", "image/png")}})
	if err != nil || v.Seconds != "5" || v.Size != "1280x720" {
		t.Fatalf("%+v, %v", v, err)
	}
	_, err = c.Videos.New(context.Background(), oai.VideoNewParams{Model: "demo-video-landscape",
		Prompt: "waves", InputReference: oai.VideoNewParamsInputReferenceUnion{OfFile: oai.File(strings.NewReader("not an image"), "x.txt", "text/plain")}})
	apiError(t, err, http.StatusBadRequest, "invalid_request_error")
}

// TestVideoSpecWorkflow follows the spec's workflow with plain HTTP:
// submit, poll, download from video_url without a key, seek with Range,
// and the signed link's refusals.
func TestVideoSpecWorkflow(t *testing.T) {
	g := startVideoGateway(t, nil)
	key := g.keys["default"]
	task := g.submitSpec(key, `{"model":"demo-video-landscape","prompt":"a red fox","duration":10,"async":true}`)
	if task.Status != "pending" || task.Object != "video.task" || task.Duration != 10 || !strings.HasPrefix(task.ID, "video_") {
		t.Fatalf("submitted: %+v", task)
	}
	done := g.waitSpec(key, task.ID, nil)
	if done.Status != "completed" || done.VideoURL == "" || done.Progress != 100 || done.ExpiresAt != task.CreatedAt+86400 {
		t.Fatalf("done: %+v", done)
	}
	resp, err := http.Get(done.VideoURL)
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "video/mp4" || string(whole[4:8]) != "ftyp" {
		t.Fatalf("download: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	req, _ := http.NewRequest(http.MethodGet, done.VideoURL, nil)
	req.Header.Set("Range", "bytes=10-19")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	part, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, whole[10:20]) {
		t.Fatalf("range: %d %q", resp.StatusCode, part)
	}
	head, err := http.Head(done.VideoURL)
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()
	if head.StatusCode != http.StatusOK || head.ContentLength != int64(len(whole)) {
		t.Fatalf("HEAD: %d, length %d of %d", head.StatusCode, head.ContentLength, len(whole))
	}
	other := g.submitSpec(key, `{"model":"demo-video-portrait","prompt":"a cat"}`)
	g.waitSpec(key, other.ID, nil)
	for name, u := range map[string]string{
		"tampered signature": strings.Replace(done.VideoURL, "sig=", "sig=A", 1),
		"tampered expiry":    strings.Replace(done.VideoURL, "exp=", "exp=9", 1),
		"no signature":       strings.Split(done.VideoURL, "?")[0],
		"another task":       strings.Replace(done.VideoURL, task.ID, other.ID, 1),
	} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), `"code":"forbidden"`) {
			t.Errorf("%s: %d %s", name, resp.StatusCode, b)
		}
	}
}

// TestVideoBilling charges a priced video exactly price × seconds made,
// once, when it completes; refuses what the balance cannot cover without
// calling the upstream; and charges nothing for a failure.
func TestVideoBilling(t *testing.T) {
	g := startVideoGateway(t, nil)
	key := g.keys["default"]
	st := g.app.Store()
	ctx := context.Background()
	acct := accountOf(t, st, key)
	before := balance(t, st, acct)
	task := g.submitSpec(key, `{"model":"priced-video","prompt":"a fox","duration":5}`)
	if task.Duration != 5 || task.Seconds != 4 {
		t.Fatalf("5 s maps to 4 s: %+v", task)
	}
	held, err := st.AccountByID(ctx, acct)
	if err != nil || held.Held != 400_000 {
		t.Fatalf("held while open: %v, %v", held.Held, err)
	}
	if g.waitSpec(key, task.ID, nil).Status != "completed" {
		t.Fatal("not completed")
	}
	after, _ := st.AccountByID(ctx, acct)
	if before-after.Balance != 400_000 || after.Held != 0 {
		t.Fatalf("charged %v (held %v), want 0.4 for 4 s at $0.10", before-after.Balance, after.Held)
	}
	failed := g.waitSpec(key, g.submitSpec(key, `{"model":"priced-video","prompt":"[fail] a fox","duration":10}`).ID, nil)
	if failed.Status != "failed" || failed.Error == "" {
		t.Fatalf("failed task: %+v", failed)
	}
	if end, _ := st.AccountByID(ctx, acct); end.Balance != after.Balance || end.Held != 0 {
		t.Fatalf("a failed video cost %v (held %v)", after.Balance-end.Balance, end.Held)
	}
	// A balance that cannot cover 12 s ($1.20) is refused before any upstream call.
	poor := g.createKey("default", false)
	pacct := accountOf(t, st, poor)
	if _, err := st.Post(ctx, store.LedgerEntry{AccountID: pacct, Kind: store.KindAdjustment, Amount: -99 * money.Unit, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	resp, b := g.post("/v1/videos/generations", "application/json", poor, strings.NewReader(`{"model":"priced-video","prompt":"x","duration":15}`))
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "insufficient_quota") {
		t.Fatalf("poor: %d %s", resp.StatusCode, b)
	}
	if ts, _ := st.ListTasks(ctx, store.TaskPage{AccountID: pacct, Limit: 10}); len(ts) != 0 {
		t.Fatalf("a refused submission left %d tasks", len(ts))
	}
	recs := g.usage()
	var charged money.Micros
	for _, r := range recs {
		if r.RequestID == task.ID && r.Endpoint == "videos" {
			charged = r.Cost
		}
	}
	if charged != 400_000 {
		t.Errorf("usage record of the task charged %v", charged)
	}
	audit(t, st, acct)
}

// TestVideoTimeoutAndExpiry: a task that never finishes fails at the
// timeout charged as asked (the demo vendor cannot cancel it); 24 hours
// after creation a task is gone.
func TestVideoTimeoutAndExpiry(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	g := startVideoGateway(t, clock)
	key := g.keys["default"]
	st := g.app.Store()
	acct := accountOf(t, st, key)
	before := balance(t, st, acct)
	task := g.submitSpec(key, `{"model":"priced-video","prompt":"[never] a fox","duration":5}`)
	clock.Advance(31 * time.Minute)
	done := g.waitSpec(key, task.ID, nil)
	if done.Status != "failed" || !strings.Contains(done.Error, "not finished within 30 minutes") {
		t.Fatalf("timed out: %+v", done)
	}
	if a, _ := st.AccountByID(context.Background(), acct); before-a.Balance != 400_000 || a.Held != 0 {
		t.Fatalf("a timed-out video cost %v (held %v), want 0.4 (4 s asked at $0.10)", before-a.Balance, a.Held)
	}
	clock.Advance(24 * time.Hour)
	if code := g.getJSON("/v1/videos/generations/"+task.ID, key, nil); code != http.StatusNotFound {
		t.Fatalf("expired task: %d", code)
	}
}

// TestVideoRestart stops the gateway while a task is processing; a new
// process on the same database finishes it.
func TestVideoRestart(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	cfg := testConfig(t, "http://127.0.0.1:1")
	videoConfig(cfg)
	cfg.Video.DemoDelay = config.Duration(10 * time.Second)
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test", Now: clock.Now})
	key := g.createKey("default", false)
	task := g.submitSpec(key, `{"model":"priced-video","prompt":"a fox","duration":5}`)
	clock.Advance(5 * time.Second)
	for i := 0; i < 500; i++ {
		var s specTask
		g.getJSON("/v1/videos/generations/"+task.ID, key, &s)
		if s.Status == "processing" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	_ = g.app.Close()
	g2 := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test", Now: clock.Now})
	clock.Advance(15 * time.Minute) // past the dead process's lease, past the demo's delay
	if done := g2.waitSpec(key, task.ID, nil); done.Status != "completed" {
		t.Fatalf("after restart: %+v", done)
	}
	a, _ := g2.app.Store().AccountByID(context.Background(), accountOf(t, g2.app.Store(), key))
	if a.Held != 0 || a.Balance != 100*money.Unit-400_000 {
		t.Fatalf("after restart: balance %v held %v", a.Balance, a.Held)
	}
}

// accountOf finds the account of a key's secret.
func accountOf(t *testing.T, st store.Store, secret string) string {
	t.Helper()
	keys, err := st.ListKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.HasPrefix(secret, k.Prefix) {
			return k.AccountID
		}
	}
	t.Fatal("no key")
	return ""
}

func balance(t *testing.T, st store.Store, acct string) money.Micros {
	t.Helper()
	a, err := st.AccountByID(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance
}
