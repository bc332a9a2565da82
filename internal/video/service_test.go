package video

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// startingMaker counts StartVideo calls and answers with a queued job, or
// with err.
type startingMaker struct {
	fakeMaker
	starts atomic.Int64
	err    error
}

func (m *startingMaker) StartVideo(context.Context, *provider.VideoRequest) (provider.VideoJob, error) {
	m.starts.Add(1)
	if m.err != nil {
		return provider.VideoJob{}, m.err
	}
	return provider.VideoJob{ID: "up_1", State: provider.VideoQueued}, nil
}

// cancelStarter starts jobs and can cancel them.
type cancelStarter struct {
	startingMaker
	cancelled []string
}

func (m *cancelStarter) CancelVideo(_ context.Context, _, id string) error {
	m.cancelled = append(m.cancelled, id)
	return nil
}

// failingCreate is a store whose CreateTask fails.
type failingCreate struct{ Store }

func (failingCreate) CreateTask(context.Context, store.VideoTask) error {
	return errors.New("disk full")
}

func newService(t *testing.T, st Store, src billing.Source, c *clock, m provider.VideoMaker) *Service {
	t.Helper()
	b := &charge.Billing{
		Prices: func(string, string) (billing.ModelPrice, bool) {
			return billing.ModelPrice{VideoPerSecond: testPrice}, true
		},
		Ratio:    func(string) int64 { return money.PPM },
		Reserver: billing.NewReserver(src, billing.Options{Now: c.Now, Refresh: time.Hour}),
		Tokens:   tokenize.NewSet(),
	}
	return &Service{Store: st, Makers: makers(m), Billing: b, Media: newMedia(), Now: c.Now}
}

func submission(m provider.VideoMaker, seconds int) Submission {
	return Submission{RequestID: "req_1", Payer: billing.Payer{AccountID: testAccount, KeyID: testKey}, Group: "default",
		Provider: "fake", Maker: m, Seconds: seconds, PerSecond: testPrice, Param: "duration",
		Request: provider.VideoRequest{PublicModel: "sora-2", UpstreamModel: "sora-2", Prompt: "a cat", Seconds: seconds, Size: "720x1280"}}
}

// TestSubmit: the reservation moves into the task; a payer who cannot
// cover the video is refused before the vendor is called; a vendor or
// store failure releases the reservation.
func TestSubmit(t *testing.T) {
	ctx := testCtx(t)
	c := newClock()
	st := newStore(t)
	m := &startingMaker{}
	svc := newService(t, st, st, c, m)
	task, err := svc.Submit(ctx, submission(m, 8))
	if err != nil {
		t.Fatal(err)
	}
	if task.Held != 8*testPrice || task.State != store.TaskPending || task.UpstreamID != "up_1" || !ValidID(task.ID) ||
		!task.ExpiresAt.Equal(c.Now().Add(TTL)) || !task.Deadline.Equal(c.Now().Add(DefaultTimeout)) {
		t.Fatalf("task: %+v", task)
	}
	if a := account(t, st); a.Held != 8*testPrice {
		t.Fatalf("held %v, want the task's %v", a.Held, 8*testPrice)
	}
	// The held amount counts once: what is left can be reserved, no more.
	left := testBalance - 8*testPrice
	over := submission(m, int(left/testPrice)+1)
	starts := m.starts.Load()
	_, err = svc.Submit(ctx, over)
	var re *charge.RefusedError
	if !errors.As(err, &re) || re.Param != "duration" || m.starts.Load() != starts {
		t.Fatalf("over the balance: %v (vendor calls %d → %d)", err, starts, m.starts.Load())
	}
	for name, bad := range map[string]func(st store.Store) *Service{
		"vendor refuses": func(st store.Store) *Service {
			return newService(t, st, st, c, &startingMaker{err: errors.New("vendor says no")})
		},
		"store fails": func(st store.Store) *Service { return newService(t, failingCreate{st}, st, c, m) },
	} {
		fresh := newStore(t)
		s := bad(fresh)
		maker, _ := s.Makers("fake")
		if _, err := s.Submit(ctx, submission(maker, 8)); err == nil {
			t.Errorf("%s: no error", name)
		}
		// Nothing stays reserved: the whole balance can still be reserved.
		h, err := s.Billing.Reserver.Reserve(ctx, billing.Payer{AccountID: testAccount, KeyID: testKey}, testBalance)
		if err != nil {
			t.Errorf("%s: the reservation was not released: %v", name, err)
			continue
		}
		h.Release()
		if ts, _ := fresh.ListTasks(ctx, store.TaskPage{AccountID: testAccount, Limit: 10}); len(ts) != 0 {
			t.Errorf("%s: %d tasks stored", name, len(ts))
		}
	}
}

