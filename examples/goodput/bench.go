package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sync"
	"time"
)

// errRunTimeout is the cause of a run's context that its timeout ended.
var errRunTimeout = errors.New("run timed out")

// errInterrupted is returned by runAll when its context ended (a signal) before every run was done.
var errInterrupted = errors.New("interrupted")

// runAll runs every (algorithm, header mode, client) of cfg in turn, each against a fresh server
// and a fresh client, and calls emit with each row as soon as its run is done. It writes progress
// lines to log. It stops early, returning errInterrupted after emitting the interrupted run's row,
// when ctx ends; any other error means a run could not start.
func runAll(ctx context.Context, cfg *config, log io.Writer, emit func(row)) error {
	total := len(cfg.algorithms) * len(cfg.headers) * len(cfg.clients)
	i := 0
	for _, alg := range cfg.algorithms {
		for _, headers := range cfg.headers {
			for _, kind := range cfg.clients {
				if ctx.Err() != nil {
					return errInterrupted
				}
				i++
				prefix := fmt.Sprintf("goodput: [%*d/%d]", len(fmt.Sprint(total)), i, total)
				r, err := runOne(ctx, cfg, setupFor(cfg, alg, headers), kind, log, prefix)
				if err != nil {
					return fmt.Errorf("%s, headers %s, %s: %w", alg, headersWord(headers), kind, err)
				}
				emit(r)
				if r.Interrupted {
					return errInterrupted
				}
			}
		}
	}
	return nil
}

// runOne runs one batch of a fresh client of kind against a fresh server for s, bounded by
// cfg.timeout, and returns its row.
func runOne(ctx context.Context, cfg *config, s setup, kind clientKind, log io.Writer, prefix string) (row, error) {
	srv, err := s.start()
	if err != nil {
		return row{}, fmt.Errorf("starting the testserver: %w", err)
	}
	defer srv.Close()
	p, err := newPeer(kind, cfg, s)
	if err != nil {
		return row{}, err
	}
	defer p.close()

	fmt.Fprintf(log, "%s %s, headers %s, %s: %d requests from %d workers (timeout %v)\n",
		prefix, s.algorithm, headersWord(s.headers), kind, cfg.n, cfg.workers, cfg.timeout)
	b := &batch{peer: p, target: srv.URL() + "/items", n: cfg.n, workers: cfg.workers}
	// The timeout cancels the run rather than setting a deadline on it: a deadline would make the
	// clients refuse at once every wait that ends after it, ending the run early, while the run
	// should go on as it would until the timeout ends it.
	rctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(cfg.timeout, func() { cancel(errRunTimeout) })
	stop := startProgress(log, prefix, b, cfg.progressEvery)
	out := b.run(rctx)
	stop()
	timer.Stop()
	cancel(nil)
	p.close()

	r := row{
		Algorithm: s.algorithm, Headers: s.headers, Client: string(kind),
		Requests: cfg.n, Workers: cfg.workers, LimitRPS: s.rate(), InitialBurst: s.initialBurst(),
		ElapsedS: out.elapsed.Seconds(), PhysicalS: s.physicalLimit(cfg.n, out.start).Seconds(),
		Retries: p.retries.Load(), Lost: cfg.n - out.succeeded,
	}
	if out.succeeded < cfg.n && out.cut {
		r.TimedOut = errors.Is(out.cause, errRunTimeout)
		r.Interrupted = !r.TimedOut
	}
	if r.PhysicalS > 0 {
		ratio := r.ElapsedS / r.PhysicalS
		r.Ratio = &ratio
	}
	r.ServerRequests, r.ServerDenied = serverCounts(srv)
	if r.ServerRequests > 0 {
		r.DeniedShare = float64(r.ServerDenied) / float64(r.ServerRequests)
	}
	if p.learned != nil {
		if u, err := url.Parse(srv.URL()); err == nil {
			if rate, ok := p.learned(u.Host); ok {
				r.LearnedRPS = &rate
			}
		}
	}
	if g, ok := goalFor(kind, s.headers); ok {
		r.Goal = g.verdict(&r)
	}
	fmt.Fprintf(log, "%s %s\n", prefix, r.brief())
	return r, nil
}

// brief is the row's one-line summary for the progress log.
func (r *row) brief() string {
	s := fmt.Sprintf("%.2fs", r.ElapsedS)
	if r.Ratio != nil {
		s += fmt.Sprintf(" = %.3f× physical", *r.Ratio)
	}
	s += fmt.Sprintf(", 429s %s of %d attempts, retries %d, lost %d", percent(r.DeniedShare), r.ServerRequests, r.Retries, r.Lost)
	switch {
	case r.Interrupted:
		s += " (interrupted)"
	case r.TimedOut:
		s += " (timed out)"
	}
	if r.Goal != "" {
		s += "; goal " + r.Goal
	}
	return s
}

// startProgress writes a line with b's progress to w every interval until the returned stop is
// called; stop waits for the reporter to end, so nothing is written after it returns.
// An interval of 0 or less reports nothing.
func startProgress(w io.Writer, prefix string, b *batch, every time.Duration) (stop func()) {
	if every <= 0 {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				fmt.Fprintf(w, "%s   %d/%d done after %.0fs\n", prefix, b.done.Load(), b.n, time.Since(start).Seconds())
			}
		}
	})
	return func() {
		close(quit)
		wg.Wait()
	}
}
