package video

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelgate/modelgate/internal/store"
)

// purgeBatch is how many expired tasks one store call returns.
const purgeBatch = 100

// Purge deletes the final tasks created more than TTL ago, each after its
// stored video, in batches, and returns how many it deleted. Open tasks are
// never purged (their deadline fails them first). A video that cannot be
// deleted keeps its task, so the next purge tries again; Purge then stops
// with the error rather than spin on the same batch.
func (p *Poller) Purge(ctx context.Context) (int, error) {
	if err := p.setup(); err != nil {
		return 0, err
	}
	n := 0
	for {
		tasks, err := p.Store.ExpiredTasks(ctx, p.Now().Add(-TTL), purgeBatch)
		if err != nil {
			return n, fmt.Errorf("video: expired tasks: %w", err)
		}
		var errs []error
		for _, t := range tasks {
			if t.ContentKey != "" {
				if err := p.Media.DeleteVideo(ctx, t.ContentKey); err != nil {
					errs = append(errs, fmt.Errorf("video: delete the video of %s: %w", t.ID, err))
					continue
				}
			}
			switch err := p.Store.DeleteTask(ctx, t.ID); {
			case err == nil:
				n++
			case errors.Is(err, store.ErrNotFound): // another replica purged it
			default:
				errs = append(errs, fmt.Errorf("video: delete task %s: %w", t.ID, err))
			}
		}
		if len(errs) > 0 {
			return n, errors.Join(errs...)
		}
		if len(tasks) < purgeBatch {
			return n, nil
		}
	}
}