// TestSubmitLoadsImageAfterReserving: the request's image is loaded (a
// download, for an image named by URL) only once the reservation is held,
// and reaches the vendor; a refused payer loads nothing, and a failed load
// releases the reservation without calling the vendor.
func TestSubmitLoadsImageAfterReserving(t *testing.T) {
	ctx := testCtx(t)
	c := newClock()
	st := newStore(t)
	m := &imageMaker{}
	svc := newService(t, st, st, c, m)
	var loads atomic.Int64
	img := &provider.InputImage{Data: []byte("png"), MIMEType: "image/png"}
	load := func(err error) func(context.Context) (*provider.InputImage, error) {
		return func(context.Context) (*provider.InputImage, error) {
			loads.Add(1)
			return img, err
		}
	}

	over := submission(m, int(testBalance/testPrice)+1)
	over.LoadImage = load(nil)
	var re *charge.RefusedError
	if _, err := svc.Submit(ctx, over); !errors.As(err, &re) || loads.Load() != 0 {
		t.Fatalf("over the balance: %v, %d loads", err, loads.Load())
	}

	failing := submission(m, 4)
	failing.LoadImage = load(errors.New("image host down"))
	if _, err := svc.Submit(ctx, failing); err == nil || loads.Load() != 1 || m.starts.Load() != 0 {
		t.Fatalf("failed load: %v, %d loads, %d vendor calls", err, loads.Load(), m.starts.Load())
	}
	h, err := svc.Billing.Reserver.Reserve(ctx, billing.Payer{AccountID: testAccount, KeyID: testKey}, testBalance)
	if err != nil {
		t.Fatalf("the reservation was not released: %v", err)
	}
	h.Release()

	ok := submission(m, 4)
	ok.LoadImage = load(nil)
	if _, err := svc.Submit(ctx, ok); err != nil || loads.Load() != 2 || m.image != img {
		t.Fatalf("submit: %v, %d loads, the vendor got image %v", err, loads.Load(), m.image)
	}
}

// imageMaker is a startingMaker that keeps the image it was sent.
type imageMaker struct {
	startingMaker
	image *provider.InputImage
}

func (m *imageMaker) StartVideo(ctx context.Context, req *provider.VideoRequest) (provider.VideoJob, error) {
	m.image = req.Image
	return m.startingMaker.StartVideo(ctx, req)
}

// TestGetAndDelete: reads are the account's and end at expiry; deleting
// an open task cancels it upstream and charges nothing.
func TestGetAndDelete(t *testing.T) {
	ctx := testCtx(t)
	c := newClock()
	st := newStore(t)
	m := &cancelStarter{}
	svc := newService(t, st, st, c, m)
	task, err := svc.Submit(ctx, submission(m, 4))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ account, id string }{
		{"acct_other", task.ID}, {testAccount, "video_" + strings.Repeat("0", 32)},
		{testAccount, "../../etc/passwd"}, {testAccount, strings.Repeat("a", 10<<10)}, {testAccount, strings.ToUpper(task.ID)},
	} {
		if _, err := svc.Get(ctx, tc.account, tc.id); !errors.Is(err, ErrTaskNotFound) {
			t.Errorf("Get(%s, %.40s): %v, want ErrTaskNotFound", tc.account, tc.id, err)
		}
	}
	if _, err := svc.Get(ctx, testAccount, task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Completed(ctx, task.ID); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("an open task has no video: %v", err)
	}
	if err := svc.Delete(ctx, testAccount, task.ID); err != nil {
		t.Fatal(err)
	}
	if len(m.cancelled) != 1 || m.cancelled[0] != "up_1" {
		t.Errorf("cancelled upstream: %v", m.cancelled)
	}
	if a := account(t, st); a.Held != 0 || a.Balance != testBalance {
		t.Errorf("after delete: balance %v held %v", a.Balance, a.Held)
	}
	if rec, ok := usageOf(t, st, task.ID); !ok || rec.Cost != 0 || rec.ErrorCode != "video_cancelled" {
		t.Errorf("usage record: %+v %v", rec, ok)
	}
	if _, err := svc.Get(ctx, testAccount, task.ID); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("deleted task: %v", err)
	}
	// Expiry: 24 hours after creation a task is gone for its owner too.
	task, _ = svc.Submit(ctx, submission(m, 4))
	c.Advance(TTL)
	if _, err := svc.Get(ctx, testAccount, task.ID); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("expired task: %v", err)
	}
}
