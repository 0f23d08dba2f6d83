package dialects

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/dunglas/httpsfv"
)

// ietf reads the IETF draft RateLimit header fields, in their current form and the older ones.
//
// Source: draft-ietf-httpapi-ratelimit-headers (revisions -10, September 2025, and -11, May 2026:
// https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/), sections "RateLimit-Policy
// Field" and "RateLimit Field": both are structured-field Lists (RFC 9651) of Items named by a
// String or Token.
//
//   - RateLimit-Policy members carry q (quota, Integer), w (window, Integer seconds), qu (quota unit,
//     "requests", "content-bytes" or "concurrent-requests"; default requests) and pk (partition
//     key). Example from the draft: RateLimit-Policy: "default";q=100;w=10.
//   - RateLimit members carry r (remaining, Integer) and t (reset, Integer delta-seconds).
//     Example: RateLimit: "default";r=50;t=30.
//   - Revision -07 wrote the quota as l (default;l=100;w=60), accepted as q; earlier revisions wrote
//     RateLimit as a Dictionary (limit=100, remaining=50, reset=30) and a policy as an Integer item
//     (RateLimit-Policy: 100;w=60), both accepted.
//   - Revisions up to -06 used three fields instead: RateLimit-Limit (an Integer, optionally
//     followed by quota policies: "10, 10;w=1, 50;w=60"), RateLimit-Remaining and RateLimit-Reset
//     (delta-seconds). They are read when neither of the current fields is.
//
// Atlassian sends the same syntax under Beta-RateLimit-Policy and Beta-RateLimit (Jira Cloud
// "Rate limiting", https://developer.atlassian.com/cloud/jira/platform/rate-limiting; example
// headers quoted on the Atlassian developer community: Beta-Ratelimit-Policy:
// "tenant-app-quota";q=100100;w=3600 and Beta-Ratelimit: "tenant-app-quota";r=17842;t=2107): read
// when the unprefixed fields are absent.
//
// Quotas are in the order of the RateLimit field's members (each joined with the policy of the
// same name), then the policies RateLimit did not mention; a lone member of each joins whatever
// their names. A t above 1e9 is read as a Unix time, as some servers send it.
type ietf struct{}

// Name returns "ietf".
func (ietf) Name() string { return "ietf" }

// Read reads the IETF fields; ok is false when none is present.
func (ietf) Read(resp *http.Response, now time.Time) (Reading, bool) {
	return readBuiltin(ietf{}, resp, now)
}

// readTo is Read with its quotas appended to quotas, not finished (see builtin).
func (ietf) readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool) {
	h := resp.Header
	policies, limits := h["Ratelimit-Policy"], h["Ratelimit"]
	if len(policies) == 0 && len(limits) == 0 {
		policies, limits = h["Beta-Ratelimit-Policy"], h["Beta-Ratelimit"]
	}
	legacy := has(h, "Ratelimit-Limit") || has(h, "Ratelimit-Remaining") || has(h, "Ratelimit-Reset")
	r := Reading{Dialect: "ietf", Quotas: quotas}
	switch {
	case len(limits) > 0 || (len(policies) > 0 && !legacy):
		r.Quotas = draftQuotas(r.Quotas, policies, limits, h, now)
	case legacy:
		if q, ok := legacyQuota(h, now); ok {
			r.Quotas = append(r.Quotas, q)
		}
	default:
		return Reading{}, false
	}
	return r, true
}

// draftPolicy is one RateLimit-Policy member; draftLimit one RateLimit member.
type draftPolicy struct {
	name   string
	quota  Quota
	joined bool
}

type draftLimit struct {
	name  string
	quota Quota // Remaining/Reset, and Limit from the dictionary form
}

// draftQuotas joins the two fields into quotas, appended to out. A field that is not a valid
// structured field is ignored as a whole; a bad parameter on its own.
func draftQuotas(out []Quota, policyValues, limitValues []string, h http.Header, now time.Time) []Quota {
	policies := parsePolicies(policyValues)
	limits := parseLimits(limitValues, h, now)
	for _, l := range limits {
		q := l.quota
		var p *draftPolicy
		for i := range policies {
			if !policies[i].joined && policies[i].name == l.name {
				p = &policies[i]
				break
			}
		}
		if p == nil && len(policies) == 1 && len(limits) == 1 && !policies[0].joined {
			p = &policies[0]
		}
		if p != nil {
			p.joined = true
			q.Unit, q.Limit, q.Window = p.quota.Unit, p.quota.Limit, p.quota.Window
			if l.quota.Limit > 0 && q.Limit == 0 {
				q.Limit = l.quota.Limit
			}
		}
		q.Name = l.name
		out = append(out, q)
	}
	for _, p := range policies {
		if !p.joined {
			q := p.quota
			q.Name = p.name
			out = append(out, q)
		}
	}
	return out
}

// memberName returns an Item's name: its String or Token value, "" otherwise.
func memberName(v any) string {
	switch n := v.(type) {
	case string:
		return n
	case httpsfv.Token:
		return string(n)
	}
	return ""
}

