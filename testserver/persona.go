package testserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A persona makes the limiter answer as one real API does: its statuses, header names, reset
// formats and bodies (see [WithDialect]). Personas are writers only; the client's parsers (package
// dialects) are tested against literal responses from each vendor's documentation, and against a
// persona only in addition.
type persona interface {
	// algorithm is the vendor's documented limiter kind, used for rules that do not name one; ""
	// keeps the default (token-bucket).
	algorithm() string
	// admitted sets the headers of an admitted response.
	admitted(h http.Header, v personaView)
	// denied answers a throttled request.
	denied(w http.ResponseWriter, v personaView)
}

// personaView is what a persona writes from: the decision, its clock, and the quotas it names.
type personaView struct {
	now time.Time
	res *Result
	// head is the rule a response advertises (see Result.headline); ok is false when no rule
	// matched.
	head   RuleResult
	headOK bool
	// tokens is the rule counting tokens (Rule.Unit) that a response advertises, when one
	// matched (tokensOK); head is then chosen among the other rules.
	tokens   RuleResult
	tokensOK bool
	// primary is the first matching rule, the one GitHub's persona calls its primary limit.
	primary   RuleResult
	primaryOK bool
	// burst is the capacity of head's quota (its Burst; Limit for the window algorithms).
	burst int64
	// status is the configured throttle status (WithStatus), for the personas without their own.
	status int
	// retry is the wait of a denial, at least a nanosecond.
	retry time.Duration
}

// personaView builds the view of res at now.
func (l *Limiter) personaView(res *Result, now time.Time) personaView {
	v := personaView{now: now, res: res, status: l.cfg.status, retry: max(res.RetryAfter, time.Nanosecond)}
	rules := *l.rules.Load()
	if hasTokenRule(rules) {
		var req, tok Result
		for _, rr := range res.Rules {
			if unitOf(rules, rr.Rule) == UnitTokens {
				tok.Rules = append(tok.Rules, rr)
			} else {
				req.Rules = append(req.Rules, rr)
			}
		}
		v.head, v.headOK = req.partHeadline()
		v.tokens, v.tokensOK = tok.partHeadline()
	} else {
		v.head, v.headOK = res.headline()
	}
	if len(res.Rules) > 0 {
		v.primary, v.primaryOK = res.Rules[0], true
	}
	v.burst = v.head.Limit
	if v.headOK {
		for _, c := range rules {
			if c.rule.Name != v.head.Rule {
				continue
			}
			q := c.base
			if t, ok := c.tiers[v.head.Tier]; ok && v.head.Tier != "" {
				q = t
			}
			v.burst = q.base.Burst()
			break
		}
	}
	return v
}

// hasTokenRule reports whether a rule counts tokens.
func hasTokenRule(rules []*compiledRule) bool {
	for _, c := range rules {
		if c.rule.Unit == UnitTokens {
			return true
		}
	}
	return false
}

// unitOf is the unit of the rule named name ("" when none is).
func unitOf(rules []*compiledRule, name string) string {
	for _, c := range rules {
		if c.rule.Name == name {
			return c.rule.Unit
		}
	}
	return ""
}

// partHeadline is headline over a part of a result's rules: denied when one of them denies.
func (res *Result) partHeadline() (RuleResult, bool) {
	res.Allowed = true
	for _, rr := range res.Rules {
		if !rr.Allowed && !rr.Shadowed {
			res.Allowed = false
		}
	}
	return res.headline()
}

// personas are the dialects WithDialect accepts.
var personas = map[string]persona{
	"ietf":        ietfPersona{},
	"x-ratelimit": xRateLimitPersona{},
	"github":      gitHubPersona{},
	"openai":      openAIPersona{},
	"anthropic":   anthropicPersona{},
	"shopify":     shopifyPersona{},
	"discord":     discordPersona{},
	"stripe":      stripePersona{},
	"none":        nonePersona{},
}

