package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/internal/margin"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// Defaults of the flags; doc.go explains them to users.
const (
	defaultN         = 1000
	defaultWorkers   = 16
	defaultMethod    = "GET"
	defaultAttempts  = 20
	defaultBaseDelay = 500 * time.Millisecond
	defaultMaxDelay  = 10 * time.Second
	// longestCommonWindow is the longest window a batch waits out when it knows of none longer: an
	// hour, the window of the hourly quotas APIs declare (GitHub's 5,000 requests an hour, ...).
	// A request that must wait for its quota's window waits up to the whole window (a fixed window
	// refused at its start), so the default -max-wait is at least this plus resetSlack (see
	// config.defaultMaxWait), where an interactive client gives up after client.DefaultMaxWait. A
	// daily quota is not waited out by default: its requests fail and are reported (and -resume
	// sends them later), unless -max-wait says to wait longer.
	longestCommonWindow = time.Hour
	// resetSlack is how much longer than its window a wait for a window's end can be: Retry-After
	// and Unix-time resets are whole seconds rounded up (up to 1 s more), and a Unix-time reset is
	// measured against the Date header, itself whole seconds (up to 1 s more).
	resetSlack        = 2 * time.Second
	defaultKnownBurst = 1
	defaultMargin     = 0.005
	maxMargin         = 0.5
	// maxBurst bounds -burst: more than any API grants at once, and far from int overflow.
	maxBurst           = 1 << 30
	maxWorkers         = 10_000
	defaultServerAlgo  = algorithm.NameTokenBucket
	defaultServerLimit = 100
	defaultServerWin   = time.Second
	defaultServerBurst = 10
)

// methods are the HTTP methods -method accepts; bodyMethods send a JSON body.
var (
	methods     = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
	bodyMethods = []string{"POST", "PUT", "PATCH"}
)

// errHelp is returned by parseFlags for -h and -help.
var errHelp = errors.New("help requested")

// usageError is a bad command line; run prints it on one line and exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// config is the parsed and validated command line.
type config struct {
	// target is the URL to send to; nil means the embedded server.
	target     *url.URL
	n, workers int
	rate       float64       // 0: not known
	burst      int           // the known pace's burst; meaningful only when rate > 0
	quota      quota         // a known quota per window (-quota); excludes rate and counter
	counter    windowCounter // a known sliding window counter (-counter); excludes rate and quota
	// margin shaves the known pace: rate*(1-margin) (see pacedBurst, quota.stretched,
	// windowCounter.shrunk).
	margin          float64
	method          string
	timeout         time.Duration // per request, retries included; 0: none
	attempts        int
	maxDelay        time.Duration
	maxWait         time.Duration
	idempotencyKeys bool
	// input is the file of requests (-input; "-" for stdin, "" for -n copies of one request).
	input string
	// output is the file of results (-output; "" for none); resume continues it (-resume);
	// outputHeaders and outputBody say what its records keep.
	output        string
	resume        bool
	outputHeaders bool
	outputBody    bodyMode
	json          bool
	// verbose logs every retry, and every give-up, on stderr.
	verbose bool
	server  serverConfig
	// shared is the Redis of a quota shared with other processes (-shared); nil: not shared.
	shared    *redis.Options
	sharedURL string
}

// pacedRate is the rate the client paces itself at: -rate less the -margin; 0 when not known.
func (c *config) pacedRate() float64 { return margin.Rate(c.rate, c.margin) }

// pacedBurst is the burst the client keeps with -rate: -burst less the -margin, rounded down, at
// least 1 (the margin applies to everything told: -burst 10 with the default margin is 9).
func (c *config) pacedBurst() int { return margin.Burst(int64(c.burst), c.margin) }

// hasBody reports whether the method sends a JSON body.
func (c *config) hasBody() bool { return slices.Contains(bodyMethods, c.method) }

