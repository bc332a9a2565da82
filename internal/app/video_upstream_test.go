package app_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/mp4"
	"github.com/modelgate/modelgate/internal/store"
)

// fakeSora serves OpenAI's Videos API as documented: POST /v1/videos
// (multipart), GET /v1/videos/{id}, GET /v1/videos/{id}/content; like
// Sora, it has no way to cancel a job. The upstream model picks the
// scenario: "gone" answers 404 for its own job, "huge" serves a 2 GB
// video, "running" stays in progress for ever, anything else a small real
// MP4.
type fakeSora struct {
	*httptest.Server
	mu      sync.Mutex
	created map[string]string // id → the seconds field it was created with
	posts   int
}

func newFakeSora(t *testing.T) *fakeSora {
	f := &fakeSora{created: map[string]string{}}
	var clip bytes.Buffer
	if err := mp4.Write(&clip, mp4.Video{Width: 64, Height: 36, FPS: 2, Seconds: 8,
		Frame: func(int) image.Image { return solid(64, 36) }}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/videos", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		model, seconds := r.FormValue("model"), r.FormValue("seconds")
		f.mu.Lock()
		f.posts++
		id := fmt.Sprintf("video_%s_%d", model, f.posts)
		f.created[id] = seconds
		f.mu.Unlock()
		fmt.Fprintf(w, `{"id":%q,"object":"video","model":%q,"status":"queued","progress":0,"created_at":1,"seconds":%q,"size":%q}`,
			id, model, seconds, r.FormValue("size"))
	})
	mux.HandleFunc("GET /v1/videos/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		f.mu.Lock()
		seconds, ok := f.created[id]
		f.mu.Unlock()
		if !ok || strings.Contains(id, "gone") {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"message":"Video not found","type":"invalid_request_error","code":"not_found"}}`)
			return
		}
		if strings.Contains(id, "running") {
			fmt.Fprintf(w, `{"id":%q,"object":"video","status":"in_progress","progress":40,"created_at":1,"seconds":%q,"size":"720x1280"}`, id, seconds)
			return
		}
		fmt.Fprintf(w, `{"id":%q,"object":"video","status":"completed","progress":100,"created_at":1,"completed_at":2,"seconds":%q,"size":"720x1280"}`, id, seconds)
	})
	mux.HandleFunc("GET /v1/videos/{id}/content", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "video/mp4")
		if !strings.Contains(r.PathValue("id"), "huge") {
			_, _ = w.Write(clip.Bytes())
			return
		}
		w.Header().Set("Content-Length", "2147483648") // 2 GB, streamed until the reader stops
		_, _ = w.Write(clip.Bytes()[:64])
		zeros := make([]byte, 64<<10)
		for sent := int64(64); sent < 2<<30; sent += int64(len(zeros)) {
			if _, err := w.Write(zeros); err != nil {
				return
			}
		}
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// TestVideoSoraUpstream runs tasks through the OpenAI adapter against a
// fake Sora: the spec's 10 s becomes Sora's 8 s (billed 8 s); an upstream
// that loses its own job and one that sends 2 GB both end in a clean
// failure that charges nothing and stores nothing.
func TestVideoSoraUpstream(t *testing.T) {
	sora := newFakeSora(t)
	cfg := testConfig(t, "http://127.0.0.1:1")
	videoConfig(cfg)
	cfg.Video.MaxBytes = 1 << 20
	video, price := "video", config.Amount(money.Unit/10)
	for _, id := range []string{"sora-gone", "sora-huge"} {
		cfg.Models = append(cfg.Models, config.ModelConfig{ID: id, Modality: &video, VideoPerSecond: &price,
			Sizes: []string{"720x1280"}, VideoDurations: []int{4, 8, 12}, VideoDurationMap: map[int]int{5: 4, 10: 8, 15: 12}})
	}
	cfg.Providers = append(cfg.Providers, config.Provider{Name: "sora", Type: "openai", BaseURL: sora.URL + "/v1", APIKey: "sk-vendor",
		Timeout: config.Duration(30 * time.Second), IdleTimeout: config.Duration(10 * time.Second),
		Models: []config.ModelRef{{ID: "sora-2"}, {ID: "sora-gone", Upstream: "gone"}, {ID: "sora-huge", Upstream: "huge"}}})
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test"})
	key := g.createKey("default", false)
	st := g.app.Store()
	acct := accountOf(t, st, key)
	start := balance(t, st, acct)

	done := g.waitSpec(key, g.submitSpec(key, `{"model":"sora-2","prompt":"a fox","duration":10}`).ID, nil)
	if done.Status != "completed" || done.Duration != 10 || done.Seconds != 8 {
		t.Fatalf("sora-2: %+v", done)
	}
	sora.mu.Lock()
	asked := sora.created["video_sora-2_1"]
	sora.mu.Unlock()
	if asked != "8" {
		t.Errorf("Sora was asked for %q seconds, want \"8\"", asked)
	}
	if got := start - balance(t, st, acct); got != 800_000 {
		t.Errorf("charged %v for 8 s at $0.10, want 0.8", got)
	}
	for model, want := range map[string]string{"sora-gone": "lost", "sora-huge": "larger than"} {
		before := balance(t, st, acct)
		task := g.waitSpec(key, g.submitSpec(key, `{"model":"`+model+`","prompt":"a fox","duration":5}`).ID, nil)
		if task.Status != "failed" || !strings.Contains(task.Error, want) {
			t.Errorf("%s: %+v, want failed with %q", model, task, want)
		}
		if a, _ := st.AccountByID(context.Background(), acct); a.Balance != before || a.Held != 0 {
			t.Errorf("%s: charged %v, held %v", model, before-a.Balance, a.Held)
		}
	}
	// A balance that cannot cover the video is refused before the vendor is called.
	poor := g.createKey("default", false)
	if _, err := st.Post(context.Background(), store.LedgerEntry{AccountID: accountOf(t, st, poor), Kind: store.KindAdjustment,
		Amount: -99 * money.Unit, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	sora.mu.Lock()
	posts := sora.posts
	sora.mu.Unlock()
	resp, b := g.post("/v1/videos/generations", "application/json", poor, strings.NewReader(`{"model":"sora-2","prompt":"a fox","duration":15}`))
	sora.mu.Lock()
	called := sora.posts != posts
	sora.mu.Unlock()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "insufficient_quota") || called {
		t.Errorf("$1 for 12 s at $0.10: %d %s (vendor called: %v)", resp.StatusCode, b, called)
	}
	kind, target, _ := cfg.DatabaseKind()
	if kind == "sqlite" {
		entries, _ := os.ReadDir(filepath.Join(filepath.Dir(target), "videos"))
		if len(entries) != 1 {
			names := []string{}
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("videos stored: %q, want only the completed one", names)
		}
	}
}

// solid is a w×h red picture.
func solid(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		copy(img.Pix[i:], []byte{200, 40, 40, 255})
	}
	return img
}

// TestVideoSoraRunningJob: a Sora job cannot be cancelled once accepted,
// and Sora bills it whatever the gateway does. Deleting it while it runs
// is refused with 409 (nothing charged, the hold stays); when it is still
// running at the timeout, the task fails charged price × the seconds
// asked; then it can be deleted. The key pays what the vendor bills.
func TestVideoSoraRunningJob(t *testing.T) {
	sora := newFakeSora(t)
	clock := &fakeClock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	cfg := testConfig(t, "http://127.0.0.1:1")
	videoConfig(cfg)
	video, price := "video", config.Amount(money.Unit/10)
	cfg.Models = append(cfg.Models, config.ModelConfig{ID: "sora-running", Modality: &video, VideoPerSecond: &price,
		Sizes: []string{"720x1280"}, VideoDurations: []int{4, 8, 12}})
	cfg.Providers = append(cfg.Providers, config.Provider{Name: "sora", Type: "openai", BaseURL: sora.URL + "/v1", APIKey: "sk-vendor",
		Timeout: config.Duration(30 * time.Second), IdleTimeout: config.Duration(10 * time.Second),
		Models: []config.ModelRef{{ID: "sora-running", Upstream: "running"}}})
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test", Now: clock.Now})
	key := g.createKey("default", false)
	st := g.app.Store()
	ctx := context.Background()
	acct := accountOf(t, st, key)
	start := balance(t, st, acct)
	c := g.client(key)
	v, err := c.Videos.New(ctx, oai.VideoNewParams{Model: "sora-running", Prompt: "a fox", Seconds: "8"})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Second) // the first polls see it in progress
	_, err = c.Videos.Delete(ctx, v.ID)
	if e := apiError(t, err, http.StatusConflict, "video_in_progress"); !strings.Contains(e.Message, "cannot cancel") {
		t.Errorf("409 message %q", e.Message)
	}
	if a, _ := st.AccountByID(ctx, acct); a.Balance != start || a.Held != 800_000 {
		t.Fatalf("after the refused delete: charged %v, held %v; want 0 and 0.8", start-a.Balance, a.Held)
	}
	clock.Advance(31 * time.Minute)
	done := g.waitSpec(key, v.ID, nil)
	if done.Status != "failed" || !strings.Contains(done.Error, "charged as asked (8 seconds)") {
		t.Fatalf("timed out: %+v", done)
	}
	if a, _ := st.AccountByID(ctx, acct); start-a.Balance != 800_000 || a.Held != 0 {
		t.Fatalf("a timed-out Sora job charged %v (held %v), want 0.8 for 8 s at $0.10", start-a.Balance, a.Held)
	}
	if del, err := c.Videos.Delete(ctx, v.ID); err != nil || !del.Deleted {
		t.Fatalf("delete once failed: %+v %v", del, err)
	}
	if a, _ := st.AccountByID(ctx, acct); start-a.Balance != 800_000 {
		t.Errorf("deleting the failed task changed the charge to %v", start-a.Balance)
	}
	audit(t, st, acct)
}
