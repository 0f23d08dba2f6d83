package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/steadyhttp/steady/testserver/promstats"
	"github.com/steadyhttp/steady/testserver/redisstore"
)

// Defaults of the flags; doc.go documents them for users.
const (
	defaultAddr            = "127.0.0.1:8080"
	defaultAlgorithm       = algorithm.NameTokenBucket
	defaultLimit           = 100
	defaultWindow          = time.Second
	defaultSoftPercent     = 10
	defaultCapacity        = 64
	defaultShutdownTimeout = 10 * time.Second
)

// ruleFlags are the flags that define the single rule; they cannot be combined with -config.
var ruleFlags = []string{"algorithm", "burst", "capacity", "ceiling", "key", "limit", "mode", "shape", "soft-percent", "window"}

// options is the parsed command line.
type options struct {
	addr            string
	upstream        *url.URL
	shutdownTimeout time.Duration
	configPath      string

	// rule is the single rule of the flags; unused with -config.
	rule testserver.Rule

	// Server settings given explicitly on the command line; they override the config file's.
	status, maxKeys *int
	headers         *bool
	// dialect is the -dialect persona ("" for none).
	dialect string
	// idempotency is how many Idempotency-Keys -idempotency remembers (0: the header is passed on).
	idempotency int

	// store is where per-key state lives (store.go); redis is the opened Redis store, if any.
	store storeOptions
	redis *redisstore.Store
	// metrics is the Prometheus collector of /metrics, set by serve.
	metrics *promstats.Collector
}

// flagValues holds the raw values the flag package fills in.
type flagValues struct {
	addr, upstream, configPath string
	shutdownTimeout            time.Duration

	algorithm, mode, key                     string
	limit, burst, softPercent, ceiling, capa int64
	window                                   time.Duration
	shape                                    bool

	status, maxKeys int
	headers         bool
	dialect         string
	idempotency     int

	store storeFlagValues
}

// newFlagSet declares the flags into v.
func newFlagSet(v *flagValues) *flag.FlagSet {
	fs := flag.NewFlagSet("testserver", flag.ContinueOnError)
	fs.StringVar(&v.addr, "addr", defaultAddr, "listen `address`; port 0 picks a free port")
	fs.StringVar(&v.algorithm, "algorithm", defaultAlgorithm, "`name`: "+strings.Join(algorithm.Names(), " | "))
	fs.Int64Var(&v.limit, "limit", defaultLimit, "requests admitted per window (at least 1)")
	fs.DurationVar(&v.window, "window", defaultWindow, "the limit's period, a Go `duration` (1s, 1m, 1h)")
	fs.Int64Var(&v.burst, "burst", 0, "requests a fresh key admits at one instant; 0 means the limit (token and leaky bucket only may differ)")
	fs.StringVar(&v.mode, "mode", string(testserver.ModeHard), "`mode`: "+joinModes(" | "))
	fs.Int64Var(&v.softPercent, "soft-percent", defaultSoftPercent, "soft mode: admit up to limit*(100+`P`)/100 per window")
	fs.Int64Var(&v.ceiling, "ceiling", 0, "elastic mode: most admitted per window while there is spare capacity; 0 means twice the limit")
	fs.Int64Var(&v.capa, "capacity", defaultCapacity, "elastic mode: the ceiling applies while fewer than `N` requests are in flight")
	fs.StringVar(&v.key, "key", string(testserver.KeyGlobal), "key `spec`: global | ip | header:NAME (or any testserver.KeySpec, such as user+route)")
	fs.BoolVar(&v.shape, "shape", false, "leaky bucket only: hold each admitted request until its slot instead of answering at once")
	fs.IntVar(&v.status, "status", 429, "status `code` of throttled responses (400 to 599)")
	fs.BoolVar(&v.headers, "headers", true, "send Retry-After, the RateLimit fields and a problem body; false sends only the status")
	fs.StringVar(&v.dialect, "dialect", "", "answer as this API does (`name`): "+strings.Join(testserver.Dialects(), " | ")+"; its default algorithm applies unless -algorithm is set")
	fs.IntVar(&v.maxKeys, "max-keys", testserver.DefaultMaxKeys, "most per-key states kept in memory")
	fs.IntVar(&v.idempotency, "idempotency", 0, "honour Idempotency-Key on admitted requests, remembering up to `N` keys: a key seen before gets its first answer replayed (Idempotent-Replayed: true) instead of reaching the app again; 0 passes the header on")
	fs.StringVar(&v.upstream, "upstream", "", "reverse-proxy admitted requests to this http(s) `URL` instead of answering \"ok\"")
	fs.StringVar(&v.configPath, "config", "", "JSON config `file` with many rules (testserver.Config); SIGHUP reloads it")
	fs.DurationVar(&v.shutdownTimeout, "shutdown-timeout", defaultShutdownTimeout, "how long SIGINT/SIGTERM waits for requests in progress")
	declareStoreFlags(fs, &v.store)
	return fs
}

