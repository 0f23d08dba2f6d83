package dialects

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// ErrUnknownDialect is matched by the error of [NewReader] when [ForHost] names a dialect that is
// neither built in nor given with [WithDialect].
var ErrUnknownDialect = errors.New("dialects: unknown dialect")

// ErrInvalidOption is matched by the errors of [NewReader] about other bad option values.
var ErrInvalidOption = errors.New("dialects: invalid option")

// Reader reads responses with user dialects, per-host forced dialects and the built-ins. Create it
// with [NewReader]; the zero value is not usable. A Reader is immutable after construction and
// safe for concurrent use.
type Reader struct {
	user     []Dialect
	hosts    map[string]Dialect
	throttle []int
}

// Option configures a [Reader].
type Option interface {
	apply(*readerConfig)
}

type optionFunc func(*readerConfig)

func (f optionFunc) apply(c *readerConfig) { f(c) }

type readerConfig struct {
	user     []Dialect
	hosts    []hostDialect
	throttle []int
	errs     []error
}

type hostDialect struct{ host, name string }

// WithDialect adds a user dialect, tried before the built-ins (and before dialects added earlier,
// so the last one given is tried first). nil is an error.
func WithDialect(d Dialect) Option {
	return optionFunc(func(c *readerConfig) {
		if d == nil {
			c.errs = append(c.errs, fmt.Errorf("%w: WithDialect(nil)", ErrInvalidOption))
			return
		}
		c.user = append([]Dialect{d}, c.user...)
	})
}

// ForHost makes every response from host read by the dialect named name (a user dialect first,
// else a built-in), and by it alone: the built-in GitHub dialect then also reads the body of a 403
// that carries no GitHub header. host is matched against the request URL's host
// case-insensitively, with or without its port ("api.github.com" matches "api.github.com:443").
// Default: none (every host is recognised from its responses). An unknown name is an error
// matching [ErrUnknownDialect].
func ForHost(host, name string) Option {
	return optionFunc(func(c *readerConfig) {
		c.hosts = append(c.hosts, hostDialect{strings.ToLower(strings.TrimSpace(host)), name})
	})
}

// WithThrottleStatus sets the statuses that make a response a throttle in every dialect, in
// addition to what a dialect reads itself (GitHub's 403); default 429 alone. 503 is the common
// addition. Each code must be 400 to 599.
func WithThrottleStatus(codes ...int) Option {
	return optionFunc(func(c *readerConfig) {
		for _, code := range codes {
			if code < 400 || code > 599 {
				c.errs = append(c.errs, fmt.Errorf("%w: WithThrottleStatus(%d): must be 400 to 599", ErrInvalidOption, code))
				return
			}
		}
		c.throttle = append([]int(nil), codes...)
	})
}

// NewReader returns a Reader with the given options. Errors match [ErrUnknownDialect] or
// [ErrInvalidOption].
func NewReader(opts ...Option) (*Reader, error) {
	c := readerConfig{throttle: []int{http.StatusTooManyRequests}}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if len(c.errs) > 0 {
		return nil, c.errs[0]
	}
	r := &Reader{user: c.user, throttle: c.throttle}
	for _, hd := range c.hosts {
		if hd.host == "" {
			return nil, fmt.Errorf("%w: ForHost with an empty host", ErrInvalidOption)
		}
		d := r.lookup(hd.name)
		if d == nil {
			return nil, fmt.Errorf("%w: ForHost(%q, %q)", ErrUnknownDialect, hd.host, hd.name)
		}
		if r.hosts == nil {
			r.hosts = map[string]Dialect{}
		}
		r.hosts[hd.host] = d
	}
	return r, nil
}

// lookup finds a dialect by name: user dialects first, then the built-ins.
func (r *Reader) lookup(name string) Dialect {
	for _, d := range r.user {
		if d.Name() == name {
			return d
		}
	}
	if d, ok := Lookup(name); ok {
		return d
	}
	return nil
}

// forced returns the dialect ForHost set for resp's host, or nil.
func (r *Reader) forced(resp *http.Response) Dialect {
	if len(r.hosts) == 0 || resp.Request == nil || resp.Request.URL == nil {
		return nil
	}
	host := strings.ToLower(resp.Request.URL.Host)
	if d, ok := r.hosts[host]; ok {
		return d
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		if d, ok := r.hosts[h]; ok {
			return d
		}
	}
	return nil
}

