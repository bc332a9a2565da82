//go:build unix

package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/mp4"
)

// fakeVideos is OpenAI's Videos API (Sora) as a fake that watches its
// pollers: every status check is recorded with the replica that made it
// (told apart by their API keys, sk-replica-N) and its start and end, and
// a check that arrives while another check of the same job still runs is
// an overlap. A job completes after done checks; a check takes hold. A
// replica can be stalled on the first jobs (see stall).
type fakeVideos struct {
	*httptest.Server
	hold time.Duration
	done int
	clip []byte

	mu       sync.Mutex
	jobs     map[string]*fakeJob
	order    []string // job ids as created
	stalled  string   // the replica whose checks of stuck jobs hang; "" none
	stuck    int      // how many of the first jobs are stuck (see stall)
	released bool
	overlaps []string
}

// fakeJob is one upstream video job and what its pollers did.
type fakeJob struct {
	stuck     bool
	checks    []check
	running   int // checks in flight
	downloads int
}

// check is one status check of a job.
type check struct {
	replica    string
	start, end time.Time // end zero while it runs
	stalled    bool
}

func newFakeVideos(t *testing.T, hold time.Duration, done int) *fakeVideos {
	var clip bytes.Buffer
	frame := image.NewRGBA(image.Rect(0, 0, 64, 36))
	for i := range 64 * 36 {
		frame.Set(i%64, i/64, color.RGBA{R: 200, G: 40, B: 40, A: 255})
	}
	if err := mp4.Write(&clip, mp4.Video{Width: 64, Height: 36, FPS: 2, Seconds: 4,
		Frame: func(int) image.Image { return frame }}); err != nil {
		t.Fatal(err)
	}
	f := &fakeVideos{hold: hold, done: done, clip: clip.Bytes(), jobs: map[string]*fakeJob{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/videos", f.create)
	mux.HandleFunc("GET /v1/videos/{id}", f.status)
	mux.HandleFunc("GET /v1/videos/{id}/content", f.content)
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// replicaOf names the replica that sent r, from its API key.
func replicaOf(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer sk-replica-")
}

func (f *fakeVideos) create(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	id := fmt.Sprintf("video_fake_%d", len(f.order)+1)
	f.jobs[id] = &fakeJob{stuck: len(f.order) < f.stuck}
	f.order = append(f.order, id)
	f.mu.Unlock()
	fmt.Fprintf(w, `{"id":%q,"object":"video","model":%q,"status":"queued","progress":0,"created_at":1,"seconds":%q,"size":%q}`,
		id, r.FormValue("model"), r.FormValue("seconds"), r.FormValue("size"))
}

func (f *fakeVideos) status(w http.ResponseWriter, r *http.Request) {
	id, replica := r.PathValue("id"), replicaOf(r)
	f.mu.Lock()
	j, ok := f.jobs[id]
	if !ok {
		f.mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":{"message":"Video not found","type":"invalid_request_error","code":"not_found"}}`)
		return
	}
	if j.running > 0 {
		last := j.checks[len(j.checks)-1]
		f.overlaps = append(f.overlaps, fmt.Sprintf("%s: replica %s checked it while replica %s's check (from %s) ran",
			id, replica, last.replica, last.start.Format("15:04:05.000")))
	}
	j.running++
	stall := replica == f.stalled && j.stuck && !f.released
	j.checks = append(j.checks, check{replica: replica, start: time.Now(), stalled: stall})
	n := len(j.checks) - 1
	f.mu.Unlock()

	if stall {
		<-r.Context().Done() // until the replica goes away
	} else {
		select {
		case <-time.After(f.hold):
		case <-r.Context().Done():
		}
	}

	f.mu.Lock()
	j.running--
	j.checks[n].end = time.Now()
	answered := 0
	for _, c := range j.checks {
		if !c.stalled {
			answered++
		}
	}
	f.mu.Unlock()
	if answered >= f.done && (!j.stuck || f.released) {
		fmt.Fprintf(w, `{"id":%q,"object":"video","status":"completed","progress":100,"created_at":1,"completed_at":2,"seconds":"4","size":"720x1280"}`, id)
		return
	}
	fmt.Fprintf(w, `{"id":%q,"object":"video","status":"in_progress","progress":%d,"created_at":1,"seconds":"4","size":"720x1280"}`,
		id, 100*answered/f.done)
}

func (f *fakeVideos) content(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if j, ok := f.jobs[r.PathValue("id")]; ok {
		j.downloads++
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "video/mp4")
	_, _ = w.Write(f.clip)
}

// stall makes the first n jobs stuck: replica's status checks of them
// hang until it goes away, and they do not complete before release.
func (f *fakeVideos) stall(replica string, n int) {
	f.mu.Lock()
	f.stalled, f.stuck = replica, n
	f.mu.Unlock()
}

// release lets the stuck jobs complete.
func (f *fakeVideos) release() {
	f.mu.Lock()
	f.released = true
	f.mu.Unlock()
}

// stalledChecks returns, by job, the start of each stalled check that
// has begun.
func (f *fakeVideos) stalledChecks() map[string]time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]time.Time{}
	for id, j := range f.jobs {
		for _, c := range j.checks {
			if c.stalled {
				out[id] = c.start
			}
		}
	}
	return out
}

// snapshot is a copy of the jobs and the overlaps seen.
func (f *fakeVideos) snapshot() (map[string]fakeJob, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	jobs := make(map[string]fakeJob, len(f.jobs))
	for id, j := range f.jobs {
		c := *j
		c.checks = append([]check(nil), j.checks...)
		jobs[id] = c
	}
	return jobs, append([]string(nil), f.overlaps...)
}
