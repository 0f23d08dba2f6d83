package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/testserver"
)

// run is the whole command, in-process: it parses args, starts the embedded server unless -url is
// given, sends the batch until it is done or ctx ends, and prints the summary on stdout. It returns
// the exit status: 0 when every request succeeded, 1 when some failed or the run could not start,
// 2 for bad flags. Diagnostics go to stderr, and so does the progress bar when stderr is a
// terminal.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args)
	switch {
	case errors.Is(err, errHelp):
		printUsage(stderr)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "batch: %v\n", err)
		return 2
	}

	base := newBaseTransport(cfg.workers)
	defer base.CloseIdleConnections()
	obs := &counter{}
	opts := clientOptions(cfg, base, obs)
	if cfg.verbose {
		opts = append(opts, client.WithLogger(slog.New(slog.NewTextHandler(stderr, nil))))
	}
	sh := openShared(cfg)
	if sh != nil {
		defer sh.close()
		opts = append(opts, sh.option())
	}
	if err := client.Validate(opts...); err != nil {
		fmt.Fprintf(stderr, "batch: %v\n", err)
		return 2
	}

	var srv *testserver.Server
	target := ""
	if cfg.target != nil {
		target = cfg.target.String()
	} else {
		if srv, err = startServer(cfg.server); err != nil {
			fmt.Fprintf(stderr, "batch: starting the embedded server: %v\n", err)
			return 1
		}
		defer srv.Close()
		target = srv.URL() + "/items"
	}
	if !cfg.json {
		describe(stderr, cfg, target)
	}

	p := newProgress(stderr, cfg.n)
	tr := client.NewTransport(nil, opts...)
	r := &runner{client: &http.Client{Transport: tr}, target: target, method: cfg.method, body: cfg.hasBody(),
		n: cfg.n, workers: cfg.workers, timeout: cfg.timeout, onDone: p.done}
	res := r.run(ctx)
	p.finish()
	if sh != nil && !cfg.json {
		sh.describe(stderr)
	}

	sum := &summary{
		requests: cfg.n, succeeded: res.succeeded, failed: res.failures.count(),
		throttled: obs.throttled.Load(), retries: obs.retries.Load(),
		elapsed: res.elapsed, failures: res.failures.list(), cancelled: res.cancelled,
		pace: pace{known: cfg.rate, paced: cfg.pacedRate(), margin: cfg.margin, burst: cfg.pacedBurst(), quota: cfg.quota,
			window: cfg.quota.stretched(cfg.margin), counter: cfg.counter, counterLimit: cfg.counter.shrunk(cfg.margin),
			shared: sh != nil},
	}
	if u, err := url.Parse(target); err == nil {
		sum.pace.learned, _ = tr.LearnedRate(u.Host)
	}
	if srv != nil {
		sum.server = report(cfg.server, srv)
	}
	if sum.succeeded+sum.failed != cfg.n {
		fmt.Fprintf(stderr, "batch: internal error: %d succeeded + %d failed != %d requests\n", sum.succeeded, sum.failed, cfg.n)
		return 1
	}
	if cfg.json {
		err = sum.writeJSON(stdout)
	} else {
		err = sum.writeText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "batch: writing the summary: %v\n", err)
		return 1
	}
	if sum.failed > 0 {
		return 1
	}
	return 0
}

// clientOptions are the options of the steady client for cfg: the base transport, the known pace
// if any, the batch's retry policy (see doc.go) and the counting observer.
func clientOptions(cfg *config, base http.RoundTripper, obs client.Observer) []client.Option {
	ropts := []retry.Option{
		retry.WithMaxAttempts(cfg.attempts),
		retry.WithBaseDelay(cfg.baseDelay()),
		retry.WithMaxDelay(cfg.maxDelay),
		retry.WithMaxElapsed(0),
		retry.WithBudget(nil),
		retry.WithMaxRetryAfter(cfg.maxRetryAfter()),
	}
	if cfg.idempotencyKeys {
		ropts = append(ropts, retry.WithIdempotencyKeys())
	}
	opts := []client.Option{client.WithBase(base), client.WithRetry(ropts...), client.WithObserver(obs),
		client.WithMaxWait(cfg.maxWait)}
	switch {
	case cfg.rate > 0:
		opts = append(opts, client.WithTokenBucket(cfg.pacedRate(), cfg.pacedBurst()))
	case cfg.quota.set():
		opts = append(opts, client.WithWindowQuota(cfg.quota.limit, cfg.quota.stretched(cfg.margin)))
	case cfg.counter.set():
		opts = append(opts, client.WithWindowCounter(cfg.counter.shrunk(cfg.margin), cfg.counter.window))
	}
	return opts
}

// newBaseTransport returns the transport attempts go out on: http.DefaultTransport's settings,
// keeping one idle connection per worker (the default keeps two per host, so a batch of 16
// workers would open and close connections all the time).
func newBaseTransport(workers int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = workers
	t.MaxIdleConns = max(t.MaxIdleConns, workers)
	return t
}

// describe writes one line saying what the run is about to do.
func describe(w io.Writer, cfg *config, target string) {
	where := target
	if cfg.target == nil {
		s := cfg.server
		where = fmt.Sprintf("%s (embedded testserver: %s, %d per %v, burst %d)", target, s.algorithm, s.limit, s.window, s.initialAllowance())
	}
	fmt.Fprintf(w, "batch: %d %s requests to %s from %d workers\n", cfg.n, cfg.method, where, cfg.workers)
}