// Dialects returns the names [WithDialect] accepts, sorted: anthropic, discord, github, ietf,
// none, openai, shopify, stripe, x-ratelimit.
func Dialects() []string {
	names := make([]string, 0, len(personas))
	for n := range personas {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// WithDialect makes the limiter answer as the named API does (a persona), instead of its default
// (429 with Retry-After, the IETF RateLimit fields, X-RateLimit-* and a problem+json body):
//
//   - "ietf": only RateLimit-Policy / RateLimit and Retry-After, the [WithStatus] status;
//   - "x-ratelimit": only X-RateLimit-Limit / -Remaining / -Reset, the reset in Unix seconds,
//     and Retry-After, the [WithStatus] status;
//   - "github": x-ratelimit-limit / -remaining / -used / -reset (Unix seconds) / -resource: core
//     from the first matching rule (the primary limit); a denial by it is a 403 with remaining 0
//     and no retry-after, a denial by any later rule a secondary-limit 403 with retry-after,
//     quota left and GitHub's "secondary rate limit" message; fixed-window by default;
//   - "openai": x-ratelimit-{limit,remaining,reset}-requests with Go-duration resets ("6m0s"), and
//     x-ratelimit-*-tokens from a rule counting tokens (Rule.Unit, Rule.Cost), 429 with
//     retry-after and OpenAI's error body; token-bucket (continuously refilled) by default;
//   - "anthropic": anthropic-ratelimit-requests-{limit,remaining,reset} with RFC 3339 resets, and
//     anthropic-ratelimit-tokens-* from a rule counting tokens, 429 with retry-after and
//     Anthropic's error body; token-bucket by default;
//   - "shopify": X-Shopify-Shop-Api-Call-Limit: used/capacity, 429 with a decimal Retry-After
//     ("2.0"); leaky-bucket by default (Shopify's REST bucket: Limit 40 per 20s leaks 2/s);
//   - "discord": X-RateLimit-Limit / -Remaining / -Reset (Unix seconds, 3 decimals) /
//     -Reset-After / -Bucket, 429 with Retry-After, X-RateLimit-Scope: user and Discord's JSON body;
//     fixed-window by default;
//   - "stripe": a Request-Id on every response, 429 with Stripe's rate_limit error body and no rate
//     limit header at all (as Stripe answers);
//   - "none": no rate-limit header and no body, the [WithStatus] status.
//
// The default algorithm applies to rules that leave Algorithm empty. Personas that set the Date
// header set it from the limiter's clock, so that Unix-time resets and dates read back exactly
// under [WithClock]. [WithHeaders](false) still sends the status alone. Default: no persona. An
// unknown name is an error.
func WithDialect(name string) Option {
	return limiterOption(func(c *config) {
		p, ok := personas[name]
		if !ok {
			c.fail("WithDialect", name, "want one of %s", strings.Join(Dialects(), ", "))
			return
		}
		c.persona = p
	})
}

// personaDefaults returns rules with the persona's algorithm filled into rules that name none.
func personaDefaults(p persona, rules []Rule) []Rule {
	if p == nil || p.algorithm() == "" {
		return rules
	}
	out := slices.Clone(rules)
	for i := range out {
		if out[i].Algorithm == "" {
			out[i].Algorithm = p.algorithm()
		}
	}
	return out
}

// ceilSeconds returns d in whole seconds rounded up, at least min.
func ceilSeconds(d time.Duration, least int64) int64 {
	return max(int64((d+time.Second-1)/time.Second), least)
}

// unixCeil returns the Unix time of now+d in whole seconds, rounded up.
func unixCeil(now time.Time, d time.Duration) int64 {
	t := now.Add(d)
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// setDate sets the Date header from the limiter's clock.
func setDate(h http.Header, now time.Time) {
	h.Set("Date", now.UTC().Format(http.TimeFormat))
}

// writeJSON writes status with a JSON body.
func writeJSON(w http.ResponseWriter, status int, body any) {
	b, _ := json.Marshal(body)
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
