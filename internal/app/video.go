package app

import (
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/api/openai"
	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/fetch"
	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/video"
)

// newVideos wires asynchronous video generation: the service the handlers
// call and the poller Run starts. Finished videos go to the image store's
// video side (its own directory, or the bucket under "videos/").
func (a *App) newVideos(cfg *config.Config, bill *charge.Billing, media *imagestore.Store,
	fetcher *fetch.Fetcher) *openai.Videos {
	makers := a.liveMakers()
	v := cfg.Video
	a.poller = &video.Poller{Store: a.store, Makers: makers, Media: media, Now: a.now, Log: a.log, Owner: a.instance,
		Workers: v.Workers, MaxBytes: v.MaxBytes, PollMin: time.Duration(v.PollMin), PollMax: time.Duration(v.PollMax),
		Lease: time.Duration(v.Lease)}
	if v.PollMin > 0 && time.Duration(v.PollMin) < time.Second {
		a.poller.Tick = time.Duration(v.PollMin) // a fast schedule (tests, demos) needs claims as fast
	}
	sched := a.poller.Schedule()
	svc := &video.Service{Store: a.store, Makers: makers, Billing: bill, Media: media, Log: a.log, Now: a.now,
		Timeout: time.Duration(v.Timeout), Wake: a.poller.Wake,
		FirstPoll: func(t store.VideoTask) time.Time { return sched.Next(t, t.CreatedAt) }}
	return &openai.Videos{
		Service: svc,
		Models: func(public, upstream string) (catalog.Model, bool) {
			return lookupModel(a.live.Load().cat, public, upstream)
		},
		Links:   videoLinks{Store: media, public: cfg.Images.PublicURL},
		Files:   media,
		Fetcher: fetcher,
	}
}

// videoLinks signs video links with the image store's key, under the
// configured public URL when there is one.
type videoLinks struct {
	*imagestore.Store
	public string
}

func (l videoLinks) PublicBase(requestBase string) string {
	if l.public != "" {
		return strings.TrimRight(l.public, "/")
	}
	return requestBase
}
