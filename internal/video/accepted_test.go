package video

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
)

// A job the vendor has accepted is billed by the vendor whatever the
// gateway does, unless the vendor confirms a cancel. These tests pin the
// rule for such jobs: DELETE is refused while the job runs, and a timeout
// charges price × the seconds asked.

// refusingMaker is a fakeMaker whose vendor has a cancel call that fails.
type refusingMaker struct {
	startingMaker
	tries int
}

func (m *refusingMaker) CancelVideo(context.Context, string, string) error {
	m.tries++
	return errors.New("upstream: 409 the job is already running")
}

var _ provider.VideoCanceller = (*refusingMaker)(nil)

// TestTimeoutUncancelledChargesAsAsked: at the deadline, a task whose
// vendor cannot cancel it (no cancel call, or one that fails) fails
// charged price × the upstream seconds, its whole hold, once.
func TestTimeoutUncancelledChargesAsAsked(t *testing.T) {
	for name, m := range map[string]provider.VideoMaker{
		"no cancel call": &fakeMaker{},
		"cancel fails":   &refusingMaker{},
	} {
		t.Run(name, func(t *testing.T) {
			s, c, media := newStore(t), newClock(), newMedia()
			running := func(_ context.Context, id string) (provider.VideoJob, error) {
				return job(id, provider.VideoRunning, 40)
			}
			switch m := m.(type) {
			case *fakeMaker:
				m.Status = running
			case *refusingMaker:
				m.Status = running
			}
			p := newPoller(s, m, media, c, "a")
			task := newTask("video_stuck", t0)
			createTasks(t, s, task)
			c.Set(task.Deadline)
			step(t, p)
			got := getTask(t, s, task.ID)
			want := "The video was not finished within 30 minutes and its vendor cannot cancel it; it was charged as asked (8 seconds)."
			if got.State != store.TaskFailed || got.Error != want || got.Cost != task.Held {
				t.Fatalf("task %s %q cost %v, want failed %q cost %v", got.State, got.Error, got.Cost, want, task.Held)
			}
			if rm, ok := m.(*refusingMaker); ok && rm.tries != 1 {
				t.Errorf("%d cancel calls, want 1", rm.tries)
			}
			rec, _ := usageOf(t, s, task.ID)
			if rec.Status != 504 || rec.ErrorCode != CodeTimeout || rec.Cost != task.Held {
				t.Errorf("usage record %+v", rec)
			}
			if a := account(t, s); a.Held != 0 || a.Balance != testBalance-task.Held {
				t.Errorf("account Held %v balance %v, want 0 and %v", a.Held, a.Balance, testBalance-task.Held)
			}
			c.Advance(time.Hour)
			step(t, p)
			if n := len(charges(t, s)); n != 1 {
				t.Errorf("%d charges, want 1", n)
			}
		})
	}
}

// TestDeleteRunningRefused: deleting an open task whose vendor cannot
// cancel it (no cancel call, or one that fails) is refused with
// ErrTaskRunning; the task and its hold stay, and it can be deleted once
// it is final.
func TestDeleteRunningRefused(t *testing.T) {
	for name, m := range map[string]provider.VideoMaker{
		"no cancel call": &startingMaker{},
		"cancel fails":   &refusingMaker{},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			c := newClock()
			st := newStore(t)
			svc := newService(t, st, st, c, m)
			task, err := svc.Submit(ctx, submission(m, 4))
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Delete(ctx, testAccount, task.ID); !errors.Is(err, ErrTaskRunning) {
				t.Fatalf("Delete of a running task: %v, want ErrTaskRunning", err)
			}
			got, err := svc.Get(ctx, testAccount, task.ID)
			if err != nil || !got.Open() {
				t.Fatalf("after the refused delete: %+v %v", got, err)
			}
			if a := account(t, st); a.Held != task.Held || a.Balance != testBalance {
				t.Errorf("after the refused delete: balance %v held %v, want %v held", a.Balance, a.Held, task.Held)
			}
			if _, ok := usageOf(t, st, task.ID); ok {
				t.Error("a refused delete left a usage record")
			}
			// Once the vendor has finished it, the task is charged and can go.
			p := newPoller(st, m, newMedia(), c, "a")
			step(t, p)
			if got := getTask(t, st, task.ID); got.State != store.TaskCompleted {
				t.Fatalf("after the poll: %s", got.State)
			}
			if err := svc.Delete(ctx, testAccount, task.ID); err != nil {
				t.Fatalf("Delete of a completed task: %v", err)
			}
			if a := account(t, st); a.Held != 0 || a.Balance != testBalance-task.Held {
				t.Errorf("after completion: balance %v held %v", a.Balance, a.Held)
			}
		})
	}
}
