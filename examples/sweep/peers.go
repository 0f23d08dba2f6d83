package main

import (
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/steadyhttp/steady/dialects"
	"github.com/steadyhttp/steady/internal/pacer"
	"github.com/steadyhttp/steady/throttle"
)

// rateLaw is a control law of the request rate, driven by the outcomes of requests. Its methods
// are called with the owner's lock held; t is in seconds from the limiter's first use.
type rateLaw interface {
	// rate is the pace in requests per second; 0 leaves requests unpaced.
	rate() float64
	// success records an admitted request answered at t.
	success(t float64)
	// throttle records a 429 answered at t; fresh is false when the request left before the last
	// 429 that cut the rate (it says nothing new: the cut was already made).
	throttle(t float64, fresh bool)
}

// lawLimiter paces a key at its law's rate on steady's FIFO pacer (internal/pacer, an even
// spacing), and feeds the law every answer. It is a throttle.Limiter and a
// throttle.AttemptLearner, safe for concurrent use. A throttle is what the stack's retry takes for
// one: a 429, or what the response's dialect calls a throttle (GitHub's 403 with nothing remaining
// or a secondary limit; dialects.Read), so that a law meets a persona's throttles as steady does.
type lawLimiter struct {
	mu      sync.Mutex
	p       *pacer.Pacer
	law     rateLaw
	started bool
	base    time.Time
	now     int64
	lastCut int64 // when the last fresh 429 was answered; -1: none
}

func newLawLimiter(law rateLaw) *lawLimiter {
	l := &lawLimiter{law: law, lastCut: -1}
	l.p = pacer.New(&l.mu, l.clock, nil)
	l.p.SetInterval(0, pacer.LaneRequests, intervalOf(law.rate()))
	return l
}

// clock converts now to nanoseconds since the first use, never going back; l.mu is held.
func (l *lawLimiter) clock(now time.Time) int64 {
	if !l.started {
		l.started, l.base = true, now
	}
	l.now = max(l.now, int64(now.Sub(l.base)))
	return l.now
}

// intervalOf is the spacing of rate r (0: unpaced).
func intervalOf(r float64) int64 {
	if r <= 0 {
		return 0
	}
	return int64(math.Ceil(float64(time.Second) / r))
}

// goNow is a reservation due at once.
type goNow struct{}

func (goNow) Delay(time.Time) time.Duration { return 0 }
func (goNow) Changed() <-chan struct{}      { return nil }
func (goNow) Cancel(time.Time)              {}

// Reserve implements throttle.Limiter.
func (l *lawLimiter) Reserve(now time.Time) (throttle.Reservation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.p.Reserve(l.clock(now), 1); r != nil {
		return r, nil
	}
	return goNow{}, nil
}

// Observe implements throttle.Learner (an attempt whose departure is unknown counts as fresh).
func (l *lawLimiter) Observe(now time.Time, resp *http.Response, err error) {
	l.ObserveAttempt(now, now, resp, err)
}

// ObserveAttempt implements throttle.AttemptLearner.
func (l *lawLimiter) ObserveAttempt(sent, now time.Time, resp *http.Response, err error) {
	if err != nil || resp == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.clock(now)
	secs := float64(t) / 1e9
	if dialects.Read(resp, now).Throttled {
		fresh := int64(sent.Sub(l.base)) >= l.lastCut
		if fresh {
			l.lastCut = t
		}
		l.law.throttle(secs, fresh)
	} else {
		l.law.success(secs)
	}
	l.p.SetInterval(t, pacer.LaneRequests, intervalOf(l.law.rate()))
}

// aimd is plain AIMD, TCP Reno's law in rate form: it starts at initialRate and, until the first
// 429, adds one request per second for every success (slow start: the rate doubles each second
// it is met); after that it adds one request per second every second (1/r for each of the r
// successes of a second), and halves the rate on a fresh 429. It never goes below minRate.
type aimd struct {
	r         float64
	slowStart bool
}

// initialRate is where AIMD starts (a law of the rate needs one): 20 requests a second, where
// steady's previous learner (throttle.Adaptive, since deleted) started, so the comparison starts
// AIMD where the "before" started.
const initialRate = 20.0

// minRate is the slowest the laws pace: one request every two seconds (the AWS SDKs' floor).
const minRate = 0.5

func newAIMD() *aimd { return &aimd{r: initialRate, slowStart: true} }

func (a *aimd) rate() float64 { return a.r }

func (a *aimd) success(float64) {
	if a.slowStart {
		a.r++
		return
	}
	a.r += 1 / a.r
}

func (a *aimd) throttle(_ float64, fresh bool) {
	if fresh {
		a.r, a.slowStart = max(a.r/2, minRate), false
	}
}

// awsCubic is the AWS SDKs' adaptive retry mode (botocore's adaptive.py, the Go SDK v2's
// ratelimit): unpaced until the first 429; on a fresh 429 the rate drops to beta times the lower of
// the measured sending rate and the current rate, which becomes the curve's maximum W; on a
// success it follows C(t−K)³ + W, K = ∛(W(1−β)/C), capped at twice the measured sending rate,
// with C = 0.4 and β = 0.7, and at least 0.5/s. The sending rate is measured over half-second
// buckets, smoothed 0.8 to the newest. (The SDKs pace with a token bucket of one second's
// tokens; this paces evenly, on the same pacer as every law here.)
type awsCubic struct {
	enabled        bool
	r, lastMax     float64
	lastThrottle   float64
	measured       float64
	count, tbucket float64
}

const awsC, awsBeta, awsSmooth, awsBucket = 0.4, 0.7, 0.8, 0.5

func newAWSCubic() *awsCubic { return &awsCubic{} }

func (c *awsCubic) rate() float64 {
	if !c.enabled {
		return 0
	}
	return c.r
}

// measure counts one answer at t in the sending-rate meter.
func (c *awsCubic) measure(t float64) {
	c.count++
	if b := math.Floor(t/awsBucket) * awsBucket; b > c.tbucket {
		cur := c.count / (b - c.tbucket)
		c.measured = cur*awsSmooth + c.measured*(1-awsSmooth)
		c.count, c.tbucket = 0, b
	}
}

func (c *awsCubic) success(t float64) {
	c.measure(t)
	if !c.enabled {
		return
	}
	k := math.Cbrt(c.lastMax * (1 - awsBeta) / awsC)
	next := awsC*math.Pow(t-c.lastThrottle-k, 3) + c.lastMax
	c.r = max(minRate, min(next, 2*c.measured))
}

func (c *awsCubic) throttle(t float64, fresh bool) {
	c.measure(t)
	if !fresh {
		return
	}
	use := c.measured
	if c.enabled {
		use = min(c.measured, c.r)
	}
	c.lastMax = use
	c.r = max(minRate, use*awsBeta)
	c.lastThrottle = t
	c.enabled = true
}
