package main

// The load generator: a fixed number of clients, each sending its next
// request as soon as the previous one has been read to the end (a closed
// loop). Latencies go into per-worker slices that are merged once the run
// is over, and the hot loop reuses the request body, headers and read
// buffers, so the generator costs as little CPU as it can.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// loadSpec describes one closed-loop measurement.
type loadSpec struct {
	URL  string
	Keys []string // sent as Bearer tokens (x-api-key for Messages), each client taking them in turn (none: no key)
	Body []byte
	// Messages says the request speaks Anthropic's Messages API: the key
	// goes in x-api-key with anthropic-version: 2023-06-01, and the answer
	// is a Message or a Messages event stream.
	Messages bool
	Stream   bool
	Events   int // data events a stream must carry before [DONE] (Messages: up to message_stop); 0 accepts any number
	Clients  int
	Warmup   time.Duration
	Duration time.Duration
	// OnWindow, when set, is called as the measured window opens (true)
	// and closes (false); runLoad returns after both calls.
	OnWindow func(open bool)
}

// loadResult is what one measurement saw. Requests, the latencies and RPS
// count the requests that completed inside the measured window; Errors
// counts failures during the warm-up too.
type loadResult struct {
	Requests    int           `json:"requests"`
	Errors      int           `json:"errors"`
	FirstErrors []string      `json:"first_errors,omitempty"`
	RPS         float64       `json:"rps"`
	P50         time.Duration `json:"p50_ns"`
	P99         time.Duration `json:"p99_ns"`
	TTFB50      time.Duration `json:"ttfb_p50_ns"`
	Start       time.Time     `json:"window_start"`
	End         time.Time     `json:"window_end"`
}

// maxErrorTexts is how many error messages a run keeps.
const maxErrorTexts = 5

// newClient returns the one client every worker shares, with an idle pool
// large enough that no worker ever waits for or re-dials a connection.
func newClient(clients int) *http.Client {
	return &http.Client{
		Timeout: time.Minute,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: max(64, 2*clients),
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// worker is one client's state; only its own goroutine touches it.
type worker struct {
	hdr     http.Header
	authKey string   // the header the key goes in: Authorization or X-Api-Key
	auth    []string // its values, one per key ("Bearer " + key for Authorization), sent in turn from next
	next    int
	br      *bufio.Reader
	buf     bytes.Buffer
	lat     []time.Duration
	ttfb    []time.Duration
	errs    int
	msgs    []string
}

// newWorker returns client i's state; clients start at keys spread over
// s.Keys, so that with as many keys as clients each client sends one.
func newWorker(s *loadSpec, i int) *worker {
	authKey, prefix := "Authorization", "Bearer "
	if s.Messages {
		authKey, prefix = "X-Api-Key", ""
	}
	auth := make([]string, len(s.Keys))
	for k, key := range s.Keys {
		auth[k] = prefix + key
	}
	h := http.Header{}
	if len(auth) > 0 {
		h.Set(authKey, auth[0])
	}
	if s.Messages {
		h.Set("Anthropic-Version", anthropicVersion)
	}
	h.Set("Content-Type", "application/json")
	if s.Stream {
		h.Set("Accept", "text/event-stream")
	}
	return &worker{
		hdr:     h,
		authKey: authKey,
		auth:    auth,
		next:    i * len(auth) / max(s.Clients, 1),
		br:      bufio.NewReaderSize(nil, 64<<10),
		lat:     make([]time.Duration, 0, 1<<12),
		ttfb:    make([]time.Duration, 0, 1<<12),
	}
}

// runLoad runs s.Clients workers for s.Warmup+s.Duration and summarises
// the measured window.
func runLoad(ctx context.Context, client *http.Client, s loadSpec) loadResult {
	open := time.Now().Add(s.Warmup)
	end := open.Add(s.Duration)
	windowDone := make(chan struct{})
	go func() {
		defer close(windowDone)
		if s.OnWindow == nil || !sleepUntil(ctx, open) {
			return
		}
		s.OnWindow(true)
		sleepUntil(ctx, end)
		s.OnWindow(false)
	}()

	workers := make([]*worker, s.Clients)
	var wg sync.WaitGroup
	for i := range workers {
		w := newWorker(&s, i)
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx, client, &s, open, end)
		}()
	}
	wg.Wait()
	<-windowDone
	return summarize(workers, open, end)
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func (w *worker) loop(ctx context.Context, client *http.Client, s *loadSpec, open, end time.Time) {
	for ctx.Err() == nil {
		t0 := time.Now()
		if !t0.Before(end) {
			return
		}
		ttfb, err := w.do(ctx, client, s, t0)
		t1 := time.Now()
		if err != nil {
			if ctx.Err() == nil {
				w.fail(err)
				time.Sleep(time.Millisecond) // do not spin on a dead target
			}
			continue
		}
		if !t1.Before(open) && !t1.After(end) {
			w.lat = append(w.lat, t1.Sub(t0))
			w.ttfb = append(w.ttfb, ttfb)
		}
	}
}

func (w *worker) fail(err error) {
	w.errs++
	if len(w.msgs) < maxErrorTexts {
		w.msgs = append(w.msgs, err.Error())
	}
}

// do sends one request and reads the whole response. It returns the time
// to first byte: to the response headers, or for a stream to the first
// data line.
func (w *worker) do(ctx context.Context, client *http.Client, s *loadSpec, t0 time.Time) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(s.Body))
	if err != nil {
		return 0, err
	}
	if len(w.auth) > 1 {
		w.hdr[w.authKey][0] = w.auth[w.next] // the previous request is done with it
		w.next = (w.next + 1) % len(w.auth)
	}
	req.Header = w.hdr
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	headers := time.Since(t0)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	if s.Stream {
		w.br.Reset(resp.Body)
		if s.Messages {
			return readMessagesSSE(w.br, t0, s.Events)
		}
		return readSSE(w.br, t0, s.Events)
	}
	w.buf.Reset()
	if _, err := w.buf.ReadFrom(resp.Body); err != nil {
		return 0, err
	}
	if s.Messages {
		return headers, checkMessage(w.buf.Bytes())
	}
	return headers, checkCompletion(w.buf.Bytes())
}

