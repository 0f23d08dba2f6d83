package throttle

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// The control law was chosen by measurement: this file holds two textbook laws, AIMD and the AWS
// SDKs' adaptive-retry CUBIC, as Limiters on the same even FIFO pacer, and TestAdaptiveCompareLaws
// runs them and the Adaptive limiter through the goodput batch without headers.

// refLaw is a rate control law driven by the outcomes of requests.
type refLaw interface {
	rate() float64
	success(t int64, sentAfterCut bool)
	throttle(t int64, sentAfterCut bool)
}

// refLimiter paces at its law's rate with the Adaptive limiter's pacer (even, FIFO) and counts a
// throttle only once per epoch, as Adaptive does: a request sent before the last cut does not cut.
type refLimiter struct {
	a       *Adaptive // only for its clock, pacer and send ring
	law     refLaw
	lastCut int64
}

func newRefLimiter(t testing.TB, law refLaw) *refLimiter {
	a, err := NewAdaptive()
	if err != nil {
		t.Fatal(err)
	}
	a.pacer.interval = intervalOf(law.rate())
	return &refLimiter{a: a, law: law, lastCut: -1}
}

func (l *refLimiter) Reserve(now time.Time) (Reservation, error) { return l.a.Reserve(now) }

func (l *refLimiter) Observe(now time.Time, resp *http.Response, err error) {
	a := l.a
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.clock(now)
	a.pacer.settle(t)
	sent, ok := a.sends.pop(t - int64(10*time.Second))
	if !ok {
		sent = t
	}
	if err != nil || resp == nil {
		return
	}
	after := sent >= l.lastCut
	if resp.StatusCode == http.StatusTooManyRequests {
		if after {
			l.lastCut = t
		}
		l.law.throttle(t, after)
	} else {
		l.law.success(t, after)
	}
	if iv := intervalOf(max(l.law.rate(), 0.05)); iv != a.pacer.interval {
		a.pacer.interval = iv
		a.pacer.reschedule(t)
	}
}

// aimd: slow start (doubling every 100 ms of successes) until the first throttle, then +alpha
// requests/s per second, halved on a throttle.
type aimd struct {
	r, alpha  float64
	slowStart bool
	last      int64
}

func (l *aimd) rate() float64 { return l.r }
func (l *aimd) success(t int64, _ bool) {
	dt := float64(min(t-l.last, int64(100*time.Millisecond))) / 1e9
	l.last = t
	if l.slowStart {
		l.r *= math.Exp2(dt / 0.1)
	} else {
		l.r += l.alpha * dt
	}
}
func (l *aimd) throttle(t int64, after bool) {
	l.last = t
	if after {
		l.r, l.slowStart = l.r/2, false
	}
}

// awsCubic is the AWS SDKs' adaptive retry mode: on a throttle the rate drops to beta times the
// lower of the measured sending rate and the current rate, then follows
// C*(t-K)^3 + lastMax (C = 0.4, beta = 0.7), capped at twice the measured sending rate; before the
// first throttle it starts at the initial rate and follows the same curve from there.
type awsCubic struct {
	r, lastMax, lastThrottle float64 // seconds
	measured, count          float64
	bucketStart              float64
}

const awsC, awsBeta = 0.4, 0.7

func (l *awsCubic) rate() float64 { return l.r }
func (l *awsCubic) measure(ts float64) {
	l.count++
	if b := math.Floor(ts*2) / 2; b > l.bucketStart {
		cur := l.count / (b - l.bucketStart)
		l.measured = cur*0.8 + l.measured*0.2
		l.count, l.bucketStart = 0, b
	}
}
func (l *awsCubic) success(t int64, _ bool) {
	ts := float64(t) / 1e9
	l.measure(ts)
	k := math.Cbrt(l.lastMax * (1 - awsBeta) / awsC)
	c := awsC*math.Pow(ts-l.lastThrottle-k, 3) + l.lastMax
	l.r = max(0.5, min(c, 2*max(l.measured, 1)))
}
func (l *awsCubic) throttle(t int64, after bool) {
	ts := float64(t) / 1e9
	l.measure(ts)
	if !after {
		return
	}
	l.lastMax = min(l.measured, l.r)
	l.r = max(0.5, l.lastMax*awsBeta)
	l.lastThrottle = ts
}

// TestAdaptiveCompareLaws runs the goodput batch (2,000 requests, 16 workers, 200/s, no headers)
// through AIMD, AWS-style CUBIC and the Adaptive limiter, over every algorithm, and logs elapsed /
// the physical limit and the share of 429s. It asserts that Adaptive meets the goals (1.10x, 3%) where
// the textbook laws are compared only: on these servers AIMD's halving leaves a quarter of the
// rate unused on average and CUBIC's absolute constant (0.4 req/s^3) needs seconds to climb back
// to 200/s after each throttle; see the log.
func TestAdaptiveCompareLaws(t *testing.T) {
	const n, workers, limit = 2000, 16, 200
	laws := []struct {
		name string
		new  func(testing.TB) Limiter
	}{
		{"adaptive", func(testing.TB) Limiter { a, _ := NewAdaptive(); return a }},
		{"aimd(+10/s per s, x0.5)", func(t testing.TB) Limiter {
			return newRefLimiter(t, &aimd{r: DefaultInitialRate, alpha: 10, slowStart: true})
		}},
		{"cubic (AWS)", func(t testing.TB) Limiter {
			return newRefLimiter(t, &awsCubic{r: DefaultInitialRate, lastMax: DefaultInitialRate})
		}},
	}
	var table strings.Builder
	for _, law := range laws {
		fmt.Fprintf(&table, "\n%-24s", law.name)
		for _, name := range algorithm.Names() {
			synctest.Test(t, func(t *testing.T) {
				const phase = 370 * time.Millisecond
				time.Sleep(phase)
				srv := newSimServer(t, name, limit, time.Second, serverBurst(name), false)
				c := newSimClientWith(t, srv, 30, func(string) (Limiter, error) { return law.new(t), nil })
				c.runBatch(t, n, workers)
				r := c.result(n)
				ratio := r.elapsed.Seconds() / physicalLimit(name, n, limit, serverBurst(name), time.Second, phase).Seconds()
				fmt.Fprintf(&table, " %s %.3f/%.1f%%", name[:5], ratio, 100*r.throttleShare())
				if law.name == "adaptive" && (ratio > 1.10 || r.throttleShare() > 0.03) {
					t.Errorf("adaptive on %s: %.3f x, %.2f%% 429s", name, ratio, 100*r.throttleShare())
				}
			})
		}
	}
	t.Log("elapsed/physical and 429 share per algorithm, no headers:" + table.String())
}
