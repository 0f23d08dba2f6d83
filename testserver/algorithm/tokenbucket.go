package algorithm

import "time"

// tokenBucket is the token bucket of NewTokenBucket.
type tokenBucket struct{ bucket }

// NewTokenBucket returns a token bucket of capacity C = c.Burst (c.Limit when zero) that refills at
// r = c.Limit per c.Window.
//
// Semantics, in exact integer nanoseconds: the bucket holds T tokens, at most C; between requests it
// refills to min(C, T + dt*r); n requests at t are admitted iff T >= n, and then T -= n. A fresh key
// holds C tokens, so it admits exactly C requests at one instant (that is the burst), and Limit per
// Window in the long run. n > C is never admitted (RetryAfter is Never).
//
// This is GCRA (the generic cell rate algorithm) with emission interval I = Window/Limit and
// tolerance (C-1)*I: the theoretical arrival time is TAT = t + (C-T)*I, and a request is admitted iff
// TAT - t <= (C-n)*I. It is implemented as the deficit C-T kept exactly in units of 1/Window of a
// request, and it agrees with golang.org/x/time/rate's Limiter.AllowN on every decision wherever that
// package's float64 arithmetic is exact.
//
// Remaining is floor(T) after the decision; ResetAfter is the time until T is back to C.
func NewTokenBucket(c Config) (Algorithm, error) {
	p, err := c.validate(NameTokenBucket, true)
	if err != nil {
		return nil, err
	}
	return &tokenBucket{bucket{p}}, nil
}

// Name returns "token-bucket".
func (*tokenBucket) Name() string { return NameTokenBucket }

// Decide reports whether n tokens are available at now, without changing s.
func (b *tokenBucket) Decide(s *State, now time.Time, n int64) Decision {
	return b.decide(s, now, n, false)
}

// Commit takes n tokens from s at now.
func (b *tokenBucket) Commit(s *State, now time.Time, n int64) { b.commit(s, now, n) }

// Idle reports whether the bucket in s is full at now.
func (b *tokenBucket) Idle(s *State, now time.Time) bool { return b.idle(s, now) }
