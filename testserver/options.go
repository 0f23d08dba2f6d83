package testserver

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/steadyhttp/steady/internal/anchoredclock"
)

// Option configures a [Limiter], the [Middleware] or a [Server]. Options marked "Server only"
// make NewLimiter and Middleware fail with [ErrServerOption]; the others apply to all three.
type Option interface {
	apply(*config)
}

type optionFunc struct {
	server bool
	name   string
	f      func(*config)
}

func (o optionFunc) apply(c *config) {
	if o.server {
		c.serverOnly = append(c.serverOnly, o.name)
	}
	o.f(c)
}

func limiterOption(f func(*config)) Option { return optionFunc{f: f} }
func serverOption(name string, f func(*config)) Option {
	return optionFunc{server: true, name: name, f: f}
}

// config is what the options set.
type config struct {
	clock     func() time.Time
	store     Store
	maxKeys   int
	ips       ipResolver
	status    int
	headers   bool
	inFlight  func() int64
	hook      func(time.Time, *http.Request, Result)
	statsKeys int
	persona   persona

	rules    []Rule
	addr     string
	response Response
	app      http.Handler
	faults   Faults
	arrivals int
	// idempotencyKeys is WithIdempotency's capacity; -1 without it.
	idempotencyKeys int
	serverOnly      []string
	errs            []error
}

// DefaultStatsKeys is the default number of keys whose counters Stats reports individually.
const DefaultStatsKeys = 10_000

// DefaultArrivalLog is the default number of arrivals a Server remembers.
const DefaultArrivalLog = 10_000

func newConfig(opts []Option) *config {
	c := &config{
		clock:     new(anchoredclock.Clock).Wall,
		ips:       ipResolver{v4Bits: 32, v6Bits: 64},
		status:    http.StatusTooManyRequests,
		headers:   true,
		statsKeys: DefaultStatsKeys,
		addr:      "127.0.0.1:0",
		response:  Response{Status: http.StatusOK, Body: "ok\n"},
		arrivals:  DefaultArrivalLog,
		// no Idempotency-Key handling unless asked
		idempotencyKeys: -1,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(c)
		}
	}
	return c
}

func (c *config) fail(option, value, format string, args ...any) {
	c.errs = append(c.errs, &OptionError{Option: option, Value: value, Err: fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)})
}

// limiterErr returns the first option error, or ErrServerOption if server options were given.
func (c *config) limiterErr() error {
	if len(c.serverOnly) > 0 {
		return &OptionError{Option: strings.Join(c.serverOnly, ", "), Err: ErrServerOption}
	}
	return c.serverErr()
}

func (c *config) serverErr() error {
	if len(c.errs) > 0 {
		return c.errs[0]
	}
	return nil
}

// WithClock sets the clock the limiter decides with and the Server stamps arrivals with; default
// the system clock: time.Now, read in full once a second and advanced in between by the monotonic
// clock alone, which halves the cost of a reading and follows a step of the system clock within a
// second (inside a testing/synctest bubble it is the bubble's time.Now exactly). Waits (shaping, latency) use real timers, so a test that controls time through a
// clock should not use them, or should run inside a testing/synctest bubble with time.Now.
// The function must be safe for concurrent use. nil is an error.
func WithClock(now func() time.Time) Option {
	return limiterOption(func(c *config) {
		if now == nil {
			c.fail("WithClock", "nil", "clock must not be nil")
			return
		}
		c.clock = now
	})
}

// WithStore sets the Store that keeps per-key state; default a [MemoryStore] of
// [WithMaxKeys] keys, owned and closed by the Limiter. A Store given here is not closed by the
// Limiter; the caller closes it. nil is an error.
func WithStore(s Store) Option {
	return limiterOption(func(c *config) {
		if s == nil {
			c.fail("WithStore", "nil", "store must not be nil")
			return
		}
		c.store = s
	})
}

// WithMaxKeys sets the cap on tracked states of the default memory store; default
// [DefaultMaxKeys] (100,000). It must be at least 1; it has no effect with [WithStore].
func WithMaxKeys(n int) Option {
	return limiterOption(func(c *config) {
		if n < 1 {
			c.fail("WithMaxKeys", fmt.Sprint(n), "must be at least 1")
			return
		}
		c.maxKeys = n
	})
}

// WithTrustedProxies sets the proxies (CIDR prefixes such as "10.0.0.0/8", or single addresses)
// whose X-Forwarded-For and X-Real-IP headers name the client for "ip" keys. By default none is
// trusted and the key is RemoteAddr's address. X-Forwarded-For is read from the right, skipping
// trusted hops; the first untrusted address is the client. A malformed entry is an error.
func WithTrustedProxies(cidrs ...string) Option {
	return limiterOption(func(c *config) {
		for _, s := range cidrs {
			s = strings.TrimSpace(s)
			if p, err := netip.ParsePrefix(s); err == nil {
				c.ips.trusted = append(c.ips.trusted, p.Masked())
				continue
			}
			a, err := netip.ParseAddr(s)
			if err != nil {
				c.fail("WithTrustedProxies", s, "not a CIDR prefix or IP address")
				continue
			}
			a = a.Unmap()
			c.ips.trusted = append(c.ips.trusted, netip.PrefixFrom(a, a.BitLen()))
		}
	})
}

// WithIPv6Prefix sets how many leading bits of an IPv6 client address form its "ip" key; default
// 64, so one host (which usually owns a /64) cannot mint millions of keys. 1 to 128.
func WithIPv6Prefix(bits int) Option {
	return limiterOption(func(c *config) {
		if bits < 1 || bits > 128 {
			c.fail("WithIPv6Prefix", fmt.Sprint(bits), "must be between 1 and 128")
			return
		}
		c.ips.v6Bits = bits
	})
}

