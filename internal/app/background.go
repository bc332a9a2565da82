package app

import (
	"context"
	"time"

	"github.com/modelgate/modelgate/internal/background"
	"github.com/modelgate/modelgate/internal/chain"
	"github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/task"
)

// newBackground wires background Responses requests: the service the
// handlers call and the worker that upkeep runs until shutdown. A settled
// response's size goes to chains, for requests that continue it.
func (a *App) newBackground(cfg *config.Config, bill *charge.Billing, chains *chain.Sizes) *background.Service {
	b := cfg.Background
	svc := &background.Service{Store: a.store, Responders: a.liveResponders(), Billing: bill, Log: a.log, Now: a.now,
		Timeout: time.Duration(b.Timeout), Schedule: task.Backoff{Start: time.Duration(b.PollMin), Ceil: time.Duration(b.PollMax)},
		OnSettled: func(_ context.Context, id string, u provider.Usage) {
			chains.Record(id, u.PromptTokens, u.CompletionTokens)
		}}
	w := &background.Worker{Service: svc, Owner: a.instance}
	if b.PollMin > 0 && time.Duration(b.PollMin) < time.Second {
		w.Tick = time.Duration(b.PollMin) // a fast schedule (tests, demos) needs claims as fast
	}
	svc.Wake = w.Wake
	a.upkeep.more = append(a.upkeep.more, w.Run)
	return svc
}