// maxRetryAfter is the longest Retry-After the retry layer waits out: -max-wait, or (for 0, no
// bound) the longest any server could ask for.
func (c *config) maxRetryAfter() time.Duration {
	if c.maxWait == 0 {
		return math.MaxInt64
	}
	return c.maxWait
}

// baseDelay is the first interval of the backoff schedule: defaultBaseDelay, or -max-delay when
// that is shorter.
func (c *config) baseDelay() time.Duration { return min(defaultBaseDelay, c.maxDelay) }

// serverConfig is the embedded server's limit, from the -server-* flags.
type serverConfig struct {
	algorithm string
	limit     int64
	window    time.Duration
	burst     int64 // as given; see rule
	headers   bool
	status    int
	// dialect is the persona the server answers as (-server-dialect); "" for testserver's own.
	dialect string
}

// flagValues holds the raw values the flag package fills in.
type flagValues struct {
	url, method, quota, counter string
	input, output, outputBody   string
	resume, outputHeaders       bool
	n, workers, burst, attempts int
	rate, margin                float64
	timeout, maxDelay, maxWait  time.Duration
	idempotencyKeys, json       bool
	verbose                     bool
	server                      serverConfig
	shared                      string
}

// newFlagSet declares the flags into v. It writes nothing: run prints errors and usage itself.
func newFlagSet(v *flagValues) *flag.FlagSet {
	fs := flag.NewFlagSet("batch", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&v.url, "url", "", "send to this http(s) `URL` instead of the embedded testserver")
	fs.IntVar(&v.n, "n", defaultN, "number of requests")
	fs.IntVar(&v.workers, "c", defaultWorkers, "number of workers (requests in flight at most)")
	fs.Float64Var(&v.rate, "rate", 0, "the API's rate in requests/s, if known; 0 = not known (client.New's default pace)")
	fs.IntVar(&v.burst, "burst", defaultKnownBurst, "burst of the known pace (with -rate); 1 = an even pace")
	fs.StringVar(&v.quota, "quota", "", "the API's quota, if known, as `LIMIT/WINDOW` (200/1s, 6000/1m) usable at any time within the window (a fixed window or sliding log): up to LIMIT at once, never more than LIMIT in any window; excludes -rate")
	fs.StringVar(&v.counter, "counter", "", "the API's sliding window counter, if known, as `LIMIT/WINDOW` (200/1s, 6000/1m), on windows aligned to the Unix epoch (Cloudflare-style; the embedded server's sliding-window): the client mirrors the counter's rule, LIMIT at once and then as the previous window's weight decays; excludes -rate and -quota")
	fs.Float64Var(&v.margin, "margin", defaultMargin, "with -rate, -quota or -counter: pace at rate*(1-margin) with burst*(1-margin) (rounded down, at least 1), keep a quota's window stretched to window/(1-margin), or a counter's limit shrunk to limit*(1-margin) (rounded down, at least 1), so network jitter never lands a request in a window that is still full")
	fs.StringVar(&v.method, "method", defaultMethod, "HTTP `method`: "+strings.Join(methods, " | ")+"; POST, PUT and PATCH send a small JSON body; with -input, the method of URL lines (sent without a body)")
	fs.DurationVar(&v.timeout, "timeout", 0, "bound on each request, its retries and waits included; 0 = none")
	fs.IntVar(&v.attempts, "attempts", defaultAttempts, "attempts per request, the first included")
	fs.DurationVar(&v.maxDelay, "max-delay", defaultMaxDelay, "cap of the exponential backoff between attempts")
	fs.DurationVar(&v.maxWait, "max-wait", longestCommonWindow+resetSlack, "longest wait for what the server asked for (a Retry-After, a quota's reset, or a learned pace slower than one request per this long); longer fails the request; 0 = no bound. Default: the longest window known (-quota, -counter, -server-window), at least an hour, plus 2s")
	fs.StringVar(&v.input, "input", "", "read the requests from this `FILE` (- for stdin), one per line: a URL, or a JSON object {\"method\", \"url\", \"headers\", \"body\"}; relative URLs resolve against -url or the embedded server; excludes -n")
	fs.StringVar(&v.output, "output", "", "append a JSON line per finished request to this `FILE`: status, body digest, attempts, error, done; POST and PATCH then carry an Idempotency-Key derived from the job and the request")
	fs.BoolVar(&v.resume, "resume", false, "with -output: continue the job the output records, skipping the requests it records as done")
	fs.BoolVar(&v.outputHeaders, "output-headers", false, "with -output: keep each final response's headers")
	fs.StringVar(&v.outputBody, "output-body", string(bodyDigest), "with -output: what to keep of each final response's body: digest (its length and SHA-256) | full (its text, up to 1 MiB) | none")
	fs.StringVar(&v.server.dialect, "server-dialect", "", "embedded server answers as this API does (testserver.WithDialect): "+strings.Join(testserver.Dialects(), " | ")+"; without -server-algorithm, with that API's limiter kind")
	fs.BoolVar(&v.idempotencyKeys, "idempotency-keys", false, "add an Idempotency-Key to POST and PATCH requests so they are retried after transport errors too")
	fs.BoolVar(&v.json, "json", false, "print only one JSON line on stdout")
	fs.BoolVar(&v.verbose, "v", false, "log every retry (with its reason and wait), every request given up and, when the rate is learned, every change of what the learner believes (with -shared: each step of the shared law this process makes, and each Redis outage), on stderr")
	fs.StringVar(&v.shared, "shared", "", "share the target host's quota with every batch process given the same Redis `URL` (redis://HOST:PORT/DB): the pace of -rate, or the one they learn together, holds for all of them")
	fs.StringVar(&v.server.algorithm, "server-algorithm", defaultServerAlgo, "embedded server's algorithm: "+strings.Join(algorithm.Names(), " | "))
	fs.Int64Var(&v.server.limit, "server-limit", defaultServerLimit, "embedded server's limit: requests per window")
	fs.DurationVar(&v.server.window, "server-window", defaultServerWin, "embedded server's window")
	fs.Int64Var(&v.server.burst, "server-burst", defaultServerBurst, "embedded server's burst (token and leaky bucket; window algorithms use the limit)")
	fs.BoolVar(&v.server.headers, "server-headers", true, "embedded server sends Retry-After and the RateLimit fields; false sends the status alone")
	fs.IntVar(&v.server.status, "server-status", 429, "embedded server's status for throttled requests (429, or 503 as some APIs do)")
	return fs
}

