package testserver

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// algSet is the algorithms one quota (a rule's, or one of its tiers') decides with.
type algSet struct {
	// scope names the state namespace in the Store: keys of equal scope share meaning.
	scope string
	// tier is the tier key, "" for the rule's own quota.
	tier string
	// base enforces and advertises Limit per Window.
	base algorithm.Algorithm
	// limit and window are base.Limit() and base.Window(), kept here for the decision path.
	limit  int64
	window time.Duration
	// enforce is what hard, soft and shadow mode decide with: base, or base scaled up by the
	// soft percentage.
	enforce algorithm.Algorithm
	// ceiling is elastic mode's quota while the server has spare capacity (nil otherwise).
	ceiling algorithm.Algorithm
	// mem is this quota's scope in the limiter's memory store, looked up at its first decision
	// there (a compiled rule belongs to one limiter, and a limiter to one store), so that a
	// decision need not find it by name.
	mem atomic.Pointer[memScope]
}

// memScope returns q's scope in the memory store s, for check, a check of q.
func (q *algSet) memScope(s *MemoryStore, check *StoreCheck) *memScope {
	if sc := q.mem.Load(); sc != nil {
		return sc
	}
	sc := s.scope(check)
	q.mem.Store(sc)
	return sc
}

// compiledRule is a validated Rule with its key deriver and algorithms.
type compiledRule struct {
	rule  Rule
	key   *keyDeriver
	base  *algSet
	tiers map[string]*algSet
	// counters are the rule's counters in the limiter's stats (set when the rule is installed).
	counters *ruleCounters
}

type fieldErr struct {
	field, value string
	err          error
}

// buildAlgorithms constructs the algorithms of one quota of rule r.
func buildAlgorithms(r Rule, limit int64, window time.Duration, burst, ceiling int64) (*algSet, *fieldErr) {
	base, err := algorithm.New(r.Algorithm, algorithm.Config{Limit: limit, Window: window, Burst: burst})
	if err != nil {
		return nil, algorithmFieldErr(r.Algorithm, limit, window, burst, err)
	}
	s := &algSet{base: base, enforce: base, limit: base.Limit(), window: base.Window()}
	switch r.Mode {
	case ModeSoft:
		soft := mulDiv(limit, 100+r.SoftPercent, 100)
		if soft == math.MaxInt64 {
			return nil, &fieldErr{"limit", fmt.Sprint(limit), errors.New("too large for the soft percentage")}
		}
		if soft > limit {
			e, err := algorithm.Scale(base, soft)
			if err != nil {
				return nil, &fieldErr{"soft_percent", fmt.Sprint(r.SoftPercent), err}
			}
			s.enforce = e
		}
	case ModeElastic:
		c, err := algorithm.Scale(base, ceiling)
		if err != nil {
			return nil, &fieldErr{"ceiling", fmt.Sprint(ceiling), err}
		}
		s.ceiling = c
	}
	return s, nil
}

// algorithmFieldErr attributes a constructor error to the field it is about.
func algorithmFieldErr(name string, limit int64, window time.Duration, burst int64, err error) *fieldErr {
	switch {
	case errors.Is(err, algorithm.ErrInvalidLimit):
		return &fieldErr{"limit", fmt.Sprint(limit), err}
	case errors.Is(err, algorithm.ErrInvalidWindow):
		return &fieldErr{"window", window.String(), err}
	case errors.Is(err, algorithm.ErrInvalidBurst):
		return &fieldErr{"burst", fmt.Sprint(burst), err}
	}
	return &fieldErr{"algorithm", name, err}
}

// matches reports whether the rule applies to the request.
func (c *compiledRule) matches(r *http.Request) bool {
	if len(c.rule.Methods) > 0 {
		ok := false
		for _, m := range c.rule.Methods {
			if strings.EqualFold(m, r.Method) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if c.rule.PathPrefix != "" {
		path := ""
		if r.URL != nil {
			path = r.URL.Path
		}
		if !strings.HasPrefix(path, c.rule.PathPrefix) {
			return false
		}
	}
	return true
}

// quota picks the algorithms for a key: its tier by whole key, else by part, else the rule's.
func (c *compiledRule) quota(key string, parts []string) *algSet {
	if len(c.tiers) == 0 {
		return c.base
	}
	if t, ok := c.tiers[key]; ok {
		return t
	}
	for _, p := range parts {
		if t, ok := c.tiers[p]; ok {
			return t
		}
	}
	return c.base
}

// quotaOfKey is quota for a key given whole: its tier by whole key, else by each "+"-separated
// part, else the rule's.
func (c *compiledRule) quotaOfKey(key string) *algSet {
	if len(c.tiers) == 0 {
		return c.base
	}
	if t, ok := c.tiers[key]; ok {
		return t
	}
	for p := range strings.SplitSeq(key, "+") {
		if t, ok := c.tiers[p]; ok {
			return t
		}
	}
	return c.base
}

// quotaOfParts is quota for a key given as bytes whose parts end at ends (see
// keyDeriver.appendKey); it allocates nothing.
func (c *compiledRule) quotaOfParts(key []byte, ends []int) *algSet {
	if len(c.tiers) == 0 {
		return c.base
	}
	if t, ok := c.tiers[string(key)]; ok {
		return t
	}
	start := 0
	for _, end := range ends {
		if t, ok := c.tiers[string(key[start:end])]; ok {
			return t
		}
		start = end + 1
	}
	return c.base
}