func joinModes(sep string) string {
	var names []string
	for _, m := range testserver.Modes() {
		names = append(names, string(m))
	}
	return strings.Join(names, sep)
}

// printUsage writes the command's usage to w.
func printUsage(w io.Writer) {
	var v flagValues
	fs := newFlagSet(&v)
	fs.SetOutput(w)
	fmt.Fprintf(w, "Usage: testserver [flags]\n\nA rate-limited HTTP server (steady's testserver). Prints \"listening on http://HOST:PORT\"\non stdout, serves /-/stats and /-/healthz, reloads -config on SIGHUP.\n\nFlags:\n")
	fs.PrintDefaults()
}

// parseArgs parses the command line into options. Errors are *usageError (or errHelp); it
// neither reads files nor opens sockets.
func parseArgs(args []string) (*options, error) {
	var v flagValues
	fs := newFlagSet(&v)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, usage(err)
	}
	if fs.NArg() > 0 {
		return nil, usage(fmt.Errorf("unexpected argument %q (all settings are flags; see -h)", fs.Arg(0)))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	o := &options{addr: v.addr, shutdownTimeout: v.shutdownTimeout, configPath: v.configPath}
	if err := checkAddr(v.addr); err != nil {
		return nil, err
	}
	if v.upstream != "" || set["upstream"] {
		u, err := parseUpstream(v.upstream)
		if err != nil {
			return nil, err
		}
		o.upstream = u
	}
	if v.shutdownTimeout <= 0 {
		return nil, badFlag("shutdown-timeout", v.shutdownTimeout.String(), "must be positive")
	}
	if set["status"] {
		o.status = &v.status
	}
	if set["headers"] {
		o.headers = &v.headers
	}
	if v.dialect != "" {
		if !slices.Contains(testserver.Dialects(), v.dialect) {
			return nil, badFlag("dialect", v.dialect, "want one of %s", strings.Join(testserver.Dialects(), ", "))
		}
		o.dialect = v.dialect
	}
	if set["max-keys"] {
		o.maxKeys = &v.maxKeys
	}
	if v.idempotency < 0 {
		return nil, badFlag("idempotency", strconv.Itoa(v.idempotency), "must not be negative")
	}
	o.idempotency = v.idempotency
	store, err := parseStoreFlags(&v.store, set)
	if err != nil {
		return nil, err
	}
	o.store = store

	if set["config"] {
		if v.configPath == "" {
			return nil, badFlag("config", "", "must name a file")
		}
		var conflicts []string
		for _, name := range ruleFlags {
			if set[name] {
				conflicts = append(conflicts, "-"+name)
			}
		}
		if len(conflicts) > 0 {
			return nil, usage(fmt.Errorf("-config cannot be combined with %s: the rules come from the config file", strings.Join(conflicts, ", ")))
		}
		return o, nil
	}
	if o.dialect != "" && !set["algorithm"] {
		v.algorithm = "" // the persona's limiter kind
	}
	rule, err := ruleFromFlags(&v, set)
	if err != nil {
		return nil, err
	}
	o.rule = rule
	return o, nil
}

