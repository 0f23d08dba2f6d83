package testserver

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// Rule is one rate limit: which requests it matches, what key it counts them against, and the
// algorithm, quota and mode it enforces. Its JSON form (see [DecodeRules]) uses the field names in
// the tags, with durations written as Go duration strings ("1h", "500ms").
//
// A Rule is a plain value; [NewLimiter] and [Limiter.SetRules] validate and copy it.
type Rule struct {
	// Name identifies the rule in stats and is the policy name of the RateLimit fields.
	// Printable ASCII without quotes or backslashes, at most 64 bytes; default "default".
	// Names must be unique within one rule list.
	Name string `json:"name,omitempty"`
	// Methods restricts the rule to these HTTP methods (compared case-insensitively); empty
	// matches every method.
	Methods []string `json:"methods,omitempty"`
	// PathPrefix restricts the rule to paths starting with it; it must start with "/" when set.
	// Empty matches every path.
	PathPrefix string `json:"path_prefix,omitempty"`
	// Key says how the request's key is derived; see [KeySpec]. Default "global".
	Key KeySpec `json:"key,omitempty"`
	// KeyFunc, when set, derives the key instead of Key (Go only; not in JSON). It must be safe
	// for concurrent use.
	KeyFunc func(*http.Request) string `json:"-"`
	// Algorithm is one of algorithm.Names(): token-bucket, leaky-bucket, fixed-window,
	// sliding-log, sliding-window. Default "token-bucket".
	Algorithm string `json:"algorithm,omitempty"`
	// Limit is the quota: requests admitted per Window (at least 1).
	Limit int64 `json:"limit"`
	// Window is the quota's period (positive).
	Window time.Duration `json:"-"`
	// Burst is how many requests a fresh key admits at one instant; 0 means Limit. Only the
	// token and leaky buckets accept a Burst other than Limit.
	Burst int64 `json:"burst,omitempty"`
	// Mode is hard (default), soft, elastic or shadow; see [Mode].
	Mode Mode `json:"mode,omitempty"`
	// SoftPercent is how far above Limit a soft rule admits, in percent (0 to 10000). Soft mode
	// only.
	SoftPercent int64 `json:"soft_percent,omitempty"`
	// Ceiling is the most an elastic rule admits per Window while the server has spare capacity;
	// it must exceed Limit. Elastic mode only.
	Ceiling int64 `json:"ceiling,omitempty"`
	// Capacity is the elastic spare-capacity condition: the ceiling applies while fewer than
	// Capacity requests are in flight (see [WithInFlight]). At least 1; elastic mode only.
	Capacity int64 `json:"capacity,omitempty"`
	// Shape holds each admitted request until its leaky-bucket slot instead of answering at once
	// (traffic shaping instead of policing). Leaky bucket only. The wait is bounded by the queue
	// (Burst slots) and ends early, without calling the handler, when the request's context ends.
	Shape bool `json:"shape,omitempty"`
	// CountDenied counts every request the rule sees against its key, denied ones included, as
	// HAProxy's http_req_rate (a sliding window counter of every request) does: a client that keeps
	// sending while it is refused keeps its count above the limit and stays refused longer, where
	// by default a denial changes no state. A request another rule denies is counted too (it
	// reached the server). Sliding window counter only (in a bucket or a log a denied request has
	// nothing to take, and in a fixed window a count already at the limit decides nothing new);
	// default false.
	CountDenied bool `json:"count_denied,omitempty"`
	// Cost names a request header whose value, a whole number of at least 1, is what a request
	// weighs under this rule (the tokens an LLM API counts, the points of a GraphQL API): the
	// rule admits it when that many fit its quota, and counts that many. A request without the
	// header, or with a value that is not such a number, weighs 1. Default "": every request
	// weighs 1. A request that weighs more than the rule's burst is never admitted, as an API
	// refuses a prompt larger than its token limit.
	Cost string `json:"cost,omitempty"`
	// Unit is what the rule counts, for the personas that tell units apart: "requests" (the
	// default, "") or "tokens". The "openai" and "anthropic" personas write a rule counting
	// tokens as their token family of headers (x-ratelimit-*-tokens,
	// anthropic-ratelimit-tokens-*), and a rule counting requests as their requests family.
	Unit string `json:"unit,omitempty"`
	// Tiers gives single keys their own quota, by key or by one "label:value" part of it, such as
	// "user:241531" or "ip:203.0.113.7". Zero fields of a Tier inherit from the rule.
	Tiers map[string]Tier `json:"tiers,omitempty"`
}

