package video

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// failingMedia refuses to delete one video.
type failingMedia struct {
	*memMedia
	bad string
}

func (m *failingMedia) DeleteVideo(ctx context.Context, key string) error {
	if key == m.bad {
		return errors.New("bucket unreachable")
	}
	return m.memMedia.DeleteVideo(ctx, key)
}

func TestPurge(t *testing.T) {
	ctx := testCtx(t)
	s, c, media := newStore(t), newClock(), newMedia()
	old := t0
	young := t0.Add(2 * time.Hour)
	c.Set(old.Add(TTL + time.Hour)) // old tasks have expired, young ones not

	// finished stores a final task created at created, with a video when
	// completed.
	finished := func(id string, created time.Time, state store.TaskState) store.VideoTask {
		task := newTask(id, created)
		createTasks(t, s, task)
		task.State, task.FinishedAt = state, created.Add(time.Minute)
		if state == store.TaskCompleted {
			key, _, _, err := media.SaveVideo(ctx, smallVideo().Body, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			task.ContentKey, task.ContentType = key, "video/mp4"
		} else {
			task.Error = "failed"
		}
		if err := s.FinishTask(ctx, "", task, nil); err != nil {
			t.Fatal(err)
		}
		return task
	}

	var gone, kept []store.VideoTask
	// More than one batch of expired tasks, both final states.
	for i := range purgeBatch + 50 {
		state := store.TaskCompleted
		if i%3 == 0 {
			state = store.TaskFailed
		}
		gone = append(gone, finished(fmt.Sprintf("video_old%03d", i), old.Add(time.Duration(i)*time.Second), state))
	}
	kept = append(kept,
		finished("video_young_done", young, store.TaskCompleted),
		finished("video_young_failed", young, store.TaskFailed))
	openOld := newTask("video_old_open", old)
	createTasks(t, s, openOld)
	kept = append(kept, openOld)

	p := newPoller(s, &fakeMaker{}, media, c, "a")
	n, err := p.Purge(ctx)
	if err != nil || n != len(gone) {
		t.Fatalf("Purge = (%d, %v), want (%d, nil)", n, err, len(gone))
	}
	for _, task := range gone {
		if _, err := s.TaskByID(ctx, task.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: TaskByID = %v, want ErrNotFound", task.ID, err)
		}
		if task.ContentKey != "" && media.has(task.ContentKey) {
			t.Errorf("%s: video %s kept", task.ID, task.ContentKey)
		}
	}
	for _, task := range kept {
		got := getTask(t, s, task.ID)
		if got.ContentKey != "" && !media.has(got.ContentKey) {
			t.Errorf("%s: video %s deleted", task.ID, got.ContentKey)
		}
	}
	if n, err := p.Purge(ctx); err != nil || n != 0 {
		t.Errorf("second Purge = (%d, %v), want (0, nil)", n, err)
	}
}

// TestPurgeKeepsTaskWhoseVideoStays: a video that cannot be deleted keeps
// its task for the next purge, and Purge reports the error.
func TestPurgeKeepsTaskWhoseVideoStays(t *testing.T) {
	ctx := testCtx(t)
	s, c := newStore(t), newClock()
	media := &failingMedia{memMedia: newMedia()}
	var tasks []store.VideoTask
	for i := range 3 {
		task := newTask(fmt.Sprintf("video_p%d", i), t0)
		createTasks(t, s, task)
		key, _, _, err := media.SaveVideo(ctx, smallVideo().Body, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		task.State, task.FinishedAt, task.ContentKey = store.TaskCompleted, t0, key
		if err := s.FinishTask(ctx, "", task, nil); err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, task)
	}
	media.bad = tasks[1].ContentKey
	c.Set(t0.Add(TTL + time.Second))
	p := newPoller(s, &fakeMaker{}, media, c, "a")
	n, err := p.Purge(ctx)
	if err == nil || n != 2 {
		t.Fatalf("Purge = (%d, %v), want 2 and an error", n, err)
	}
	if got := getTask(t, s, tasks[1].ID); got.ContentKey != media.bad {
		t.Errorf("the task whose video stays is gone")
	}
	media.bad = ""
	if n, err := p.Purge(ctx); err != nil || n != 1 {
		t.Errorf("next Purge = (%d, %v), want (1, nil)", n, err)
	}
}
