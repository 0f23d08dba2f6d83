package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/promstats"
)

// run is the whole command, in-process: it parses args, starts the server, prints the one
// "listening on http://HOST:PORT" line on stdout, reloads the -config file whenever reload
// delivers a value, and shuts down gracefully when ctx ends. It returns the exit status: 0 after
// a shutdown, 2 for bad flags or configuration, 1 for other failures. Diagnostics go to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, reload <-chan os.Signal) int {
	stderr = &lockedWriter{w: stderr}
	o, err := parseArgs(args)
	switch {
	case errors.Is(err, errHelp):
		printUsage(stdout)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "testserver: %v\n", err)
		return 2
	}
	if err := serve(ctx, o, stdout, stderr, reload); err != nil {
		fmt.Fprintf(stderr, "testserver: %v\n", err)
		var ue *usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// serve runs the server for o until ctx ends, then shuts it down gracefully. It returns a
// *usageError for bad configuration and other errors for failures to start or serve.
func serve(ctx context.Context, o *options, stdout, stderr io.Writer, reload <-chan os.Signal) error {
	var cfg *testserver.Config
	if o.configPath != "" {
		var err error
		if cfg, err = loadConfig(o.configPath); err != nil {
			return err
		}
	}
	st, err := o.openStore(cfg, stderr)
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close() // after the limiter's Close: defers run last-in first-out
		o.redis = st
	}
	// The collector reads the limiter's counters at each scrape; the limiter feeds it each
	// decision's latency.
	var l *testserver.Limiter
	o.metrics = promstats.New(func() testserver.Stats { return l.Stats() })
	l, err = o.newLimiter(cfg)
	if err != nil {
		return err
	}
	defer l.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(o.metrics, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: log.New(stderr, "testserver: metrics: ", 0)})

	app := http.Handler(http.HandlerFunc(okHandler))
	if o.upstream != nil {
		p := newUpstreamProxy(o.upstream, stderr)
		p.handler.ErrorLog = log.New(stderr, "testserver: proxy: ", 0)
		defer p.close()
		app = p.handler
	}

	var idem *testserver.Idempotency
	if o.idempotency > 0 {
		if idem, err = testserver.NewIdempotency(o.idempotency); err != nil {
			return err
		}
		app = idem.Middleware(app)
	}
	if err := ctx.Err(); err != nil {
		return nil // stopped before it started
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// The handlers' base context is not ctx: ctx ending starts a graceful shutdown, in which
	// requests in progress finish; base is cancelled only when the grace period is over.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	var handlers handlerSet
	srv := &http.Server{
		Handler:           handlers.wrap(newHandler(l, app, metrics)),
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          log.New(stderr, "testserver: http: ", 0),
	}
	if _, err := fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr()); err != nil {
		_ = ln.Close()
		return fmt.Errorf("writing the listening line: %w", err)
	}
	describeRules(stderr, l.Rules(), o)

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	var failure error
	served := false
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-reload:
			o.reload(l, cfg, stderr)
		case err := <-serveErr:
			served = true
			failure = fmt.Errorf("serve: %w", err)
			break loop
		}
	}

	fmt.Fprintf(stderr, "testserver: shutting down\n")
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	err = srv.Shutdown(sctx)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "testserver: requests still in progress after -shutdown-timeout %v; closing them\n", o.shutdownTimeout)
	}
	cancelBase()
	_ = srv.Close()
	if !served {
		<-serveErr
	}
	handlers.closeAndWait()
	return failure
}

// reload re-reads the -config file and replaces the limiter's rules; the state of unchanged rules
// is kept (Limiter.SetRules). A bad file is reported on stderr and the current rules stay.
// startup is the config the server started with: settings other than rules need a restart.
func (o *options) reload(l *testserver.Limiter, startup *testserver.Config, stderr io.Writer) {
	if o.configPath == "" {
		fmt.Fprintf(stderr, "testserver: SIGHUP: no -config file to reload; ignored\n")
		return
	}
	cfg, err := loadConfig(o.configPath)
	if err == nil {
		err = o.checkStoreRules(cfg.Rules)
	}
	if err == nil {
		if serr := l.SetRules(cfg.Rules); serr != nil {
			err = fmt.Errorf("-config %s: %s", o.configPath, describeConfigError(serr))
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "testserver: reload failed, keeping the current rules: %v\n", err)
		return
	}
	fmt.Fprintf(stderr, "testserver: reloaded %d rule(s) from %s\n", len(cfg.Rules), o.configPath)
	if !sameSettings(startup, cfg) {
		fmt.Fprintf(stderr, "testserver: settings other than rules changed in %s; they take effect on restart\n", o.configPath)
	}
	describeRules(stderr, l.Rules(), o)
}

// describeRules logs the rules in force and the upstream, one line each.
func describeRules(w io.Writer, rules []testserver.Rule, o *options) {
	for _, r := range rules {
		burst := "burst = limit"
		if r.Burst != 0 {
			burst = fmt.Sprintf("burst %d", r.Burst)
		}
		extra := ""
		switch r.Mode {
		case testserver.ModeSoft:
			extra = fmt.Sprintf(" (+%d%%)", r.SoftPercent)
		case testserver.ModeElastic:
			extra = fmt.Sprintf(" (ceiling %d while fewer than %d in flight)", r.Ceiling, r.Capacity)
		}
		if r.Shape {
			extra += ", shaping"
		}
		fmt.Fprintf(w, "testserver: rule %q: %s %d per %v, %s, key %s, mode %s%s\n",
			r.Name, r.Algorithm, r.Limit, r.Window, burst, r.Key, r.Mode, extra)
	}
	if o.upstream != nil {
		fmt.Fprintf(w, "testserver: proxying admitted requests to %s\n", o.upstream.Redacted())
	}
}

// lockedWriter serialises writes to w, so diagnostics from handlers and the main loop do not
// interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p to the underlying writer under the lock.
func (lw *lockedWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.Write(p)
}
