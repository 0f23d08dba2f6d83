package throttle

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// Unit tests of the burst allowance and the hold for a window's reset (adaptive_allowance.go),
// with explicit time.

// allowOp is one step of an allowance scenario at offset at: reserve n requests that must all be
// due at once (n > 0), or one that must wait wait (n == 0 and resp == nil), or observe resp and
// then expect the allowance allow.
type allowOp struct {
	at    time.Duration
	n     int
	wait  time.Duration
	resp  *http.Response
	allow int64
}

// remainingResponse is a response with the given status whose headers declare limit per window
// (none when limit is 0) and say remaining left until reset.
func remainingResponse(status int, limit int64, window time.Duration, remaining int64, reset time.Duration) *http.Response {
	h := http.Header{}
	ratelimitheader.Write(h, ratelimitheader.Fields{Limit: limit, Window: window, Remaining: remaining, Reset: reset})
	if status == http.StatusTooManyRequests {
		h.Set(ratelimitheader.HeaderRetryAfter, "1")
	}
	return &http.Response{StatusCode: status, Header: h, Body: http.NoBody}
}

// paced is the interval of the pace under a declared limit per second.
func paced(limit float64) time.Duration {
	return time.Duration(math.Round(1e9 / ((limit - 1) * (1 - DefaultHeadroom))))
}

