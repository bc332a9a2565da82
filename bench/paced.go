package main

// The mock upstream's paced streams, for the many-streams pass: a chat
// completion stream whose content chunks come a gap apart, as a real
// model's do, so that a gateway holds thousands of streams at once.

import (
	"net/http"
	"time"
)

// pacedPath is where the mock serves paced streams, and pacedModel the
// model modelgate routes there (a provider whose base_url ends in /paced/v1).
const (
	pacedPath  = "/paced/v1/chat/completions"
	pacedModel = "bench-paced"
)

// pacing is how a paced stream is spread out: chunks content chunks, the
// first at once and each next one gap after the one before.
type pacing struct {
	chunks int
	gap    time.Duration
}

// events is the number of data events before [DONE] a client that did not
// ask for usage receives: the content chunks and the finish chunk.
func (p pacing) events() int { return p.chunks + 1 }

// length is how long a stream takes from its first chunk to its last.
func (p pacing) length() time.Duration { return time.Duration(max(p.chunks-1, 0)) * p.gap }

// paced answers a chat request with a paced stream (a non-stream request
// is answered at once, as by chat). The finish chunk, the usage chunk when
// asked for, and [DONE] follow the last content chunk at once.
func (u *upstream) paced(p pacing) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, c, ok := u.readChat(w, r)
		if !ok {
			return
		}
		if !req.Stream {
			out := u.appendCompletion(nil, &c)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(out)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		usage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
		var out []byte // a stream's own: it lives across the gaps, when a pooled one would be held idle
		send := func(b []byte) bool {
			if _, err := w.Write(b); err != nil {
				return false
			}
			return rc.Flush() == nil
		}
		timer := time.NewTimer(p.gap)
		defer timer.Stop()
		for i := 0; i < p.chunks; i++ {
			if i > 0 {
				timer.Reset(p.gap)
				select {
				case <-r.Context().Done():
					return
				case <-timer.C:
				}
			}
			out = u.appendChunk(out[:0], &c, i, usage)
			if !send(out) {
				return
			}
		}
		out = u.appendChunk(out[:0], &c, -1, usage)
		if usage {
			out = u.appendUsageChunk(out, &c)
		}
		send(append(out, "data: [DONE]\n\n"...))
	}
}
