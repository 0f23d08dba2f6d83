package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// outcome is what one batch achieved.
type outcome struct {
	// succeeded counts requests that ended in a 2xx response; the others of the batch are lost.
	succeeded int
	// elapsed is the time from the start of the batch until its last worker stopped.
	elapsed time.Duration
	// start is when the batch started (the sliding window counter's physical limit depends on it).
	start time.Time
	// cut reports that the context ended before every request ended; cause is its cause.
	cut   bool
	cause error
}

// batch sends n GETs to target through one peer from a fixed number of workers.
type batch struct {
	peer    *peer
	target  string
	n       int
	workers int
	// done counts requests that have ended, successfully or not; read it for progress.
	done atomic.Int64
}

// run sends the requests and returns when every worker has stopped: all requests ended, or ctx
// ended (requests in flight are cancelled with it and no new ones start). Requests that did not
// succeed, including those never sent, are lost.
func (b *batch) run(ctx context.Context) outcome {
	var (
		next      atomic.Int64
		succeeded atomic.Int64
		wg        sync.WaitGroup
	)
	start := time.Now()
	for range min(b.workers, b.n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				if next.Add(1) > int64(b.n) {
					return
				}
				if b.peer.send(ctx, b.target) {
					succeeded.Add(1)
				}
				b.done.Add(1)
			}
		})
	}
	wg.Wait()
	out := outcome{succeeded: int(succeeded.Load()), elapsed: time.Since(start), start: start}
	if b.done.Load() < int64(b.n) || ctx.Err() != nil && out.succeeded < b.n {
		out.cut, out.cause = true, context.Cause(ctx)
	}
	return out
}
