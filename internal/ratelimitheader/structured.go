package ratelimitheader

import (
	"math"
	"time"

	"github.com/dunglas/httpsfv"
)

// draftPolicy is one member of RateLimit-Policy: "name";q=100;w=60.
type draftPolicy struct {
	name   string
	limit  int64         // q; 0 when absent or invalid
	window time.Duration // w; 0 when absent or invalid
}

// draftLimit is one member of RateLimit: "name";r=42;t=17.
type draftLimit struct {
	name         string
	limit        int64 // only from the dictionary form of earlier drafts: limit=100
	remaining    int64
	hasRemaining bool
	reset        time.Duration
	hasReset     bool
}

// draft is what the IETF draft fields of one response say, after choosing one policy.
type draft struct {
	policy    string
	hasPolicy bool // a RateLimit-Policy or RateLimit member was chosen
	limit     int64
	window    time.Duration
	limitItem draftLimit
}

// parseDraft reads RateLimit-Policy and RateLimit. It picks the first RateLimit member whose name
// matches a policy; without a match, the first RateLimit member and the first policy. A field that does
// not parse as a structured field is ignored as a whole; a parameter that is missing, of the wrong type
// or out of range is ignored on its own.
func parseDraft(policyValues, limitValues []string, clk *clock) draft {
	var policies []draftPolicy
	if len(policyValues) > 0 {
		policies = parsePolicies(policyValues)
	}
	var limits []draftLimit
	if len(limitValues) > 0 {
		limits = parseLimits(limitValues, clk)
	}

	var d draft
	pi, li := -1, -1
match:
	for i := range limits {
		for j := range policies {
			if limits[i].name == policies[j].name {
				li, pi = i, j
				break match
			}
		}
	}
	if li < 0 {
		if len(limits) > 0 {
			li = 0
		}
		if len(policies) > 0 {
			pi = 0
		}
	}
	if pi >= 0 {
		p := policies[pi]
		d.hasPolicy = true
		d.policy = p.name
		d.limit, d.window = p.limit, p.window
	}
	if li >= 0 {
		d.hasPolicy = true
		d.limitItem = limits[li]
		d.policy = limits[li].name
		if d.limit == 0 {
			d.limit = limits[li].limit
		}
	}
	return d
}

// memberName returns the name of a list member's item: a String or Token value.
func memberName(v any) string {
	switch n := v.(type) {
	case string:
		return n
	case httpsfv.Token:
		return string(n)
	}
	return ""
}

// parsePolicies parses RateLimit-Policy: a List of Items named by a String (or Token) with parameters
// q (quota, Integer) and w (window, Integer or Decimal seconds). An Integer item value is read as the
// quota with an empty name, as earlier drafts wrote RateLimit-Policy: 100;w=60.
func parsePolicies(values []string) []draftPolicy {
	list, err := httpsfv.UnmarshalList(values)
	if err != nil {
		return nil
	}
	policies := make([]draftPolicy, 0, len(list))
	for _, m := range list {
		item, ok := m.(httpsfv.Item)
		if !ok {
			continue
		}
		p := draftPolicy{name: memberName(item.Value)}
		if q, ok := item.Value.(int64); ok && q > 0 {
			p.limit = q
		}
		if item.Params != nil {
			if v, ok := item.Params.Get("q"); ok {
				if q, ok := v.(int64); ok && q > 0 {
					p.limit = q
				}
			}
			if v, ok := item.Params.Get("w"); ok {
				p.window, _ = paramWindow(v)
			}
		}
		policies = append(policies, p)
	}
	return policies
}

// parseLimits parses RateLimit: a List of Items named by a String (or Token) with parameters
// r (remaining, Integer) and t (reset, Integer or Decimal seconds; above 1e9 a Unix time). When the
// field is not a List, the dictionary form of earlier drafts is tried:
// RateLimit: limit=100, remaining=42, reset=17.
func parseLimits(values []string, clk *clock) []draftLimit {
	list, err := httpsfv.UnmarshalList(values)
	if err != nil {
		if l, ok := parseLimitDictionary(values, clk); ok {
			return []draftLimit{l}
		}
		return nil
	}
	limits := make([]draftLimit, 0, len(list))
	for _, m := range list {
		item, ok := m.(httpsfv.Item)
		if !ok {
			continue
		}
		l := draftLimit{name: memberName(item.Value)}
		if item.Params != nil {
			if v, ok := item.Params.Get("r"); ok {
				if r, ok := v.(int64); ok && r >= 0 {
					l.remaining, l.hasRemaining = r, true
				}
			}
			if v, ok := item.Params.Get("t"); ok {
				l.reset, l.hasReset = paramReset(v, clk)
			}
		}
		limits = append(limits, l)
	}
	return limits
}

// parseLimitDictionary reads the dictionary form of RateLimit from earlier drafts:
// limit=100, remaining=42, reset=17 (all Integers; reset may be a Decimal).
func parseLimitDictionary(values []string, clk *clock) (draftLimit, bool) {
	dict, err := httpsfv.UnmarshalDictionary(values)
	if err != nil {
		return draftLimit{}, false
	}
	var l draftLimit
	found := false
	if m, ok := dict.Get("limit"); ok {
		if item, ok := m.(httpsfv.Item); ok {
			if q, ok := item.Value.(int64); ok && q > 0 {
				l.limit, found = q, true
			}
		}
	}
	if m, ok := dict.Get("remaining"); ok {
		if item, ok := m.(httpsfv.Item); ok {
			if r, ok := item.Value.(int64); ok && r >= 0 {
				l.remaining, l.hasRemaining, found = r, true, true
			}
		}
	}
	if m, ok := dict.Get("reset"); ok {
		if item, ok := m.(httpsfv.Item); ok {
			if l.reset, l.hasReset = paramReset(item.Value, clk); l.hasReset {
				found = true
			}
		}
	}
	return l, found
}

// paramWindow converts an Integer or Decimal number of seconds to a window in (0, maxWindow].
func paramWindow(v any) (time.Duration, bool) {
	switch n := v.(type) {
	case int64:
		if n <= 0 {
			return 0, false
		}
		return windowDuration(n, 0)
	case float64:
		if !(n > 0 && n <= maxWindow.Seconds()) {
			return 0, false
		}
		return windowDuration(0, int64(math.Ceil(n*1e9)))
	}
	return 0, false
}

// paramReset converts an Integer or Decimal reset value: delta-seconds, or above 1e9 a Unix time.
func paramReset(v any, clk *clock) (time.Duration, bool) {
	switch n := v.(type) {
	case int64:
		if n < 0 {
			return 0, false
		}
		d, _ := clk.reset(n, 0)
		return d, true
	case float64:
		if n > epochThreshold {
			sec := int64(n)
			d, _ := clk.reset(sec, int64((n-float64(sec))*1e9))
			return d, true
		}
		return floatSeconds(n)
	}
	return 0, false
}
