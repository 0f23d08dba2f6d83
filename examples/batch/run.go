package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/throttle/learn"
)

// maxBadLineReports is how many bad input lines are reported on stderr one by one; the output
// records every one of them.
const maxBadLineReports = 5

// session is what one invocation runs with: its standard streams, and drain, which an interrupt
// closes to stop the run from starting requests (nil: never).
type session struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	drain          <-chan struct{}
}

// run is the whole command, in-process, with an empty stdin and no drain (see session.run).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return session{stdin: eofReader{}, stdout: stdout, stderr: stderr}.run(ctx, args)
}

// eofReader is an empty input.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// run is the whole command: it parses args, starts the embedded server unless -url is given, sends
// the batch until it is done, drained or ctx ends, and prints the summary on stdout. It returns the
// exit status: 0 when every request succeeded, 1 when some failed, the run was interrupted or could
// not start, 2 for bad flags. Diagnostics go to stderr, and so does the progress bar when stderr is
// a terminal.
func (s session) run(ctx context.Context, args []string) int {
	stderr := s.stderr
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
	throttled := &throttleCounter{next: base}
	obs := &counter{}
	if !cfg.verbose {
		obs.say = func(line string) { fmt.Fprintln(stderr, line) }
	}
	opts := clientOptions(cfg, throttled, obs)
	var debug *slog.Logger // -v: the learners' transitions, local or shared
	if cfg.verbose {
		logs := &lockedWriter{w: stderr} // one writer under the handlers: lines never interleave
		opts = append(opts, client.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
		debug = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		if cfg.rate <= 0 && !cfg.quota.set() && !cfg.counter.set() && cfg.shared == nil {
			// The learner's transitions too: they say what it believes of the server, and why.
			opts = append(opts, client.WithLearner(learn.WithLogger(debug)))
		}
	}
	sh := openShared(cfg, debug)
	if sh != nil {
		defer sh.close()
		opts = append(opts, sh.option())
	}
	if err := client.Validate(opts...); err != nil {
		fmt.Fprintf(stderr, "batch: %v\n", err)
		return 2
	}

	var (
		out  *resultWriter
		done map[string]bool
	)
	if cfg.output != "" {
		if out, done, err = openOutput(cfg.output, cfg.resume); err != nil {
			fmt.Fprintf(stderr, "batch: %v\n", err)
			if errors.Is(err, errOutputExists) {
				return 2
			}
			return 1
		}
		defer out.close()
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

	src, total, closeInput, err := s.openSource(cfg, target, done)
	if err != nil {
		fmt.Fprintf(stderr, "batch: %v\n", err)
		return 1
	}
	defer closeInput()
	if !cfg.json {
		where := target
		if cfg.input != "" && srv != nil {
			where = srv.URL() // relative URLs resolve against its root
		}
		describe(stderr, cfg, where, total)
	}

	p := newProgress(stderr, total, throttled.count)
	tr := client.NewTransport(nil, opts...)
	r := &runner{client: &http.Client{Transport: tr}, src: src, total: total, workers: cfg.workers,
		timeout: cfg.timeout, out: out, body: cfg.outputBody, headers: cfg.outputHeaders,
		drain: s.drain, onDone: p.done, onBadLine: badLineReporter(stderr)}
	res := r.run(ctx)
	p.finish()
	if sh != nil && !cfg.json {
		sh.describe(stderr)
	}
	if err := src.err(); err != nil {
		fmt.Fprintf(stderr, "batch: -input %s: %v\n", cfg.input, err)
	}
	if res.outErr != nil {
		fmt.Fprintf(stderr, "batch: %v; the run stopped (requests without a record are sent again by -resume)\n", res.outErr)
	}

	sum := &summary{
		requests: res.requests, succeeded: res.succeeded, failed: res.failures.count(),
		throttled: throttled.count(), retries: obs.retries.Load(),
		elapsed: res.elapsed, failures: res.failures.list(), cancelled: res.cancelled,
		skipped: src.skipped(), output: cfg.output,
		pace: pace{known: cfg.rate, paced: cfg.pacedRate(), margin: cfg.margin, burst: cfg.pacedBurst(), quota: cfg.quota,
			window: cfg.quota.stretched(cfg.margin), counter: cfg.counter, counterLimit: cfg.counter.shrunk(cfg.margin),
			shared: sh != nil},
	}
	if out != nil {
		if err := out.close(); err != nil {
			fmt.Fprintf(stderr, "batch: %v\n", err)
			res.outErr = err
		}
		sum.records = out.count()
	}
	if u, err := url.Parse(target); err == nil {
		sum.pace.learned, _ = tr.LearnedRate(u.Host)
	}
	if sh != nil {
		sum.shared = sh.report()
	}
	if srv != nil {
		sum.server = report(cfg.server, srv)
	}
	if sum.succeeded+sum.failed != sum.requests {
		fmt.Fprintf(stderr, "batch: internal error: %d succeeded + %d failed != %d requests\n", sum.succeeded, sum.failed, sum.requests)
		return 1
	}
	if cfg.json {
		err = sum.writeJSON(s.stdout)
	} else {
		err = sum.writeText(s.stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "batch: writing the summary: %v\n", err)
		return 1
	}
	if sum.failed > 0 || res.outErr != nil || src.err() != nil {
		return 1
	}
	return 0
}

// openSource returns the requests of the run and how many there are to send (-1 when not known
// before the end of stdin): -n copies of one request to target, or the lines of -input (relative
// URLs resolved against -url, or the embedded server). Requests whose ids are in done are skipped.
// The caller calls closeInput when done.
func (s session) openSource(cfg *config, target string, done map[string]bool) (src source, total int, closeInput func(), err error) {
	if cfg.input == "" {
		cs := &countSource{n: cfg.n, method: cfg.method, target: target, body: cfg.hasBody(), done: done}
		return cs, cs.pending(), func() {}, nil
	}
	base := cfg.target
	if base == nil { // the embedded server: "/x" and "x" both go to its /x
		base, _ = url.Parse(target)
		base.Path = "/"
	}
	if cfg.input == "-" {
		return newInputSource(s.stdin, cfg.method, base, done), -1, func() {}, nil
	}
	f, err := os.Open(cfg.input)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("-input: %w", err)
	}
	total = -1
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		// A file is read twice: once to count what is to send (for the progress bar's ETA and the
		// summary), once to send it.
		if total, err = countPending(f, done); err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			_ = f.Close()
			return nil, 0, nil, fmt.Errorf("-input %s: %w", cfg.input, err)
		}
	}
	return newInputSource(f, cfg.method, base, done), total, func() { _ = f.Close() }, nil
}