// printUsage writes the flags' usage to w.
func printUsage(w io.Writer) {
	var v flagValues
	fs := newFlagSet(&v)
	fs.SetOutput(w)
	fmt.Fprintf(w, "Usage: batch [flags]\n\nSends -n requests (or those of -input) through steady and prints a summary; with no -url, to an embedded rate-limited testserver. -output records each request's result, and -resume continues a job from them.\n\nFlags:\n")
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
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	c := &config{n: v.n, workers: v.workers, rate: v.rate, method: strings.ToUpper(v.method),
		timeout: v.timeout, attempts: v.attempts, maxDelay: v.maxDelay, maxWait: v.maxWait,
		idempotencyKeys: v.idempotencyKeys, json: v.json, verbose: v.verbose, server: v.server,
		input: v.input, output: v.output, resume: v.resume, outputHeaders: v.outputHeaders,
		outputBody: bodyMode(v.outputBody)}
	switch {
	case v.n < 1:
		return nil, usagef("invalid -n %d: must be at least 1", v.n)
	case v.workers < 1 || v.workers > maxWorkers:
		return nil, usagef("invalid -c %d: must be between 1 and %d", v.workers, maxWorkers)
	case math.IsNaN(v.rate) || math.IsInf(v.rate, 0) || v.rate < 0:
		return nil, usagef("invalid -rate %v: must be a finite number of requests/s, at least 0", v.rate)
	case v.burst < 1 || v.burst > maxBurst:
		return nil, usagef("invalid -burst %d: must be between 1 and %d", v.burst, maxBurst)
	case set["burst"] && v.rate == 0:
		return nil, usagef("-burst %d needs -rate: it is the burst of a known pace", v.burst)
	case math.IsNaN(v.margin) || v.margin < 0 || v.margin > maxMargin:
		return nil, usagef("invalid -margin %v: must be between 0 and %v", v.margin, maxMargin)
	case set["margin"] && v.rate == 0 && v.quota == "" && v.counter == "":
		return nil, usagef("-margin %v needs -rate, -quota or -counter: it shaves a known pace", v.margin)
	case v.quota != "" && v.rate > 0:
		return nil, usagef("-quota %s and -rate %v: give one known pace, not both", v.quota, v.rate)
	case v.counter != "" && v.rate > 0:
		return nil, usagef("-counter %s and -rate %v: give one known pace, not both", v.counter, v.rate)
	case v.counter != "" && v.quota != "":
		return nil, usagef("-counter %s and -quota %s: give one known pace, not both", v.counter, v.quota)
	case !slices.Contains(methods, c.method):
		return nil, usagef("invalid -method %q: must be one of %s", v.method, strings.Join(methods, ", "))
	case v.timeout < 0:
		return nil, usagef("invalid -timeout %v: must not be negative", v.timeout)
	case v.attempts < 1:
		return nil, usagef("invalid -attempts %d: must be at least 1", v.attempts)
	case v.maxDelay <= 0:
		return nil, usagef("invalid -max-delay %v: must be positive", v.maxDelay)
	case v.maxWait < 0:
		return nil, usagef("invalid -max-wait %v: must not be negative", v.maxWait)
	case v.input != "" && set["n"]:
		return nil, usagef("-n %d and -input %s: the input gives the requests", v.n, v.input)
	case v.resume && v.output == "":
		return nil, usagef("-resume needs -output: it continues the job an output file records")
	case v.outputHeaders && v.output == "":
		return nil, usagef("-output-headers needs -output")
	case set["output-body"] && v.output == "":
		return nil, usagef("-output-body %s needs -output", v.outputBody)
	case !slices.Contains(bodyModes, bodyMode(v.outputBody)):
		return nil, usagef("invalid -output-body %q: must be digest, full or none", v.outputBody)
	case v.output != "" && v.output == v.input:
		return nil, usagef("-output %s is the -input: give another file", v.output)
	}
	q, err := parseQuota(v.quota)
	if err != nil {
		return nil, err
	}
	if q.set() && v.shared != "" {
		return nil, usagef("-quota %s cannot be shared (-shared): a shared quota is paced as -rate", v.quota)
	}
	if q.set() && float64(q.window)/(1-v.margin) > float64(maxQuotaWindow) {
		return nil, usagef("invalid -quota %s: its window stretched by -margin %v is longer than %v", v.quota, v.margin, maxQuotaWindow)
	}
	c.quota = q
	wc, err := parseCounter(v.counter)
	if err != nil {
		return nil, err
	}
	if wc.set() && v.shared != "" {
		return nil, usagef("-counter %s cannot be shared (-shared): a shared quota is paced as -rate", v.counter)
	}
	c.counter = wc
	if v.rate > 0 {
		c.burst = v.burst
	}
	if v.rate > 0 || q.set() || wc.set() {
		c.margin = v.margin
	}
	shared, err := parseShared(v.shared)
	if err != nil {
		return nil, err
	}
	c.shared, c.sharedURL = shared, v.shared
	if v.url != "" {
		u, err := parseTarget(v.url)
		if err != nil {
			return nil, err
		}
		c.target = u
		for name := range set {
			if strings.HasPrefix(name, "server-") {
				return nil, usagef("-%s configures the embedded server; it cannot be combined with -url", name)
			}
		}
	} else {
		if err := c.server.resolve(set); err != nil {
			return nil, err
		}
	}
	if !set["max-wait"] {
		c.maxWait = c.defaultMaxWait()
	}
	return c, nil
}

