package video

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/sqlstore"
)

// t0 is the fake clock's start.
var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

const (
	testAccount = "acct_video"
	testKey     = "key_video"
	testBalance = 100 * money.Unit
	testPrice   = 100_000 // micro-units per second
)

// clock is a fake clock the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: t0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// testCtx bounds a test with a generous deadline that only guards hangs.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newStore opens a fresh SQLite store with one funded account.
func newStore(t *testing.T) *sqlstore.Store {
	t.Helper()
	ctx := testCtx(t)
	s, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "modelgate.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := s.CreateAccount(ctx, store.Account{ID: testAccount, Name: "video", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Post(ctx, store.LedgerEntry{AccountID: testAccount, Kind: store.KindTopUp, Amount: testBalance, Time: t0}); err != nil {
		t.Fatal(err)
	}
	return s
}

// newTask is an 8-second task created at created, due at once, with a
// 30-minute deadline and its whole price held.
func newTask(id string, created time.Time) store.VideoTask {
	return store.VideoTask{
		ID: id, AccountID: testAccount, KeyID: testKey, RequestID: "req_" + id,
		Model: "sora-2", Provider: "fake", UpstreamModel: "sora-2", UpstreamID: "up_" + id,
		Prompt: "a cat", Size: "1280x720", Seconds: 8, UpstreamSeconds: 8,
		State: store.TaskPending, Price: testPrice, RatioPPM: money.PPM, Held: 8 * testPrice,
		CreatedAt: created, ExpiresAt: created.Add(TTL), Deadline: created.Add(30 * time.Minute),
		NextPollAt: created, UpdatedAt: created,
	}
}

// createTasks stores tasks.
func createTasks(t *testing.T, s store.Tasks, tasks ...store.VideoTask) {
	t.Helper()
	for _, task := range tasks {
		if err := s.CreateTask(testCtx(t), task); err != nil {
			t.Fatalf("CreateTask(%s): %v", task.ID, err)
		}
	}
}

// getTask reads a task back.
func getTask(t *testing.T, s store.Tasks, id string) store.VideoTask {
	t.Helper()
	task, err := s.TaskByID(testCtx(t), id)
	if err != nil {
		t.Fatalf("TaskByID(%s): %v", id, err)
	}
	return task
}

// account reads the test account (Balance, Held).
func account(t *testing.T, s *sqlstore.Store) store.Account {
	t.Helper()
	a, err := s.AccountByID(testCtx(t), testAccount)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// charges lists the ledger's charges of the test account.
func charges(t *testing.T, s *sqlstore.Store) []store.LedgerEntry {
	t.Helper()
	es, err := s.ListLedger(testCtx(t), testAccount)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.LedgerEntry
	for _, e := range es {
		if e.Kind == store.KindCharge {
			out = append(out, e)
		}
	}
	return out
}

// usageOf returns the usage record of a task.
func usageOf(t *testing.T, s *sqlstore.Store, id string) (store.UsageRecord, bool) {
	t.Helper()
	recs, err := s.ListUsage(testCtx(t), store.UsageFilter{AccountID: testAccount})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.RequestID == id {
			return r, true
		}
	}
	return store.UsageRecord{}, false
}

// mp4Head starts every fake video: a box whose type is ftyp.
var mp4Head = []byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2")

// fakeMaker is a scripted upstream. Status answers VideoStatus (nil: the
// job succeeded); Content answers VideoContent (nil: a small mp4).
type fakeMaker struct {
	Status  func(ctx context.Context, id string) (provider.VideoJob, error)
	Content func(ctx context.Context, job provider.VideoJob) (*provider.VideoContent, error)

	statusCalls  atomic.Int64
	contentCalls atomic.Int64
}

func (m *fakeMaker) StartVideo(context.Context, *provider.VideoRequest) (provider.VideoJob, error) {
	return provider.VideoJob{}, errors.New("not used")
}

func (m *fakeMaker) VideoStatus(ctx context.Context, _, id string) (provider.VideoJob, error) {
	m.statusCalls.Add(1)
	if m.Status == nil {
		return provider.VideoJob{ID: id, State: provider.VideoSucceeded, Progress: 100}, nil
	}
	return m.Status(ctx, id)
}

func (m *fakeMaker) VideoContent(ctx context.Context, job provider.VideoJob) (*provider.VideoContent, error) {
	m.contentCalls.Add(1)
	if m.Content == nil {
		return smallVideo(), nil
	}
	return m.Content(ctx, job)
}

// smallVideo is a tiny body the fake media takes for an mp4.
func smallVideo() *provider.VideoContent {
	body := append(append([]byte(nil), mp4Head...), make([]byte, 64)...)
	return &provider.VideoContent{Body: io.NopCloser(bytes.NewReader(body)), Size: int64(len(body)), ContentType: "video/mp4"}
}

