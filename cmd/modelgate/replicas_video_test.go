//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// videoLease is the replicas' video.lease: how long the task a killed
// replica was polling waits before another takes it over.
const videoLease = 5 * time.Second

// videoProviders is replica i's video setup: Sora at the fake with the
// replica's own API key, so the fake knows who polls; a poll every 100 ms.
func videoProviders(upstream string) func(i int) string {
	return func(i int) string {
		return fmt.Sprintf(`providers:
  - name: sora
    type: openai
    base_url: %s/v1
    api_key: sk-replica-%d
    models: [sora-2]
video: {poll_min: 100ms, poll_max: 100ms, lease: %s, dir: videos}
`, upstream, i, videoLease)
	}
}

// testReplicaVideoLeases: replica 0 gets stuck checking two video tasks;
// four more are submitted over three replicas, which all claim due tasks,
// and no task is polled by two at once. Replica 0 is killed with SIGKILL in the middle of its
// stuck checks: the others go on polling the other tasks, take the two
// over once their lease ends (not before), and every task completes,
// downloaded and charged once.
func testReplicaVideoLeases(t *testing.T, bin string, b backends) {
	fake := newFakeVideos(t, 30*time.Millisecond, 10)
	c := newCluster(t, bin, b, clusterSpec{replicas: 3, extra: videoProviders(fake.URL)})
	secret, _ := c.newKey("acme", "10")
	submit := func(i int) string {
		var v videoJSON
		if code := videoCall(t, http.MethodPost, c.nodes[i].base+"/v1/videos", secret,
			`{"model":"sora-2","prompt":"a fox","seconds":"4","size":"720x1280"}`, &v); code != http.StatusOK {
			t.Fatalf("submit to replica %d: %d %+v", i, code, v)
		}
		return v.ID
	}

	// Replica 0, alone at first, gets stuck checking two tasks, which run
	// on meanwhile; then the others start and four more tasks come.
	fake.stall("0", 2)
	c.start(0)
	ids := []string{submit(0), submit(0)}
	for deadline := time.Now().Add(5 * time.Second); len(fake.stalledChecks()) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("replica 0 did not check its two tasks within 5s")
		}
	}
	c.start(1, 2)
	for i := range 4 {
		ids = append(ids, submit(i%3))
	}
	time.Sleep(300 * time.Millisecond) // every replica polls some
	c.kill(0)
	killed := time.Now()
	stalled := fake.stalledChecks()
	fake.release()
	for id, at := range stalled {
		if killed.Sub(at) > videoLease-time.Second {
			t.Fatalf("replica 0 was killed %v after its check of %s began, too close to the end of its %v lease for this test",
				killed.Sub(at), id, videoLease)
		}
	}

	for _, id := range ids {
		if v := waitVideo(t, c.nodes[1].base, secret, id, 20*time.Second); v.Status != "completed" {
			t.Errorf("task %s: %+v", id, v)
		}
	}
	jobs, overlaps := fake.snapshot()
	for _, o := range overlaps {
		t.Errorf("two polls of one task at once: %s", o)
	}
	by := map[string]int{}
	for id, j := range jobs {
		if j.downloads != 1 {
			t.Errorf("job %s downloaded %d times, want once", id, j.downloads)
		}
		for k, ch := range j.checks {
			by[ch.replica]++
			if ch.replica == "0" && ch.start.After(killed) {
				t.Errorf("job %s checked by the killed replica", id)
			}
			// The first check after a stalled one waited for its lease.
			if k > 0 && j.checks[k-1].stalled && ch.start.Sub(j.checks[k-1].start) < videoLease-250*time.Millisecond {
				t.Errorf("job %s taken over by replica %s %v after replica 0's check began, within the %v lease",
					id, ch.replica, ch.start.Sub(j.checks[k-1].start), videoLease)
			}
		}
	}
	if len(jobs) != len(ids) {
		t.Errorf("%d upstream jobs for %d tasks", len(jobs), len(ids))
	}
	// The others went on with the tasks that were not stuck meanwhile.
	others := 0
	for id, j := range jobs {
		for _, ch := range j.checks {
			if _, stuck := stalled[id]; !stuck && ch.start.After(killed) && ch.start.Before(killed.Add(videoLease/2)) {
				others++
			}
		}
	}
	if others == 0 {
		t.Error("no other task was checked while the killed replica's tasks waited for their lease")
	}
	for id, at := range stalled {
		var next check
		for k, ch := range jobs[id].checks {
			if ch.stalled && k+1 < len(jobs[id].checks) {
				next = jobs[id].checks[k+1]
			}
		}
		t.Logf("job %s: replica 0's check hung from %s, killed %v later; replica %s took it over %v after it began", id,
			at.Format("15:04:05.000"), killed.Sub(at).Round(time.Millisecond), next.replica, next.start.Sub(at).Round(time.Millisecond))
	}
	t.Logf("status checks by replica: %v (whichever claims a due task first polls it)", by)

	c.stopAll()
	acct, recs := checkLedger(t, c, "acme")
	charged := 0
	for _, r := range recs {
		if r.Cost == 0 {
			continue // a client's GET of a task
		}
		charged++
		if r.Cost != 400_000 || r.Status != http.StatusOK {
			t.Errorf("record %s: status %d, cost %v; want 200 and 0.4 (4 s at 0.10)", r.RequestID, r.Status, r.Cost)
		}
	}
	if charged != len(ids) || acct.Held != 0 {
		t.Errorf("%d charged records for %d tasks; %v still held", charged, len(ids), acct.Held)
	}
}

// videoJSON is the part of OpenAI's video object the test reads.
type videoJSON struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  any    `json:"error"`
}

// videoCall sends a videos request and decodes its answer into v.
func videoCall(t *testing.T, method, url, secret, body string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// waitVideo asks base for task id until it is final or within passes.
func waitVideo(t *testing.T, base, secret, id string, within time.Duration) videoJSON {
	t.Helper()
	var v videoJSON
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		v = videoJSON{}
		if code := videoCall(t, http.MethodGet, base+"/v1/videos/"+id, secret, "", &v); code != http.StatusOK {
			t.Fatalf("task %s: %d", id, code)
		}
		if v.Status == "completed" || v.Status == "failed" {
			return v
		}
	}
	t.Errorf("task %s not final within %v: %+v", id, within, v)
	return v
}