// defaultMaxWait is -max-wait when not given: the longest window the run knows of (the -quota
// window the client keeps, the -counter window, the embedded server's window), at least
// longestCommonWindow, plus resetSlack. A batch thus waits out its quota's window, an hour's
// included, where an interactive client gives up after client.DefaultMaxWait.
func (c *config) defaultMaxWait() time.Duration {
	w := longestCommonWindow
	if c.quota.set() {
		w = max(w, c.quota.stretched(c.margin))
	}
	if c.counter.set() {
		w = max(w, c.counter.window)
	}
	if c.target == nil {
		w = max(w, c.server.window)
	}
	return w + resetSlack
}

// resolve fills in the embedded server's defaults that depend on other flags (the persona's
// limiter kind without -server-algorithm, no burst for window algorithms without -server-burst)
// and validates the -server-* flags.
func (s *serverConfig) resolve(set map[string]bool) error {
	if s.dialect != "" {
		if !slices.Contains(testserver.Dialects(), s.dialect) {
			return usagef("invalid -server-dialect %q: must be one of %s", s.dialect, strings.Join(testserver.Dialects(), ", "))
		}
		if !set["server-algorithm"] {
			s.algorithm = personaAlgorithm(s.dialect)
		}
	}
	if !set["server-burst"] && !burstAlgorithm(s.algorithm) {
		s.burst = 0 // window algorithms take no burst of their own
	}
	return s.validate()
}