var (
	choicesField = []byte(`"choices"`)
	dataField    = []byte("data:")
	doneData     = []byte("[DONE]")
)

// checkCompletion is a cheap sanity check of a non-stream response body.
func checkCompletion(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' || !bytes.Contains(b, choicesField) {
		return fmt.Errorf("malformed chat.completion: %.200q", b)
	}
	return nil
}

// readSSE reads an event stream to its end. Every data event must be a
// JSON object, the last one [DONE], and when want > 0 exactly want events
// must come before it. It returns the time from t0 to the first data line.
func readSSE(br *bufio.Reader, t0 time.Time, want int) (time.Duration, error) {
	var ttfb time.Duration
	events, seen, done := 0, false, false
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return ttfb, errors.New("stream: line longer than the read buffer")
		}
		if data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), dataField); ok {
			data = bytes.TrimPrefix(data, []byte{' '})
			if !seen {
				ttfb, seen = time.Since(t0), true
			}
			switch {
			case done:
				return ttfb, fmt.Errorf("stream: data after [DONE]: %.200q", data)
			case bytes.Equal(data, doneData):
				done = true
			case len(data) < 2 || data[0] != '{' || data[len(data)-1] != '}':
				return ttfb, fmt.Errorf("stream: malformed event %d: %.200q", events+1, data)
			default:
				events++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return ttfb, fmt.Errorf("stream: after %d events: %w", events, err)
		}
	}
	if !done {
		return ttfb, fmt.Errorf("stream: ended after %d events without [DONE]", events)
	}
	if want > 0 && events != want {
		return ttfb, fmt.Errorf("stream: %d data events before [DONE], want %d", events, want)
	}
	return ttfb, nil
}

// summarize merges the workers' samples into one result.
func summarize(workers []*worker, open, end time.Time) loadResult {
	var lat, ttfb []time.Duration
	r := loadResult{Start: open, End: end}
	for _, w := range workers {
		lat = append(lat, w.lat...)
		ttfb = append(ttfb, w.ttfb...)
		r.Errors += w.errs
		for _, m := range w.msgs {
			if len(r.FirstErrors) < maxErrorTexts {
				r.FirstErrors = append(r.FirstErrors, m)
			}
		}
	}
	slices.Sort(lat)
	slices.Sort(ttfb)
	r.Requests = len(lat)
	if d := end.Sub(open).Seconds(); d > 0 {
		r.RPS = float64(r.Requests) / d
	}
	r.P50, r.P99 = percentile(lat, 0.50), percentile(lat, 0.99)
	r.TTFB50 = percentile(ttfb, 0.50)
	return r
}

// percentile returns the nearest-rank p-quantile (0 < p <= 1) of sorted
// durations, or 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(n))) - 1
	return sorted[min(max(i, 0), n-1)]
}

// median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none. It does not modify xs.
func median[T ~int64 | ~float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
