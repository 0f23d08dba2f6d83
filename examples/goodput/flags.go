package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// Defaults of the flags; doc.go explains them to users.
const (
	defaultN       = 2000
	defaultWorkers = 16
	defaultLimit   = 200
	defaultWindow  = time.Second
	defaultBurst   = 10
	// defaultMargin is the safety margin of the told clients: every quantity of the server's policy
	// they are told is shaved by it (see toldPaceFor).
	defaultMargin = 0.005
	maxMargin     = 0.5
	// timeoutFactor and minTimeout give the default per-run timeout: timeoutFactor*N/R, at least
	// minTimeout. go-retryablehttp needs about ten times N/R at the default settings, so the
	// factor leaves it room to finish instead of cutting it off.
	timeoutFactor = 15
	minTimeout    = 30 * time.Second
	maxWorkers    = 10_000
	// defaultProgressEvery is how often a run in progress reports on stderr.
	defaultProgressEvery = 5 * time.Second
)

// The -headers values.
const (
	headersBoth = "both"
	headersOn   = "on"
	headersOff  = "off"
)

// errHelp is returned by parseFlags for -h and -help.
var errHelp = errors.New("help requested")

// usageError is a bad command line; run prints it on one line and exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// config is the parsed and validated command line.
type config struct {
	n, workers    int
	limit         int64
	window        time.Duration
	burst         int64   // the bucket algorithms' burst; window algorithms start with limit
	margin        float64 // the told clients' safety margin (toldPaceFor)
	algorithms    []string
	clients       []clientKind
	headers       []bool // the header modes to run, in order: on before off
	timeout       time.Duration
	json          bool
	markdown      bool
	check         bool
	progressEvery time.Duration
}

// rate is the server's limit in requests per second: R = limit/window.
func (c *config) rate() float64 { return float64(c.limit) / c.window.Seconds() }

// flagValues holds the raw values the flag package fills in.
type flagValues struct {
	n, workers                 int
	limit, burst               int64
	window, timeout            time.Duration
	margin                     float64
	algorithms, clients, heads string
	json, markdown, check      bool
}

// newFlagSet declares the flags into v. It writes nothing: run prints errors and usage itself.
func newFlagSet(v *flagValues) *flag.FlagSet {
	fs := flag.NewFlagSet("goodput", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&v.n, "n", defaultN, "requests per run")
	fs.IntVar(&v.workers, "c", defaultWorkers, "workers per run (requests in flight at most)")
	fs.Int64Var(&v.limit, "limit", defaultLimit, "server's limit: requests per -window")
	fs.DurationVar(&v.window, "window", defaultWindow, "server's window")
	fs.Int64Var(&v.burst, "burst", defaultBurst, "server's burst for token-bucket and leaky-bucket (window algorithms start with the whole -limit)")
	fs.Float64Var(&v.margin, "margin", defaultMargin, "safety margin m of the clients told the server's policy: rate R*(1-m), burst floor(B*(1-m)) (at least 1), quota window W/(1-m)")
	fs.StringVar(&v.algorithms, "algorithms", strings.Join(algorithm.Names(), ","), "comma-separated server algorithms")
	fs.StringVar(&v.clients, "clients", joinKinds(allClients), "comma-separated clients")
	fs.StringVar(&v.heads, "headers", headersBoth, "server's rate-limit headers: both | on | off")
	fs.DurationVar(&v.timeout, "timeout", 0, fmt.Sprintf("bound of each run; requests unfinished then count as lost (0 = %d×N/R, at least %v)", timeoutFactor, minTimeout))
	fs.BoolVar(&v.json, "json", false, "print one JSON object per row on stdout instead of the table")
	fs.BoolVar(&v.markdown, "markdown", false, "print the table in Markdown (for the README)")
	fs.BoolVar(&v.check, "check", false, "exit with status 3 when a steady client misses a goal of issue 4")
	return fs
}

// printUsage writes the flags' usage to w.
func printUsage(w io.Writer) {
	var v flagValues
	fs := newFlagSet(&v)
	fs.SetOutput(w)
	fmt.Fprintf(w, "Usage: goodput [flags]\n\nRuns the same batch through steady and its peers against testserver with every algorithm, with and\nwithout rate-limit headers, and prints one table.\n\nFlags:\n")
	fs.PrintDefaults()
}

// parseFlags parses and validates args. It returns errHelp for -h, a *usageError naming the bad
// flag and value for anything else it cannot use, and never panics.
func parseFlags(args []string) (*config, error) {
	var v flagValues
	fs := newFlagSet(&v)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, &usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (flags only; see -h)", fs.Arg(0))
	}
	switch {
	case v.n < 1:
		return nil, usagef("invalid -n %d: must be at least 1", v.n)
	case v.workers < 1 || v.workers > maxWorkers:
		return nil, usagef("invalid -c %d: must be between 1 and %d", v.workers, maxWorkers)
	case v.limit < 1:
		return nil, usagef("invalid -limit %d: must be at least 1", v.limit)
	case v.window <= 0:
		return nil, usagef("invalid -window %v: must be positive", v.window)
	case v.burst < 1:
		return nil, usagef("invalid -burst %d: must be at least 1", v.burst)
	case math.IsNaN(v.margin) || v.margin < 0 || v.margin > maxMargin:
		return nil, usagef("invalid -margin %v: must be between 0 and %v", v.margin, maxMargin)
	case v.timeout < 0:
		return nil, usagef("invalid -timeout %v: must not be negative", v.timeout)
	case v.json && v.markdown:
		return nil, usagef("-json and -markdown exclude each other")
	}
	c := &config{n: v.n, workers: v.workers, limit: v.limit, window: v.window, burst: v.burst,
		margin: v.margin, timeout: v.timeout, json: v.json, markdown: v.markdown, check: v.check,
		progressEvery: defaultProgressEvery}
	if r := c.rate(); math.IsInf(r, 0) || r <= 0 {
		return nil, usagef("invalid -limit %d per -window %v: not a usable rate", v.limit, v.window)
	}
	var err error
	if c.algorithms, err = parseList("algorithms", v.algorithms, algorithm.Names()); err != nil {
		return nil, err
	}
	names, err := parseList("clients", v.clients, kindNames(allClients))
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		c.clients = append(c.clients, clientKind(name))
	}
	switch v.heads {
	case headersBoth:
		c.headers = []bool{true, false}
	case headersOn:
		c.headers = []bool{true}
	case headersOff:
		c.headers = []bool{false}
	default:
		return nil, usagef("invalid -headers %q: must be both, on or off", v.heads)
	}
	if c.timeout == 0 {
		c.timeout = defaultTimeout(c.n, c.rate())
	}
	return c, nil
}

// defaultTimeout is the per-run timeout when -timeout is 0: timeoutFactor*n/rate, at least
// minTimeout.
func defaultTimeout(n int, rate float64) time.Duration {
	d := time.Duration(timeoutFactor * float64(n) / rate * float64(time.Second))
	return max(d, minTimeout)
}

// parseList splits a comma-separated flag value into its distinct items, in the order given,
// and checks each against valid.
func parseList(flagName, value string, valid []string) ([]string, error) {
	var out []string
	for item := range strings.SplitSeq(value, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if !slices.Contains(valid, item) {
			return nil, usagef("invalid -%s item %q: must be one of %s", flagName, item, strings.Join(valid, ", "))
		}
		if !slices.Contains(out, item) {
			out = append(out, item)
		}
	}
	if len(out) == 0 {
		return nil, usagef("invalid -%s %q: name at least one of %s", flagName, value, strings.Join(valid, ", "))
	}
	return out, nil
}