// personaAlgorithm is the limiter kind the persona of testserver.WithDialect gives a rule that
// names none, read from a limiter built with it (testserver's own default when it names none).
func personaAlgorithm(dialect string) string {
	l, err := testserver.NewLimiter([]testserver.Rule{{Limit: 1, Window: time.Second}}, testserver.WithDialect(dialect))
	if err != nil {
		return defaultServerAlgo
	}
	defer func() { _ = l.Close() }()
	if a := l.Rules()[0].Algorithm; a != "" {
		return a
	}
	return defaultServerAlgo
}

// parseTarget checks that s is an absolute http or https URL with a host.
func parseTarget(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, usagef("invalid -url %q: %v", s, errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, usagef("invalid -url %q: scheme must be http or https", s)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, usagef("invalid -url %q: no host", s)
	}
	return u, nil
}

// burstAlgorithm reports whether the algorithm takes a burst other than its limit.
func burstAlgorithm(name string) bool {
	return name == algorithm.NameTokenBucket || name == algorithm.NameLeakyBucket
}

// rule is the embedded server's single rule: one global key.
func (s serverConfig) rule() testserver.Rule {
	return testserver.Rule{Algorithm: s.algorithm, Limit: s.limit, Window: s.window, Burst: s.burst}
}

// validate checks the -server-* flags, reporting the first bad one as a *usageError.
func (s serverConfig) validate() error {
	if !slices.Contains(algorithm.Names(), s.algorithm) {
		return usagef("invalid -server-algorithm %q: must be one of %s", s.algorithm, strings.Join(algorithm.Names(), ", "))
	}
	if s.status < 400 || s.status > 599 {
		return usagef("invalid -server-status %d: must be between 400 and 599", s.status)
	}
	err := s.rule().Validate()
	var re *testserver.RuleError
	if errors.As(err, &re) {
		return usagef("invalid -server-%s %s: %v", re.Field, re.Value, re.Err)
	}
	if err != nil {
		return usagef("invalid embedded server rule: %v", err)
	}
	return nil
}

// limitRPS is the server's limit in requests per second.
func (s serverConfig) limitRPS() float64 { return float64(s.limit) / s.window.Seconds() }

// initialAllowance is how many requests a fresh key admits at once: the burst of a bucket, the
// whole limit of a window algorithm (a window starts with its full quota).
func (s serverConfig) initialAllowance() int64 {
	if s.burst > 0 {
		return s.burst
	}
	return s.limit
}