// badLineReporter returns a function that reports the first maxBadLineReports bad input lines on
// w, one line each, and then that there are more.
func badLineReporter(w io.Writer) func(item) {
	var n atomic.Int64
	return func(it item) {
		switch k := n.Add(1); {
		case k <= maxBadLineReports:
			fmt.Fprintf(w, "batch: -input line %d: %v\n", it.seq, it.err)
		case k == maxBadLineReports+1:
			fmt.Fprintf(w, "batch: more bad input lines (the output records each one)\n")
		}
	}
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
func describe(w io.Writer, cfg *config, target string, total int) {
	where := target
	if cfg.target == nil {
		s := cfg.server
		persona := ""
		if s.dialect != "" {
			persona = ", answering as " + s.dialect
		}
		where = fmt.Sprintf("%s (embedded testserver: %s, %d per %v, burst %d%s)", target, s.algorithm, s.limit, s.window, s.initialAllowance(), persona)
	}
	wait := "no bound"
	if cfg.maxWait > 0 {
		wait = "up to " + cfg.maxWait.String()
	}
	if cfg.input == "" {
		fmt.Fprintf(w, "batch: %d %s requests to %s from %d workers; waits %s for the server (-max-wait)\n", total, cfg.method, where, cfg.workers, wait)
		return
	}
	count := "the requests"
	if total >= 0 {
		count = fmt.Sprintf("%d requests", total)
	}
	in := cfg.input
	if in == "-" {
		in = "stdin"
	}
	if cfg.target != nil {
		where = "their URLs (relative ones against " + target + ")"
	}
	fmt.Fprintf(w, "batch: %s of %s to %s from %d workers; waits %s for the server (-max-wait)\n", count, in, where, cfg.workers, wait)
}

// lockedWriter serialises the writes of several log handlers to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