// Tier overrides a rule's quota for one key. Zero fields take the rule's value, except Burst,
// which then means the tier's Limit, and Ceiling, which then scales the rule's Ceiling by
// Limit/rule.Limit (at least Limit+1).
type Tier struct {
	// Limit is the tier's quota per Window.
	Limit int64 `json:"limit,omitempty"`
	// Window is the tier's period.
	Window time.Duration `json:"-"`
	// Burst is the tier's burst; 0 means the tier's Limit.
	Burst int64 `json:"burst,omitempty"`
	// Ceiling is the tier's elastic ceiling (elastic rules only).
	Ceiling int64 `json:"ceiling,omitempty"`
}

// Validate checks one rule on its own (not name uniqueness) and returns a *[RuleError] naming the
// first bad field.
func (r Rule) Validate() error {
	_, err := compileRule(r, 0)
	return err
}

// ValidateRules checks a rule list: every rule, and that names are unique.
func ValidateRules(rules []Rule) error {
	_, err := compileRules(rules)
	return err
}

const maxNameLen = 64

func validName(s string) bool {
	if s == "" || len(s) > maxNameLen {
		return false
	}
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Units a rule counts (Rule.Unit).
const (
	// UnitRequests counts requests (the default).
	UnitRequests = "requests"
	// UnitTokens counts tokens, the weight each request's Cost header gives.
	UnitTokens = "tokens"
)

// cost is what r weighs under the rule: its Cost header's whole number, at least 1; else 1.
func (c *compiledRule) cost(r *http.Request) int64 {
	if c.rule.Cost == "" || r == nil {
		return 1
	}
	v := r.Header.Get(c.rule.Cost)
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// normalized returns r with defaults filled in.
func (r Rule) normalized() Rule {
	if r.Name == "" {
		r.Name = "default"
	}
	if r.Algorithm == "" {
		r.Algorithm = "token-bucket"
	}
	if r.Mode == "" {
		r.Mode = ModeHard
	}
	if r.Key == "" && r.KeyFunc == nil {
		r.Key = KeyGlobal
	}
	r.Methods = slices.Clone(r.Methods)
	for i, m := range r.Methods {
		r.Methods[i] = strings.ToUpper(strings.TrimSpace(m))
	}
	if r.Tiers != nil {
		t := make(map[string]Tier, len(r.Tiers))
		for k, v := range r.Tiers {
			t[k] = v
		}
		r.Tiers = t
	}
	return r
}

// compileRules validates and compiles a rule list.
func compileRules(rules []Rule) ([]*compiledRule, error) {
	out := make([]*compiledRule, 0, len(rules))
	names := make(map[string]int, len(rules))
	for i, r := range rules {
		c, err := compileRule(r, i)
		if err != nil {
			return nil, err
		}
		if j, dup := names[c.rule.Name]; dup {
			return nil, &RuleError{Index: i, Rule: c.rule.Name, Field: "name", Value: c.rule.Name,
				Err: fmt.Errorf("%w: also used by rule %d", ErrDuplicateRule, j)}
		}
		names[c.rule.Name] = i
		out = append(out, c)
	}
	return out, nil
}

// errNotHere is the cause for a field set where it has no meaning.
var errNotHere = errors.New("only valid")

// compileRule validates one rule and builds its algorithms.
func compileRule(in Rule, index int) (*compiledRule, error) {
	r := in.normalized()
	bad := func(field, value string, err error) error {
		return &RuleError{Index: index, Rule: r.Name, Field: field, Value: value, Err: err}
	}
	if !validName(r.Name) {
		return nil, bad("name", r.Name, fmt.Errorf("must be 1 to %d printable ASCII bytes without '\"' or '\\'", maxNameLen))
	}
	for i, m := range r.Methods {
		if !validToken(m) {
			return nil, bad(fmt.Sprintf("methods[%d]", i), m, errors.New("not an HTTP method token"))
		}
	}
	if r.PathPrefix != "" && !strings.HasPrefix(r.PathPrefix, "/") {
		return nil, bad("path_prefix", r.PathPrefix, errors.New("must start with \"/\""))
	}
	if r.Cost != "" && !validToken(r.Cost) {
		return nil, bad("cost", r.Cost, errors.New("not an HTTP header name"))
	}
	if r.Unit != "" && r.Unit != UnitRequests && r.Unit != UnitTokens {
		return nil, bad("unit", r.Unit, fmt.Errorf("want %q or %q", UnitRequests, UnitTokens))
	}
	c := &compiledRule{rule: r}
	if r.KeyFunc != nil {
		c.key = &keyDeriver{fn: r.KeyFunc}
	} else {
		k, err := parseKeySpec(r.Key)
		if err != nil {
			return nil, bad("key", string(r.Key), err)
		}
		c.key = k
	}
	mode, err := r.Mode.normalize()
	if err != nil {
		return nil, bad("mode", string(r.Mode), err)
	}
	r.Mode = mode
	if r.Mode != ModeSoft && r.SoftPercent != 0 {
		return nil, bad("soft_percent", fmt.Sprint(r.SoftPercent), fmt.Errorf("%w with mode soft", errNotHere))
	}
	if r.Mode == ModeSoft && (r.SoftPercent < 0 || r.SoftPercent > 10000) {
		return nil, bad("soft_percent", fmt.Sprint(r.SoftPercent), errors.New("must be between 0 and 10000"))
	}
	if r.Mode != ModeElastic {
		if r.Ceiling != 0 {
			return nil, bad("ceiling", fmt.Sprint(r.Ceiling), fmt.Errorf("%w with mode elastic", errNotHere))
		}
		if r.Capacity != 0 {
			return nil, bad("capacity", fmt.Sprint(r.Capacity), fmt.Errorf("%w with mode elastic", errNotHere))
		}
	} else {
		if r.Ceiling <= r.Limit {
			return nil, bad("ceiling", fmt.Sprint(r.Ceiling), fmt.Errorf("must exceed limit %d", r.Limit))
		}
		if r.Capacity < 1 {
			return nil, bad("capacity", fmt.Sprint(r.Capacity), errors.New("must be at least 1 (in-flight requests)"))
		}
	}
	if r.Shape && r.Algorithm != "leaky-bucket" {
		return nil, bad("shape", "true", fmt.Errorf("%w with algorithm leaky-bucket, not %q", errNotHere, r.Algorithm))
	}
	if r.CountDenied && r.Algorithm != algorithm.NameSlidingWindow {
		return nil, bad("count_denied", "true", fmt.Errorf("%w with algorithm %s, not %q", errNotHere,
			algorithm.NameSlidingWindow, r.Algorithm))
	}
	c.rule = r
	set, ferr := buildAlgorithms(r, r.Limit, r.Window, r.Burst, r.Ceiling)
	if ferr != nil {
		return nil, bad(ferr.field, ferr.value, ferr.err)
	}
	set.scope = ruleScope(r)
	c.base = set
	if len(r.Tiers) > 0 {
		c.tiers = make(map[string]*algSet, len(r.Tiers))
		keys := make([]string, 0, len(r.Tiers))
		for k := range r.Tiers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			t := r.Tiers[k]
			field := "tiers[" + k + "]"
			if k == "" {
				return nil, bad(field, k, errors.New("tier key must not be empty"))
			}
			limit, window, burst, ceiling := t.Limit, t.Window, t.Burst, t.Ceiling
			if limit == 0 {
				limit = r.Limit
			}
			if window == 0 {
				window = r.Window
			}
			if r.Mode == ModeElastic && ceiling == 0 {
				ceiling = max(limit+1, mulDiv(r.Ceiling, limit, r.Limit))
			}
			if r.Mode != ModeElastic && ceiling != 0 {
				return nil, bad(field+".ceiling", fmt.Sprint(ceiling), fmt.Errorf("%w with mode elastic", errNotHere))
			}
			if r.Mode == ModeElastic && ceiling <= limit {
				return nil, bad(field+".ceiling", fmt.Sprint(ceiling), fmt.Errorf("must exceed the tier's limit %d", limit))
			}
			ts, ferr := buildAlgorithms(r, limit, window, burst, ceiling)
			if ferr != nil {
				return nil, bad(field+"."+ferr.field, ferr.value, ferr.err)
			}
			ts.scope = fmt.Sprintf("%s|tier=%s|%d|%d|%d", set.scope, k, limit, window, burst)
			ts.tier = k
			c.tiers[k] = ts
		}
	}
	return c, nil
}

// mulDiv returns a*b/c rounded down, saturating instead of overflowing.
func mulDiv(a, b, c int64) int64 {
	if c <= 0 {
		return math.MaxInt64
	}
	if b != 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b / c
}

// ruleScope is a rule's identity: the state of its keys survives SetRules while it is unchanged.
func ruleScope(r Rule) string {
	return fmt.Sprintf("%s|%s|%d|%d|%d", r.Name, r.Algorithm, r.Limit, int64(r.Window), r.Burst)
}