func TestAdaptiveAllowance(t *testing.T) {
	ok := func(r int64) *http.Response {
		return remainingResponse(http.StatusOK, 100, time.Second, r, time.Second)
	}
	tests := []struct {
		name string
		opts []AdaptiveOption
		ops  []allowOp
	}{
		{"what remains goes at once, less the reserve, then the pace", nil, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: ok(50), allow: 49}, // the reserve of 100/s: 1
			{at: ms(1), n: 49},
			{at: ms(1), wait: paced(100)},
		}},
		{"requests in flight are not counted twice", []AdaptiveOption{WithInitialRate(1000)}, []allowOp{
			{at: 0, n: 1}, {at: ms(1), n: 1}, {at: ms(2), n: 1},
			{at: ms(3), resp: ok(10), allow: 7},
		}},
		{"clamped to the declared quota", nil, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: remainingResponse(http.StatusOK, 10, time.Minute, 1_000_000, time.Second), allow: 10}, // no reserve
		}},
		{"clamped to a limit declared without a window", nil, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: remainingResponse(http.StatusOK, 10, 0, 1_000_000, time.Hour), allow: 10},
		}},
		{"the reserve: what the declared rate admits in 20 ms", nil, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: remainingResponse(http.StatusOK, 6000, time.Minute, 50, time.Minute), allow: 48}, // 100/s: 2
		}},
		{"the reserve is at most 1% of the quota", nil, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: remainingResponse(http.StatusOK, 1000, time.Second, 50, time.Second), allow: 40}, // 1,000/s: 20, 1% of 1,000: 10
		}},
		{"a trickle within the reserve is not spent", nil, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: ok(1), allow: 0},
			{at: ms(1), wait: paced(100) - ms(1)}, // the pace from the first request
		}},
		{"no quota declared: no allowance", nil, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: remainingResponse(http.StatusOK, 0, 0, 50, time.Second), allow: 0},
		}},
		{"no headers: no allowance, and no pace either", nil, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: statusResponse(http.StatusOK), allow: 0},
			{at: ms(1), wait: 0},
		}},
		{"a response older than the newest can only lower it", []AdaptiveOption{WithInitialRate(1000)}, []allowOp{
			{at: 0, n: 1}, {at: ms(1), n: 1},
			{at: ms(2), resp: ok(20), allow: 18}, // one still in flight, one kept back
			{at: ms(3), resp: ok(50), allow: 18}, // sent before the last response came: older
			{at: ms(4), n: 1},
			{at: ms(5), resp: ok(30), allow: 29}, // sent after it: the newest state
		}},
		{"quota that others took ends it", nil, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: ok(50), allow: 49},
			{at: ms(2), n: 1},
			{at: ms(3), resp: ok(10), allow: 0}, // 48 were left, 10 remain: not this limiter's doing
			{at: time.Second, n: 1},
			{at: time.Second + ms(1), resp: ok(50), allow: 0}, // not believed any more
		}},
		{"a throttle while some was left ends it", nil, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: ok(50), allow: 49},
			{at: ms(2), n: 1},
			{at: ms(3), resp: remainingResponse(http.StatusTooManyRequests, 100, time.Second, 0, time.Second), allow: 0},
			{at: 2 * time.Second, n: 1},
			{at: 2*time.Second + ms(1), resp: ok(50), allow: 0},
		}},
		{"throttles for requests sent before the last one came back are one empty window", []AdaptiveOption{WithInitialRate(1000)}, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: ok(4), allow: 3}, // 4 left less the reserve of 1
			{at: ms(1), n: 3},                  // the window's last: all three find it empty
			{at: ms(3), resp: remainingResponse(http.StatusTooManyRequests, 100, time.Second, 0, time.Second), allow: 0},
			{at: ms(4), resp: remainingResponse(http.StatusTooManyRequests, 100, time.Second, 0, time.Second), allow: 0},
			{at: ms(5), resp: remainingResponse(http.StatusTooManyRequests, 100, time.Second, 0, time.Second), allow: 0},
			{at: time.Second, n: 1},
			{at: time.Second + ms(1), resp: ok(50), allow: 49}, // still believed: one empty window, not three
		}},
		{"a throttle that claims room ends it", nil, []allowOp{
			{at: 0, n: 1},
			{at: ms(1), resp: remainingResponse(http.StatusTooManyRequests, 100, time.Second, 50, time.Second), allow: 0},
			{at: 2 * time.Second, n: 1},
			{at: 2*time.Second + ms(1), resp: ok(50), allow: 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdaptive(t, tt.opts...)
			for i, op := range tt.ops {
				now := at0.Add(op.at)
				switch {
				case op.resp != nil:
					a.Observe(now, op.resp, nil)
					assert.Equal(t, op.allow, a.Stats().Allowance, "step %d: allowance", i)
				case op.n > 0:
					for j := range op.n {
						r, err := a.Reserve(now)
						require.NoError(t, err)
						require.Zero(t, r.Delay(now), "step %d: request %d of %d must go at once", i, j+1, op.n)
					}
				default:
					r, err := a.Reserve(now)
					require.NoError(t, err)
					assert.Equal(t, op.wait, r.Delay(now), "step %d: wait", i)
					r.Cancel(now)
				}
			}
		})
	}
}

// TestAdaptiveAllowancePendingTold: a reservation waiting for the pace comes due at once when an
// allowance is granted, and is told so through Changed.
func TestAdaptiveAllowancePendingTold(t *testing.T) {
	a := newAdaptive(t)
	_, _ = a.Reserve(at0)
	r, _ := a.Reserve(at0)
	ch := r.Changed()
	require.NotNil(t, ch)
	a.Observe(at0.Add(ms(1)), remainingResponse(http.StatusOK, 100, time.Second, 5, time.Second), nil)
	select {
	case <-ch:
	default:
		t.Fatal("the reservation was not told it came due")
	}
	assert.Zero(t, r.Delay(at0.Add(ms(1))))
	assert.Nil(t, r.Changed(), "a due reservation never moves")
}

