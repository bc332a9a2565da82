package provider

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// pipeBody is an upstream event stream the test writes by hand.
func pipeBody(t *testing.T, k *Call) (SSEBody, *io.PipeWriter) {
	t.Helper()
	pr, pw := io.Pipe()
	b := NewSSEBody(k, pr)
	t.Cleanup(func() { _ = pw.Close(); _ = b.Close() })
	return b, pw
}

func send(t *testing.T, w io.Writer, data string) {
	t.Helper()
	go func() { _, _ = io.WriteString(w, "data: "+data+"\n\n") }()
}

// A consumer that holds an event far longer than the idle timeout (a relay
// blocked writing it to a slow client) does not make the upstream look
// idle: the timer runs only while the reader waits for upstream bytes.
func TestStreamIdleTimerPausedWhileConsumerHoldsEvent(t *testing.T) {
	const idle = 50 * time.Millisecond
	k := StartCall(context.Background(), time.Minute, idle)
	b, pw := pipeBody(t, k)
	send(t, pw, "one")
	if ev, err := b.R.Next(); err != nil || string(ev.Data) != "one" {
		t.Fatalf("first event: %q, %v", ev.Data, err)
	}
	time.Sleep(10 * idle) // the consumer holds the event
	if err := context.Cause(k.Ctx); err != nil {
		t.Fatalf("the exchange ended while the consumer held an event: %v", err)
	}
	send(t, pw, "two")
	if ev, err := b.R.Next(); err != nil || string(ev.Data) != "two" {
		t.Fatalf("second event after a long hold: %q, %v (cause %v)", ev.Data, err, context.Cause(k.Ctx))
	}
}

// An upstream that says nothing while the consumer waits for it still ends
// the exchange with ErrIdleTimeout, and a read in progress is cut short.
func TestStreamIdleTimerFiresWhileWaitingUpstream(t *testing.T) {
	const idle = 50 * time.Millisecond
	k := StartCall(context.Background(), time.Minute, idle)
	pr, pw := io.Pipe()
	defer pw.Close()
	// The body closes when the exchange ends, as an HTTP body does when
	// its request's context is cancelled.
	go func() { <-k.Ctx.Done(); _ = pw.CloseWithError(context.Cause(k.Ctx)) }()
	b := NewSSEBody(k, pr)
	defer b.Close()
	send(t, pw, "one")
	if _, err := b.R.Next(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := b.R.Next(); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(context.Cause(k.Ctx), ErrIdleTimeout) {
			t.Fatalf("read ended with %v, cause %v; want the idle timeout", err, context.Cause(k.Ctx))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a silent upstream was not ended by the idle timeout")
	}
}

// Time between the reads of a stream does not add up: many short waits
// for the upstream, each under the idle timeout, separated by long holds,
// never fire it.
func TestStreamIdleTimerRestartsOnEachRead(t *testing.T) {
	const idle = 80 * time.Millisecond
	k := StartCall(context.Background(), time.Minute, idle)
	b, pw := pipeBody(t, k)
	for i := 0; i < 5; i++ {
		send(t, pw, "x")
		if _, err := b.R.Next(); err != nil {
			t.Fatalf("event %d: %v (cause %v)", i, err, context.Cause(k.Ctx))
		}
		time.Sleep(idle) // held as long as the timeout each time
	}
	if err := context.Cause(k.Ctx); err != nil {
		t.Fatalf("cause %v", err)
	}
}

// The whole-exchange timeout still counts everything, holds included.
func TestStreamTotalTimeoutCountsHolds(t *testing.T) {
	k := StartCall(context.Background(), 50*time.Millisecond, time.Minute)
	b, pw := pipeBody(t, k)
	send(t, pw, "one")
	if _, err := b.R.Next(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-k.Ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the total timeout did not fire")
	}
	if !errors.Is(context.Cause(k.Ctx), ErrTotalTimeout) {
		t.Fatalf("cause %v, want the total timeout", context.Cause(k.Ctx))
	}
}

// Non-stream bodies keep the plain idle reader: it only restarts the timer
// when bytes arrive, so the wait for response headers stays bounded.
func TestIdleTimerBeforeHeaders(t *testing.T) {
	k := StartCall(context.Background(), time.Minute, 30*time.Millisecond)
	defer k.Release()
	select {
	case <-k.Ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the idle timer did not bound the wait for headers")
	}
	if !errors.Is(context.Cause(k.Ctx), ErrIdleTimeout) {
		t.Fatalf("cause %v", context.Cause(k.Ctx))
	}
}
