package main

// The many-streams load: N streams opened at once (or spread over a ramp),
// each on a connection of its own and read to its end, so that a target
// holds N long streams together. Unlike the closed loop, every stream is
// one sample: its time to first byte, its length, or its error.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// streamsSpec describes one many-streams measurement.
type streamsSpec struct {
	URL    string
	Key    string // sent as a Bearer token
	Body   []byte
	N      int
	Ramp   time.Duration // stream i starts i×Ramp/N after the first; 0 starts all at once
	Events int           // data events each stream must carry before [DONE]
	// Timeout bounds each stream, from its start to its end.
	Timeout time.Duration
}

// streamsResult is what one many-streams measurement saw.
type streamsResult struct {
	Streams     int           `json:"streams"` // read to their end without error
	Errors      int           `json:"errors"`
	FirstErrors []string      `json:"first_errors,omitempty"`
	TTFB50      time.Duration `json:"ttfb_p50_ns"`
	TTFB99      time.Duration `json:"ttfb_p99_ns"`
	TTFBMax     time.Duration `json:"ttfb_max_ns"`
	Len50       time.Duration `json:"length_p50_ns"` // from the request to the stream's end
	Len99       time.Duration `json:"length_p99_ns"`
	AllOpen     time.Duration `json:"all_open_ns"` // from the first request to the last first byte
	Wall        time.Duration `json:"wall_ns"`     // from the first request to the last stream's end
}

// streamsClient returns a client for n concurrent streams: a connection
// each, kept until CloseIdleConnections, never compressed.
func streamsClient(n int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        n,
		MaxIdleConnsPerHost: n,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
}

// streamsLoad runs one many-streams measurement; Open reports, at any time
// during it, how many streams have had their first byte and not ended.
type streamsLoad struct {
	open atomic.Int64
}

// Open is the number of streams open now.
func (l *streamsLoad) Open() int { return int(l.open.Load()) }

// run opens s.N streams and waits for all of them to end.
func (l *streamsLoad) run(ctx context.Context, client *http.Client, s streamsSpec) streamsResult {
	type sample struct {
		ttfb, length time.Duration
		at           time.Time // when its first byte came
		err          error
	}
	samples := make([]sample, s.N)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range s.N {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.Ramp > 0 && !sleepUntil(ctx, start.Add(s.Ramp*time.Duration(i)/time.Duration(s.N))) {
				samples[i].err = ctx.Err()
				return
			}
			t0 := time.Now()
			ttfb, err := l.one(ctx, client, &s, t0)
			samples[i] = sample{ttfb: ttfb, length: time.Since(t0), at: t0.Add(ttfb), err: err}
		}()
	}
	wg.Wait()
	r := streamsResult{Wall: time.Since(start)}
	var ttfb, length []time.Duration
	var last time.Time
	for _, x := range samples {
		if x.err != nil {
			r.Errors++
			if len(r.FirstErrors) < maxErrorTexts {
				r.FirstErrors = append(r.FirstErrors, x.err.Error())
			}
			continue
		}
		r.Streams++
		ttfb, length = append(ttfb, x.ttfb), append(length, x.length)
		if x.at.After(last) {
			last = x.at
		}
	}
	slices.Sort(ttfb)
	slices.Sort(length)
	r.TTFB50, r.TTFB99, r.Len50, r.Len99 = percentile(ttfb, 0.5), percentile(ttfb, 0.99), percentile(length, 0.5), percentile(length, 0.99)
	if len(ttfb) > 0 {
		r.TTFBMax = ttfb[len(ttfb)-1]
		r.AllOpen = last.Sub(start)
	}
	return r
}

// one sends one stream request and reads the stream to its end, checking
// it as the closed loop does; it returns the time from t0 to the first data
// line.
func (l *streamsLoad) one(ctx context.Context, client *http.Client, s *streamsSpec, t0 time.Time) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(s.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+s.Key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, httpError(resp)
	}
	// Chunks are a few hundred bytes; a small buffer keeps the harness's
	// own memory for thousands of streams modest.
	br := bufio.NewReaderSize(&firstRead{r: resp.Body, open: &l.open}, 4<<10)
	ttfb, err := readSSE(br, t0, s.Events)
	l.open.Add(-1) // firstRead counted it open at its first byte
	return ttfb, err
}

// firstRead counts a stream open when its first bytes arrive (each open
// stream is counted once, and uncounted by its reader when it ends; a
// stream that never sent a byte is counted open and closed at its end).
type firstRead struct {
	r       io.Reader
	open    *atomic.Int64
	counted bool
}

func (f *firstRead) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if !f.counted {
		f.counted = true
		f.open.Add(1)
	}
	return n, err
}

// httpError is the error of an answer that is not 200: its status and the
// start of its body.
func httpError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
}