// TestAdaptiveWindowHold: a server whose quota of 10 per second comes back whole at the reset (a
// fixed window). The first time the quota runs out the limiter does not know that yet: the pace
// goes on and draws a throttle. After the pause, the whole quota comes back at once, so the next
// time it runs out the next request waits for the reset instead. A server whose quota comes back
// a little at a time (a bucket with a small burst) holds nothing.
func TestAdaptiveWindowHold(t *testing.T) {
	const limit = 10
	resp := func(status int, r int64) *http.Response {
		return remainingResponse(status, limit, time.Second, r, time.Second)
	}
	for _, tt := range []struct {
		name  string
		after int64 // what remains after the first request once the pause is over
		hold  bool
	}{
		{"the whole quota comes back: hold until the reset", limit - 1, true},
		{"a little comes back: keep the pace", 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdaptive(t)
			now := at0
			due := func(n int) {
				t.Helper()
				for range n {
					r, err := a.Reserve(now)
					require.NoError(t, err)
					require.Zero(t, r.Delay(now))
				}
			}
			// The first window: the quota goes at once, and runs out.
			due(1)
			now = now.Add(ms(1))
			a.Observe(now, resp(http.StatusOK, limit-1), nil)
			due(limit - 1)
			now = now.Add(ms(1))
			for r := int64(limit - 2); r >= 0; r-- {
				a.Observe(now, resp(http.StatusOK, r), nil)
			}
			// Not known to be a window yet: the pace goes on, and draws a throttle.
			r, _ := a.Reserve(now)
			d := r.Delay(now)
			assert.Equal(t, ms(1)+paced(limit)-ms(2), d, "the pace, not a hold")
			now = now.Add(d)
			require.Zero(t, r.Delay(now))
			now = now.Add(ms(1))
			a.Observe(now, resp(http.StatusTooManyRequests, 0), nil)

			// After the pause (the Transport's business) the quota comes back.
			now = at0.Add(1200 * time.Millisecond)
			due(1)
			now = now.Add(ms(1))
			first := now
			a.Observe(now, resp(http.StatusOK, tt.after), nil)
			require.Equal(t, tt.after, a.Stats().Allowance)
			due(int(tt.after))
			now = now.Add(ms(1))
			for r := tt.after - 1; r >= 0; r-- {
				a.Observe(now, resp(http.StatusOK, r), nil)
			}
			now = now.Add(ms(100))
			r, _ = a.Reserve(now)
			if tt.hold {
				// Until the reset the first response of the window announced (t=1 from first),
				// and its slack (a window/holdSlackDiv: 2 ms).
				assert.Equal(t, first.Add(time.Second+time.Second/holdSlackDiv).Sub(now), r.Delay(now))
			} else {
				assert.Less(t, r.Delay(now), 200*time.Millisecond)
			}
			assert.Equal(t, int64(1), a.Stats().Throttles)
		})
	}
}

// TestAdaptiveRemainingNoWait is issue 4's case (a) at the limiter: an API that allows 5,000
// requests an hour, declared slowly (about 1.4 per second) but with 4,999 left, lets a caller that
// sends one request after the other go at once every time, instead of 0.72 s apart; in every
// dialect that says what the quota is.
func TestAdaptiveRemainingNoWait(t *testing.T) {
	tests := []struct {
		name   string
		header func(remaining int64) http.Header
	}{
		{"RateLimit-Policy and RateLimit", func(r int64) http.Header {
			h := http.Header{}
			h.Set(ratelimitheader.HeaderRateLimitPolicy, `"hourly";q=5000;w=3600`)
			h.Set(ratelimitheader.HeaderRateLimit, fmt.Sprintf(`"hourly";r=%d;t=3600`, r))
			return h
		}},
		{"X-RateLimit-* with an epoch reset (GitHub)", func(r int64) http.Header {
			h := http.Header{}
			h.Set(ratelimitheader.HeaderXLimit, "5000")
			h.Set(ratelimitheader.HeaderXRemaining, strconv.FormatInt(r, 10))
			h.Set(ratelimitheader.HeaderXReset, strconv.FormatInt(at0.Add(time.Hour).Unix(), 10))
			h.Set("Date", at0.Format(http.TimeFormat))
			return h
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdaptive(t)
			now := at0
			for i := range 200 {
				r, err := a.Reserve(now)
				require.NoError(t, err)
				require.Zero(t, r.Delay(now), "request %d waited", i)
				now = now.Add(10 * time.Millisecond) // the round trip
				a.Observe(now, &http.Response{StatusCode: http.StatusOK, Header: tt.header(int64(4999 - i)), Body: http.NoBody}, nil)
			}
			assert.Positive(t, a.Stats().Allowance)
		})
	}
}