// checkAddr rejects a listen address that is not HOST:PORT with a numeric port.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return badFlag("addr", addr, "want HOST:PORT, such as 127.0.0.1:8080 or :0 (%v)", unwrapAddrErr(err))
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return badFlag("addr", addr, "port %q is not a number from 0 to 65535", port)
	}
	return nil
}

// unwrapAddrErr returns the reason of a *net.AddrError without repeating the address.
func unwrapAddrErr(err error) string {
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return ae.Err
	}
	return err.Error()
}

// parseUpstream checks an -upstream URL: absolute, http or https, with a host.
func parseUpstream(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, badFlag("upstream", s, "not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, badFlag("upstream", s, "scheme must be http or https")
	}
	if u.Host == "" {
		return nil, badFlag("upstream", s, "missing host (want a URL such as http://127.0.0.1:9000)")
	}
	if u.User != nil {
		return nil, badFlag("upstream", s, "credentials in the URL are not supported")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, badFlag("upstream", s, "must not have a query or fragment")
	}
	return u, nil
}

// ruleFromFlags builds and validates the single rule of the flags.
func ruleFromFlags(v *flagValues, set map[string]bool) (testserver.Rule, error) {
	if v.algorithm != "" && !slices.Contains(algorithm.Names(), v.algorithm) {
		return testserver.Rule{}, badFlag("algorithm", v.algorithm, "want one of %s", strings.Join(algorithm.Names(), ", "))
	}
	mode := testserver.Mode(v.mode)
	if !slices.Contains(testserver.Modes(), mode) {
		return testserver.Rule{}, badFlag("mode", v.mode, "want one of %s", joinModes(", "))
	}
	r := testserver.Rule{
		Name:      "default",
		Key:       testserver.KeySpec(v.key),
		Algorithm: v.algorithm,
		Limit:     v.limit,
		Window:    v.window,
		Burst:     v.burst,
		Mode:      mode,
		Shape:     v.shape,
	}
	// Mode-specific flags take their defaults only in their mode; given explicitly in another
	// mode they are passed on, and validation names them.
	if mode == testserver.ModeSoft || set["soft-percent"] {
		r.SoftPercent = v.softPercent
	}
	if mode == testserver.ModeElastic || set["capacity"] {
		r.Capacity = v.capa
	}
	if mode == testserver.ModeElastic || set["ceiling"] {
		r.Ceiling = v.ceiling
		if mode == testserver.ModeElastic && r.Ceiling == 0 && r.Limit > 0 {
			r.Ceiling = r.Limit * 2
			if r.Limit > math.MaxInt64/2 {
				r.Ceiling = math.MaxInt64
			}
		}
	}
	if err := r.Validate(); err != nil {
		return testserver.Rule{}, flagRuleError(err)
	}
	return r, nil
}

// ruleFieldFlags maps a Rule's JSON field names to the flags that set them.
var ruleFieldFlags = map[string]string{
	"algorithm":    "algorithm",
	"limit":        "limit",
	"window":       "window",
	"burst":        "burst",
	"mode":         "mode",
	"soft_percent": "soft-percent",
	"ceiling":      "ceiling",
	"capacity":     "capacity",
	"key":          "key",
	"shape":        "shape",
}

// flagRuleError turns a validation error of the flags' rule into a usageError naming the flag.
func flagRuleError(err error) error {
	var re *testserver.RuleError
	if errors.As(err, &re) {
		if name, ok := ruleFieldFlags[re.Field]; ok {
			return &usageError{Flag: name, Value: re.Value, Err: re.Err}
		}
	}
	return usage(err)
}