// parsePolicies parses RateLimit-Policy.
func parsePolicies(values []string) []draftPolicy {
	if len(values) == 0 {
		return nil
	}
	list, err := httpsfv.UnmarshalList(values)
	if err != nil {
		return nil
	}
	var out []draftPolicy
	for _, m := range list {
		item, ok := m.(httpsfv.Item)
		if !ok {
			continue
		}
		p := draftPolicy{name: memberName(item.Value)}
		if n, ok := item.Value.(int64); ok && n > 0 {
			p.quota.Limit = n
		}
		if item.Params != nil {
			for _, key := range [...]string{"l", "q"} {
				if v, ok := item.Params.Get(key); ok {
					if n, ok := v.(int64); ok && n > 0 {
						p.quota.Limit = n
					}
				}
			}
			if v, ok := item.Params.Get("w"); ok {
				p.quota.Window = sfWindow(v)
			}
			if v, ok := item.Params.Get("qu"); ok {
				p.quota.Unit = quotaUnit(memberName(v))
			}
		}
		out = append(out, p)
	}
	return out
}

// quotaUnit maps the draft's qu values to Units.
func quotaUnit(qu string) Unit {
	switch qu {
	case "", "requests":
		return UnitRequests
	case "content-bytes":
		return UnitBytes
	case "concurrent-requests":
		return UnitConcurrentRequests
	}
	return UnitOther
}

// sfWindow converts an Integer or Decimal number of seconds to a window; 0 when invalid.
func sfWindow(v any) time.Duration {
	var w time.Duration
	switch n := v.(type) {
	case int64:
		if n <= 0 || n > int64(maxWindow/time.Second) {
			return 0
		}
		w = time.Duration(n) * time.Second
	case float64:
		if !(n > 0 && n <= maxWindow.Seconds()) {
			return 0
		}
		w = time.Duration(math.Ceil(n * 1e9))
	}
	if !validWindow(w) {
		return 0
	}
	return w
}

// sfReset converts an Integer or Decimal reset (delta-seconds, or above 1e9 a Unix time) to a wait,
// with its grain (see Quota.ResetGrain): an Integer of seconds overstates the true time by up to
// a second (two for a Unix time against the Date header), a Decimal carries its fraction.
func sfReset(v any, h http.Header, now time.Time) (d, grain time.Duration, ok bool) {
	switch n := v.(type) {
	case int64:
		if n < 0 {
			return 0, 0, false
		}
		s := strconv.FormatInt(n, 10)
		d, _, ok = parseReset(s, h, now)
		return d, resetGrain(s, h), ok
	case float64:
		if math.IsNaN(n) || n < 0 {
			return 0, 0, false
		}
		d, _, ok = parseReset(strconv.FormatFloat(n, 'f', -1, 64), h, now)
		return d, 0, ok
	}
	return 0, 0, false
}

// parseLimits parses RateLimit: a List, or the Dictionary of earlier revisions.
func parseLimits(values []string, h http.Header, now time.Time) []draftLimit {
	if len(values) == 0 {
		return nil
	}
	list, err := httpsfv.UnmarshalList(values)
	if err != nil {
		if l, ok := parseLimitDictionary(values, h, now); ok {
			return []draftLimit{l}
		}
		return nil
	}
	var out []draftLimit
	for _, m := range list {
		item, ok := m.(httpsfv.Item)
		if !ok {
			continue
		}
		l := draftLimit{name: memberName(item.Value)}
		if item.Params != nil {
			if v, ok := item.Params.Get("r"); ok {
				if n, ok := v.(int64); ok && n >= 0 {
					l.quota.Remaining, l.quota.HasRemaining = n, true
				}
			}
			if v, ok := item.Params.Get("t"); ok {
				l.quota.Reset, l.quota.ResetGrain, l.quota.HasReset = sfReset(v, h, now)
			}
		}
		out = append(out, l)
	}
	return out
}

// parseLimitDictionary reads RateLimit: limit=100, remaining=50, reset=30.
func parseLimitDictionary(values []string, h http.Header, now time.Time) (draftLimit, bool) {
	dict, err := httpsfv.UnmarshalDictionary(values)
	if err != nil {
		return draftLimit{}, false
	}
	var l draftLimit
	found := false
	value := func(key string) (any, bool) {
		m, ok := dict.Get(key)
		if !ok {
			return nil, false
		}
		item, ok := m.(httpsfv.Item)
		return item.Value, ok
	}
	if v, ok := value("limit"); ok {
		if n, ok := v.(int64); ok && n > 0 {
			l.quota.Limit, found = n, true
		}
	}
	if v, ok := value("remaining"); ok {
		if n, ok := v.(int64); ok && n >= 0 {
			l.quota.Remaining, l.quota.HasRemaining, found = n, true, true
		}
	}
	if v, ok := value("reset"); ok {
		if l.quota.Reset, l.quota.ResetGrain, l.quota.HasReset = sfReset(v, h, now); l.quota.HasReset {
			found = true
		}
	}
	return l, found
}

// legacyQuota reads RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset (revisions up to -06).
func legacyQuota(h http.Header, now time.Time) (Quota, bool) {
	q, ok := tripleQuota(h, &oldDraftKeys, now)
	if ok && q.Window == 0 && q.Limit > 0 {
		// -06 also sent RateLimit-Policy: 100;w=60 beside the three fields.
		for _, p := range parsePolicies(h["Ratelimit-Policy"]) {
			if p.quota.Limit == q.Limit && p.quota.Window > 0 {
				q.Window = p.quota.Window
				break
			}
		}
	}
	return q, ok
}