// TestAllowanceSlidingLogCycleStart: against a sliding log whose quota came back whole, the first
// request after a hold takes the place of the last cycle's first request, and the burst after it
// left later (a round trip, and the callers waking up). When that first request's response says
// nothing is left, the next request waits twice as long after this hold as the last burst came
// after the last hold, instead of going at the pace into a log that is still full. That lag is measured
// only on cycles that were not delayed so (it would grow by a round trip every cycle), and not when
// it is long (the callers were idle: the wait would be as long).
func TestAllowanceSlidingLogCycleStart(t *testing.T) {
	msi := func(n int64) int64 { return n * int64(time.Millisecond) }
	info := func(remaining int64) ratelimitheader.Info {
		return ratelimitheader.Info{Limit: 200, Window: time.Second, Remaining: remaining, HasRemaining: true,
			Reset: time.Second, HasReset: true}
	}
	// cycle runs a cycle whose hold ended at held: the first request's response (at held+1 ms)
	// says first remain; when none do, the burst is granted at burstAt. It returns the hold the
	// first response asked for (0: none) and the hold that ends the cycle.
	cycle := func(al *allowance, held, burstAt int64, first int64) (wait, next int64) {
		al.sent()
		d := al.observe(held+msi(1), held, true, false, info(first), 0, 0)
		if d.setHold {
			wait = d.hold
		}
		if first == 0 {
			require.Positive(t, al.observe(burstAt, burstAt-msi(1), true, false, info(199), 0, 0).burst)
		}
		for range 199 {
			al.sent()
		}
		d = al.observe(burstAt+msi(20), burstAt+msi(15), true, false, info(0), 0, 0)
		require.True(t, d.setHold)
		return wait, d.hold
	}
	al := allowance{windowed: true, heldFor: msi(1000), holdEnd: msi(1000)}
	// Cycle 1: the burst went 6 ms after the hold (its first response said 199 remain).
	al.sent()
	require.Positive(t, al.observe(msi(1006), msi(1000), true, false, info(199), 0, 0).burst)
	for range 199 {
		al.sent()
	}
	d := al.observe(msi(1030), msi(1025), true, false, info(0), 0, 0)
	require.True(t, d.setHold)
	held := d.hold // the reset announced at 1,006 ms, and the slack (2 ms)
	require.Equal(t, msi(2008), held)
	// Cycle 2: the first request finds the log still full: the next waits twice the last burst's
	// lag after its hold (6 ms).
	wait, next := cycle(&al, held, held+msi(7), 0)
	assert.Equal(t, held+2*msi(6), wait, "twice the last burst's lag after its hold")
	held = next
	// Cycle 3: the same lag, not one grown by cycle 2's wait (its burst came 7 ms after its hold).
	wait, _ = cycle(&al, held, held+msi(7), 0)
	assert.Equal(t, held+2*msi(6), wait, "the lag does not grow")

	// The callers were idle after the hold: no lag is known, and nothing waits.
	idle := allowance{windowed: true, heldFor: msi(1000), holdEnd: msi(1000)}
	idle.sent()
	require.Positive(t, idle.observe(msi(1500), msi(1499), true, false, info(199), 0, 0).burst)
	for range 199 {
		idle.sent()
	}
	d = idle.observe(msi(1530), msi(1525), true, false, info(0), 0, 0)
	require.True(t, d.setHold)
	idle.sent()
	d = idle.observe(d.hold+msi(1), d.hold, true, false, info(0), 0, 0)
	assert.False(t, d.setHold, "no wait after an idle spell")
}
