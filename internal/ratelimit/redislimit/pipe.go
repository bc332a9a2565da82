package redislimit

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxFlushers is how many pipelines a pipe keeps in flight at once.
const maxFlushers = 2

// pipe sends the script calls of many goroutines to Redis together: a
// call joins a queue, and a flusher sends everything queued as one
// pipeline, then the next lot, until the queue is empty. Under load one
// write and one read carry several calls (about 2.5 at the benchmark's 32
// clients, 10 in BenchmarkAdmit), which saves Redis much of its per-call
// cost (a system call each way and an event-loop turn: about 7 µs of its
// CPU a call, more than a short script's own work) and the gateway as
// much; a lone call goes out at once, as it would alone. A flusher is
// a goroutine that exits when the queue is empty, so a pipe needs no
// closing.
type pipe struct {
	c       redis.UniversalClient
	timeout time.Duration

	mu       sync.Mutex
	queue    []*call
	flushers int
}

// call is one script call waiting in a pipe.
type call struct {
	script *redis.Script
	keys   []string
	args   []any
	queued time.Time

	v    []int64
	err  error
	done chan struct{}
}

var callPool = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

// run calls script with keys and args through the pipe and returns its
// answer as integers. A call that waited longer than the timeout to be
// sent fails without being sent.
func (p *pipe) run(script *redis.Script, keys []string, args ...any) ([]int64, error) {
	c := callPool.Get().(*call)
	c.script, c.keys, c.args, c.queued = script, keys, args, time.Now()
	p.mu.Lock()
	p.queue = append(p.queue, c)
	start := p.flushers < maxFlushers
	if start {
		p.flushers++
	}
	p.mu.Unlock()
	if start {
		go p.flush()
	}
	<-c.done
	v, err := c.v, c.err
	*c = call{done: c.done}
	callPool.Put(c)
	return v, err
}

// flush sends the queue's calls, a lot at a time, until it is empty.
func (p *pipe) flush() {
	for {
		p.mu.Lock()
		batch := p.queue
		p.queue = nil
		if len(batch) == 0 {
			p.flushers--
		}
		p.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		p.send(batch)
	}
}

// send sends one lot as a pipeline and hands each call its answer. A
// script Redis has not cached (NOSCRIPT: a restarted server) is sent
// again whole.
func (p *pipe) send(batch []*call) {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	now := time.Now()
	pl := p.c.Pipeline()
	cmds := make([]*redis.Cmd, len(batch))
	for i, c := range batch {
		if now.Sub(c.queued) > p.timeout {
			c.err = context.DeadlineExceeded
			continue
		}
		cmds[i] = pl.EvalSha(ctx, c.script.Hash(), c.keys, c.args...)
	}
	if pl.Len() > 0 {
		_, _ = pl.Exec(ctx) // each command carries its own error
	}
	for i, c := range batch {
		if cmd := cmds[i]; cmd != nil {
			if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
				cmd = c.script.Eval(ctx, p.c, c.keys, c.args...)
			}
			c.v, c.err = cmd.Int64Slice()
		}
		c.done <- struct{}{}
	}
}