// cancellingMaker is a fakeMaker whose vendor can cancel jobs.
type cancellingMaker struct {
	fakeMaker
	mu        sync.Mutex
	cancelled []string
}

func (m *cancellingMaker) CancelVideo(_ context.Context, _, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cancelled = append(m.cancelled, id)
	return nil
}

var (
	_ Media                   = (*imagestore.Store)(nil)
	_ Media                   = (*memMedia)(nil)
	_ provider.VideoMaker     = (*fakeMaker)(nil)
	_ provider.VideoCanceller = (*cancellingMaker)(nil)
)

// makers finds m under the provider name "fake".
func makers(m provider.VideoMaker) Makers {
	return func(name string) (provider.VideoMaker, bool) {
		if name != "fake" {
			return nil, false
		}
		return m, true
	}
}

// job is a status answer.
func job(id string, state provider.VideoState, progress int) (provider.VideoJob, error) {
	return provider.VideoJob{ID: id, State: state, Progress: progress}, nil
}

// memMedia keeps videos in memory and refuses them as the real media
// store does: over the limit (read as a stream, never more than limit+1
// bytes) or not an mp4.
type memMedia struct {
	mu      sync.Mutex
	videos  map[string][]byte
	n       int
	saveErr error // returned once by the next SaveVideo, then cleared
	deleted []string
}

func newMedia() *memMedia { return &memMedia{videos: map[string][]byte{}} }

func (m *memMedia) SaveVideo(_ context.Context, r io.Reader, limit int64) (string, int64, string, error) {
	m.mu.Lock()
	err := m.saveErr
	m.saveErr = nil
	m.mu.Unlock()
	if err != nil {
		return "", 0, "", err
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, limit+1))
	switch {
	case err != nil:
		return "", 0, "", err
	case n > limit:
		return "", 0, "", fmt.Errorf("video of more than %d bytes: %w", limit, imagestore.ErrTooLarge)
	case !bytes.Equal(buf.Bytes()[:min(len(mp4Head), buf.Len())], mp4Head):
		return "", 0, "", imagestore.ErrNotVideo
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	key := fmt.Sprintf("video-%d.mp4", m.n)
	m.videos[key] = buf.Bytes()
	return key, n, "video/mp4", nil
}

func (m *memMedia) DeleteVideo(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.videos, key)
	m.deleted = append(m.deleted, key)
	return nil
}

func (m *memMedia) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.videos)
}

func (m *memMedia) has(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.videos[key]
	return ok
}

// endless is a video body of n bytes made as it is read, never allocated.
type endless struct{ left int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), e.left))
	clear(p[:n])
	e.left -= int64(n)
	return n, nil
}

// bigVideo is an mp4-looking body of exactly n bytes.
func bigVideo(n int64) *provider.VideoContent {
	head := bytes.NewReader(mp4Head)
	return &provider.VideoContent{
		Body: io.NopCloser(io.MultiReader(head, &endless{left: n - int64(len(mp4Head))})),
		Size: -1, ContentType: "video/mp4",
	}
}

// newPoller is a poller on s with the fake clock and quiet logs.
func newPoller(s Store, m provider.VideoMaker, media Media, c *clock, owner string) *Poller {
	return &Poller{Store: s, Makers: makers(m), Media: media, Now: c.Now, Owner: owner}
}

// step runs one Step and fails the test on an error.
func step(t *testing.T, p *Poller) int {
	t.Helper()
	n, err := p.Step(testCtx(t))
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	return n
}

// notifyStore reports every UpdateTask and FinishTask that went through.
type notifyStore struct {
	Store
	done chan string
}

func (s *notifyStore) UpdateTask(ctx context.Context, owner string, t store.VideoTask) error {
	err := s.Store.UpdateTask(ctx, owner, t)
	if err == nil {
		s.done <- t.ID
	}
	return err
}

func (s *notifyStore) FinishTask(ctx context.Context, owner string, t store.VideoTask, rec *store.UsageRecord) error {
	err := s.Store.FinishTask(ctx, owner, t, rec)
	if err == nil {
		s.done <- t.ID
	}
	return err
}

// await receives n values from ch, failing the test if ctx ends first.
func await[T any](t *testing.T, ctx context.Context, ch <-chan T, n int) []T {
	t.Helper()
	out := make([]T, 0, n)
	for len(out) < n {
		select {
		case v := <-ch:
			out = append(out, v)
		case <-ctx.Done():
			t.Fatalf("got %d of %d events before the test's deadline", len(out), n)
		}
	}
	return out
}