// WithIPv4Prefix sets how many leading bits of an IPv4 client address form its "ip" key;
// default 32 (one key per address). 1 to 32.
func WithIPv4Prefix(bits int) Option {
	return limiterOption(func(c *config) {
		if bits < 1 || bits > 32 {
			c.fail("WithIPv4Prefix", fmt.Sprint(bits), "must be between 1 and 32")
			return
		}
		c.ips.v4Bits = bits
	})
}

// WithStatus sets the status of throttled responses; default 429 Too Many Requests (503 is the
// common alternative). 400 to 599.
func WithStatus(code int) Option {
	return limiterOption(func(c *config) {
		if code < 400 || code > 599 {
			c.fail("WithStatus", fmt.Sprint(code), "must be between 400 and 599")
			return
		}
		c.status = code
	})
}

// WithHeaders switches the rate-limit headers and the problem+json body on or off; default on.
// Off, a throttled response carries only its status, as many servers in the wild do (the shadow
// marker Steady-Shadow is still set).
func WithHeaders(on bool) Option {
	return limiterOption(func(c *config) { c.headers = on })
}

// WithInFlight sets the load measure of elastic rules: a rule's ceiling applies while it returns
// less than the rule's Capacity. Default: the number of requests inside the limiter's middleware
// handlers (Limiter.InFlight). The function must be safe for concurrent use. nil is an error.
func WithInFlight(f func() int64) Option {
	return limiterOption(func(c *config) {
		if f == nil {
			c.fail("WithInFlight", "nil", "function must not be nil")
			return
		}
		c.inFlight = f
	})
}

// WithRequestHook sets a function the middleware calls for every rate-limited request it sees,
// after the decision and before answering, with the decision time and the Result. The Server
// calls it for every request except /-/ endpoints. It runs on the request's goroutine, must be
// safe for concurrent use and should return quickly. nil removes the hook.
func WithRequestHook(f func(now time.Time, r *http.Request, res Result)) Option {
	return limiterOption(func(c *config) { c.hook = f })
}

// WithStatsKeys sets how many keys Stats reports individually (the first ones seen; later keys
// are counted only per rule and in Stats.UntrackedKeys); default [DefaultStatsKeys]. 0 reports no
// keys; negative is an error.
func WithStatsKeys(n int) Option {
	return limiterOption(func(c *config) {
		if n < 0 {
			c.fail("WithStatsKeys", fmt.Sprint(n), "must not be negative")
			return
		}
		c.statsKeys = n
	})
}

// WithRules sets the Server's rules; default none (every request admitted). Server only: a
// Limiter takes its rules as an argument. Rules are validated by New.
func WithRules(rules ...Rule) Option {
	return serverOption("WithRules", func(c *config) { c.rules = append(c.rules, rules...) })
}

// WithAddr sets the address the Server listens on; default "127.0.0.1:0" (a free loopback
// port). Server only.
func WithAddr(addr string) Option {
	return serverOption("WithAddr", func(c *config) { c.addr = addr })
}

// WithResponse sets how the Server answers admitted requests; default status 200 with body
// "ok\n" (text/plain) and no latency. Server only.
func WithResponse(r Response) Option {
	return serverOption("WithResponse", func(c *config) {
		if err := r.validate(); err != nil {
			c.errs = append(c.errs, &OptionError{Option: "WithResponse", Err: err})
			return
		}
		c.response = r
	})
}

// WithHandler makes the Server pass admitted requests to h (for example an
// httputil.ReverseProxy to a real upstream) instead of answering them with the configured
// [Response]; injected faults still come first. Default: none (the Response answers). nil is an
// error. Server only.
func WithHandler(h http.Handler) Option {
	return serverOption("WithHandler", func(c *config) {
		if h == nil {
			c.fail("WithHandler", "nil", "handler must not be nil")
			return
		}
		c.app = h
	})
}

// WithFaults makes the Server inject faults into admitted requests; default none. Server only.
func WithFaults(f Faults) Option {
	return serverOption("WithFaults", func(c *config) {
		if err := f.validate(); err != nil {
			c.errs = append(c.errs, &OptionError{Option: "WithFaults", Err: err})
			return
		}
		c.faults = f
	})
}

// WithArrivalLog sets how many arrivals the Server remembers for Server.Arrivals (a ring: the
// oldest are dropped); default [DefaultArrivalLog]. 0 keeps none. Server only.
func WithArrivalLog(n int) Option {
	return serverOption("WithArrivalLog", func(c *config) {
		if n < 0 {
			c.fail("WithArrivalLog", fmt.Sprint(n), "must not be negative")
			return
		}
		c.arrivals = n
	})
}

// WithIdempotency makes the Server honour the Idempotency-Key header of admitted requests (see
// [Idempotency]): the first request with a key is answered as configured and its answer kept, later
// ones with the key get it replayed (Idempotent-Replayed: true). It sits after the injected faults
// (a fault answers before the key is seen, so the key's next request is executed) and before the
// [WithHandler] handler or the [Response]; every request still passes the limiter and counts
// against it. Stats().Server.Idempotency counts executions and replays. maxKeys is how many keys
// are remembered, 0 for [DefaultIdempotencyKeys]; negative is an error. Default: off (the header
// is passed on like any other). Server only.
func WithIdempotency(maxKeys int) Option {
	return serverOption("WithIdempotency", func(c *config) {
		if maxKeys < 0 {
			c.fail("WithIdempotency", fmt.Sprint(maxKeys), "must not be negative")
			return
		}
		c.idempotencyKeys = maxKeys
	})
}