// Read reads resp: with the dialect forced for its host, else with the first user dialect that
// recognises it, else with the first built-in that does (see [Read] for the completion, the body
// and concurrency). A nil resp reads as the zero Reading.
func (r *Reader) Read(resp *http.Response, now time.Time) Reading { return r.ReadInto(nil, resp, now) }

// ReadInto is [Reader.Read] with the quotas a built-in dialect reads stored in buf's array, from
// its start, as far as its capacity goes (beyond it, in a new one); a user dialect's are the slice
// it returned. A caller that reads every response (a learner) passes the same array each time, and
// allocates nothing for the quotas once it holds as many as a response declares. The array must
// not be used by another goroutine during the call, nor read by one afterwards while it may be
// passed again. The Reading is returned by value: the caller's copy, on its stack, costs no
// pointer writes to the heap.
func (r *Reader) ReadInto(buf []Quota, resp *http.Response, now time.Time) Reading {
	quotas := buf[:0]
	if resp == nil {
		return Reading{Quotas: quotas}
	}
	var (
		rd Reading
		ok bool
		d  Dialect
	)
	var fams family // the header families present, which the built-ins are asked by
	scanned := false
	if d = r.forced(resp); d == nil {
		scanned = true
		var carries bool
		fams, carries = scanFields(resp.Header)
		if len(r.user) == 0 && resp.StatusCode < 400 && !carries {
			// The common answer: a success with no header any built-in reads. Nothing to ask
			// the dialects; a throttle status list is for refusals.
			return Reading{Quotas: quotas}
		}
	}
	if d != nil {
		switch f := d.(type) {
		case forcer:
			rd, ok = f.readForcedTo(resp, now, quotas), true
		case builtin:
			rd, ok = f.readTo(resp, now, quotas)
		default:
			rd, ok = d.Read(resp, now)
		}
	} else {
		for _, u := range r.user {
			if rd, ok = u.Read(resp, now); ok {
				d = u
				break
			}
		}
		if !ok {
			for i, b := range builtins {
				if builtinFamilies[i]&fams == 0 {
					continue // cannot recognise it: none of its fields is there
				}
				if rd, ok = b.readTo(resp, now, quotas); ok {
					d = b
					break
				}
			}
		}
	}
	if !ok {
		rd = Reading{Quotas: quotas}
	} else {
		if rd.Dialect == "" {
			rd.Dialect = d.Name()
		}
		if _, isBuiltin := d.(builtin); isBuiltin {
			// A 429 is a throttle in every built-in dialect (their Read), whatever statuses
			// the Reader was given.
			markThrottled(resp, &rd, throttle429)
		}
	}
	if scanned && fams&famWait == 0 {
		markThrottled(resp, &rd, r.throttle) // no field of a wait for finish to look up
	} else {
		finish(resp, now, &rd, r.throttle)
	}
	return rd
}

// limitField reports whether a field named k may be one a built-in dialect reads or recognises a
// response by (scanFields asks it of each name), in any letter case, in one pass over it. The
// fields a dialect is recognised by count too (Stripe's Request-Id, GitHub's X-GitHub-*), so a
// success reads as its dialect's. Every other name a built-in reads contains "limit" (RateLimit,
// Rate-Limit, Sforce-Limit-Info, Shopify's Call-Limit) or "retry" (Retry-After and its variants,
// Stripe-Should-Retry); a name that contains either and is none of them only costs a full read.
func limitField(k string) bool {
	if len(k) == len("Request-Id") && strings.EqualFold(k, "Request-Id") {
		return true
	}
	if len(k) >= len("x-github-") && strings.EqualFold(k[:len("x-github-")], "x-github-") {
		return true
	}
	for i := 0; i+5 <= len(k); i++ {
		switch k[i] | 0x20 { // ASCII lower case; a non-letter that lands on 'l' or 'r' fails below
		case 'l':
			if hasFoldAt(k, i, "limit") {
				return true
			}
		case 'r':
			if hasFoldAt(k, i, "retry") {
				return true
			}
		}
	}
	return false
}

// hasFoldAt reports whether s holds the lower-case ASCII word at i, ignoring ASCII case in s;
// i+len(word) must not pass the end of s.
func hasFoldAt(s string, i int, word string) bool {
	for j := 0; j < len(word); j++ {
		c := s[i+j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[j] {
			return false
		}
	}
	return true
}
