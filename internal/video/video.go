// Package video runs asynchronous video generation: tasks that a client
// submits, that live in the store (so they survive restarts and several
// replicas can share them), that a leased poller drives through pending →
// processing → completed | failed, and whose reservation is charged when
// the video is ready and released otherwise.
//
// The Service is what front doors call (submit, read, list, delete, open
// the stored video); the Poller is the background worker (Run(ctx) error)
// that claims due tasks with a lease, polls their upstreams concurrently
// with a bounded pool, stores finished videos, settles, times out and
// purges expired tasks.
package video

import (
	"context"
	"io"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
)

// TTL is how long a task (and its video and links) lives after creation;
// the spec's 24 hours.
const TTL = 24 * time.Hour

// Media keeps finished videos (imagestore's video side has it).
type Media interface {
	// SaveVideo stores the video read from r under a new name and returns
	// it with the stored size and sniffed type. r longer than limit bytes
	// fails with an error wrapping imagestore.ErrTooLarge, content that is
	// not a video (mp4, webm) with imagestore.ErrNotVideo; both store
	// nothing and are final for the task. Other errors are transient.
	SaveVideo(ctx context.Context, r io.Reader, limit int64) (key string, size int64, contentType string, err error)
	// DeleteVideo removes a stored video; a missing one is no error.
	DeleteVideo(ctx context.Context, key string) error
}

// Makers finds the video adapter of a configured provider by name.
type Makers func(provider string) (provider.VideoMaker, bool)

// Store is the part of store.Store the package uses.
type Store interface {
	store.Tasks
}

// CanMove reports whether a task may go from one state to another: only
// forward (pending → processing → completed | failed, or pending straight
// to a final state), never out of a final state; staying is allowed for
// open states (a poll that saw no change).
func CanMove(from, to store.TaskState) bool {
	if !from.Valid() || !to.Valid() || from.Final() {
		return false
	}
	return to.Rank() >= from.Rank()
}
