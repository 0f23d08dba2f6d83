package redisstore

import (
	"context"
	"math"
	"time"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// byPolicy decides checks without Redis, each by its rule's Policy, keeping the all-or-nothing
// rule: a non-advisory FailClosed check denies the request, and then nothing is decided locally
// (the other checks are reported allowed but not committed); otherwise the Fallback checks are
// decided together by the local store, and FailOpen checks are admitted without being counted.
func (s *Store) byPolicy(ctx context.Context, now time.Time, checks []testserver.StoreCheck, cs []check) ([]testserver.StoreDecision, error) {
	out := make([]testserver.StoreDecision, len(checks))
	closed := false
	for i := range checks {
		if cs[i].policy == FailClosed && !checks[i].Advisory {
			closed = true
		}
	}
	var local []testserver.StoreCheck
	var localIdx []int
	for i := range checks {
		c, p := &checks[i], &cs[i]
		switch {
		case p.policy == FailClosed:
			out[i] = s.deny(c)
		case closed || p.policy == FailOpen:
			out[i] = admit(c)
			if !closed {
				s.failOpen.Add(1)
			}
		default: // Fallback
			lc := *c
			lc.Algorithm = s.share(c.Algorithm)
			if c.Publish != nil {
				lc.Publish = s.share(c.Publish)
			}
			local = append(local, lc)
			localIdx = append(localIdx, i)
		}
	}
	if len(local) > 0 {
		ds, err := s.fallback.Apply(ctx, now, local)
		if err != nil {
			return nil, err
		}
		for j, i := range localIdx {
			out[i] = ds[j]
			if ds[j].Committed {
				s.ledger.owe(&checks[i], cs[i])
			}
		}
		s.fallbacks.Add(int64(len(local)))
	}
	return out, nil
}

// deny is a FailClosed decision: denied until Redis is tried again.
func (s *Store) deny(c *testserver.StoreCheck) testserver.StoreDecision {
	s.failClosed.Add(1)
	d := algorithm.Decision{Limit: c.Algorithm.Limit(), RetryAfter: s.cfg.retryInterval}
	p := d
	if c.Publish != nil {
		p.Limit = c.Publish.Limit()
	}
	return testserver.StoreDecision{Decision: d, Published: p}
}

// admit is a FailOpen decision (or an undecided check of a request a FailClosed check denies):
// allowed, nothing counted, nothing known about what remains.
func admit(c *testserver.StoreCheck) testserver.StoreDecision {
	d := algorithm.Decision{Allowed: true, Limit: c.Algorithm.Limit()}
	p := d
	if c.Publish != nil {
		p.Limit = c.Publish.Limit()
	}
	return testserver.StoreDecision{Decision: d, Published: p}
}

// scaleKey identifies an algorithm's parameters and the limit it is scaled to, to cache its
// scaled-down copy.
type scaleKey struct {
	name         string
	limit, burst int64
	window       time.Duration
	scaled       int64
}

// share returns a with its limit scaled by the fallback share now (currentShare; cached), a itself
// for share 1.
func (s *Store) share(a algorithm.Algorithm) algorithm.Algorithm {
	sh := s.currentShare()
	if sh >= 1 {
		return a
	}
	limit := max(1, int64(math.Floor(float64(a.Limit())*sh)))
	k := scaleKey{a.Name(), a.Limit(), a.Burst(), a.Window(), limit}
	if v, ok := s.scaled.Load(k); ok {
		return v.(algorithm.Algorithm)
	}
	scaled, err := algorithm.Scale(a, limit)
	if err != nil {
		// Only an Algorithm from outside package algorithm, which prepare has rejected already.
		return a
	}
	v, _ := s.scaled.LoadOrStore(k, scaled)
	return v.(algorithm.Algorithm)
}
