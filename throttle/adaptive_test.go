package throttle

import (
	"errors"
	"math"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// Unit tests of the Adaptive limiter with explicit time: no clock is read, nothing sleeps.

var at0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func newAdaptive(t *testing.T, opts ...AdaptiveOption) *Adaptive {
	t.Helper()
	a, err := NewAdaptive(opts...)
	require.NoError(t, err)
	return a
}

// policyResponse is a 200 that declares limit per window, with remaining left until reset.
func policyResponse(limit int64, window time.Duration, remaining int64, reset time.Duration) *http.Response {
	h := http.Header{}
	ratelimitheader.Write(h, ratelimitheader.Fields{Limit: limit, Window: window, Remaining: remaining, Reset: reset})
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody}
}

// policyOnlyResponse is a 200 that declares limit per window and says nothing of what remains.
func policyOnlyResponse(limit int64, window time.Duration) *http.Response {
	h := http.Header{}
	ratelimitheader.Write(h, ratelimitheader.Fields{Limit: limit, Window: window})
	h.Del(ratelimitheader.HeaderRateLimit)
	h.Del(ratelimitheader.HeaderXRemaining)
	h.Del(ratelimitheader.HeaderXReset)
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody}
}

func statusResponse(code int) *http.Response {
	return &http.Response{StatusCode: code, Header: http.Header{}, Body: http.NoBody}
}

func TestAdaptiveOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []AdaptiveOption
		want error // nil: valid
	}{
		{"defaults", nil, nil},
		{"nil option skipped", []AdaptiveOption{nil}, nil},
		{"initial rate", []AdaptiveOption{WithInitialRate(5)}, nil},
		{"initial rate zero", []AdaptiveOption{WithInitialRate(0)}, ErrInvalidRate},
		{"initial rate NaN", []AdaptiveOption{WithInitialRate(math.NaN())}, ErrInvalidRate},
		{"initial rate Inf", []AdaptiveOption{WithInitialRate(math.Inf(1))}, ErrInvalidRate},
		{"initial rate above max", []AdaptiveOption{WithRateBounds(1, 10), WithInitialRate(20)}, ErrInvalidRate},
		{"initial rate below min", []AdaptiveOption{WithRateBounds(1, 10), WithInitialRate(0.5)}, ErrInvalidRate},
		{"bounds", []AdaptiveOption{WithRateBounds(0.5, 500)}, nil},
		{"bounds reversed", []AdaptiveOption{WithRateBounds(5, 1)}, ErrInvalidRate},
		{"bounds negative", []AdaptiveOption{WithRateBounds(-1, 1)}, ErrInvalidRate},
		{"bounds above 1e9", []AdaptiveOption{WithRateBounds(1, 2e9)}, ErrInvalidRate},
		{"headroom", []AdaptiveOption{WithHeadroom(0.1)}, nil},
		{"headroom zero", []AdaptiveOption{WithHeadroom(0)}, nil},
		{"headroom negative", []AdaptiveOption{WithHeadroom(-0.1)}, ErrInvalidOption},
		{"headroom too big", []AdaptiveOption{WithHeadroom(0.6)}, ErrInvalidOption},
		{"headroom NaN", []AdaptiveOption{WithHeadroom(math.NaN())}, ErrInvalidOption},
		{"statuses", []AdaptiveOption{WithThrottleStatuses(429, 503)}, nil},
		{"no statuses", []AdaptiveOption{WithThrottleStatuses()}, ErrInvalidOption},
		{"bad status", []AdaptiveOption{WithThrottleStatuses(42)}, ErrInvalidOption},
		{"half-life", []AdaptiveOption{WithDecayHalfLife(time.Second)}, nil},
		{"half-life zero", []AdaptiveOption{WithDecayHalfLife(0)}, ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewAdaptive(tt.opts...)
			f := AdaptiveFactory(tt.opts...)
			l, ferr := f("api.test")
			if tt.want == nil {
				require.NoError(t, err)
				require.NoError(t, ferr)
				assert.NotNil(t, a)
				assert.IsType(t, &Adaptive{}, l)
				return
			}
			assert.Nil(t, a)
			assert.ErrorIs(t, err, tt.want)
			assert.Nil(t, l)
			assert.ErrorIs(t, ferr, tt.want)
		})
	}
}

// TestAdaptiveFactoryPerKey: each key gets its own limiter, learning on its own.
func TestAdaptiveFactoryPerKey(t *testing.T) {
	f := AdaptiveFactory()
	l1, err := f("a.test")
	require.NoError(t, err)
	l2, err := f("b.test")
	require.NoError(t, err)
	require.NotSame(t, l1, l2)
	a1, a2 := l1.(*Adaptive), l2.(*Adaptive)
	_, _ = a1.Reserve(at0)
	a1.Observe(at0.Add(ms(1)), policyResponse(100, time.Second, 50, time.Second), nil)
	assert.InDelta(t, 99*(1-DefaultHeadroom), a1.Rate(), 1e-9)
	assert.Equal(t, DefaultInitialRate, a2.Rate())
}

// TestAdaptiveColdStart: before any response the limiter spaces requests at the initial rate
// (the first goes at once); the first response that declares a rate sets the pace to it at once
// and moves the waiting reservations, telling them so.
func TestAdaptiveColdStart(t *testing.T) {
	a := newAdaptive(t, WithInitialRate(10))
	r0, err := a.Reserve(at0)
	require.NoError(t, err)
	assert.Zero(t, r0.Delay(at0))
	var waiting []Reservation
	for i := 1; i <= 3; i++ {
		r, err := a.Reserve(at0)
		require.NoError(t, err)
		assert.Equal(t, time.Duration(i)*ms(100), r.Delay(at0), "request %d", i)
		waiting = append(waiting, r)
	}
	changed := waiting[0].Changed()
	require.NotNil(t, changed)

	// 100 per second declared: (100-1)/s less the headroom. (The response says nothing of what
	// remains, so there is no allowance: see TestAdaptiveAllowance.)
	now := at0.Add(ms(2))
	a.Observe(now, policyOnlyResponse(100, time.Second), nil)
	want := 99 * (1 - DefaultHeadroom)
	assert.InDelta(t, want, a.Rate(), 1e-9)
	select {
	case <-changed:
	default:
		t.Fatal("the waiting reservation was not told that it moved")
	}
	iv := time.Duration(math.Round(1e9 / want))
	for i, r := range waiting {
		assert.Equal(t, time.Duration(i+1)*iv-ms(2), r.Delay(now), "request %d", i+1)
	}
	s := a.Stats()
	assert.Equal(t, 100.0, s.ServerRate)
	assert.Equal(t, int64(1), s.Successes)
	assert.Equal(t, 3, s.Waiting)
	assert.Equal(t, 0, s.InFlight)
}

// TestAdaptivePacerSchedule drives the pacer directly: even spacing in FIFO order, a changed
// interval reschedules the waiting requests, a cancelled one moves those behind it up.
func TestAdaptivePacerSchedule(t *testing.T) {
	tests := []struct {
		name     string
		interval int64
		arrive   []int64 // arrival of each request
		change   int64   // new interval at changeAt (0: none)
		changeAt int64
		cancel   int     // index of a request cancelled at changeAt (-1: none)
		want     []int64 // slots after the change/cancel; -1 for a cancelled one
	}{
		{"even spacing", 10, []int64{0, 0, 0, 0}, 0, 0, -1, []int64{0, 10, 20, 30}},
		{"no burst after idle", 10, []int64{0, 100, 100}, 0, 100, -1, []int64{0, 100, 110}},
		{"faster pace moves waiting up", 10, []int64{0, 0, 0, 0}, 5, 1, -1, []int64{0, 5, 10, 15}},
		{"slower pace moves waiting back", 10, []int64{0, 0, 0}, 20, 1, -1, []int64{0, 20, 40}},
		{"pace change after time passed", 10, []int64{0, 0, 0, 0}, 2, 15, -1, []int64{0, 10, 15, 17}},
		{"cancel moves the rest up", 10, []int64{0, 0, 0, 0}, 0, 1, 1, []int64{0, -1, 10, 20}},
		{"unpaced", 0, []int64{0, 0, 5}, 0, 0, -1, []int64{0, 0, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdaptive(t)
			p := &a.pacer
			p.interval = tt.interval
			var sent []int64
			p.sent = func(s int64) { sent = append(sent, s) }
			rs := make([]*adaptiveReservation, len(tt.arrive))
			slots := make([]int64, len(tt.arrive))
			for i, at := range tt.arrive {
				rs[i] = p.reserve(a, at)
				if rs[i] == nil {
					slots[i] = at
				} else {
					slots[i] = rs[i].slot
				}
			}
			chans := make([]chan struct{}, len(rs))
			before := make([]int64, len(rs))
			for i, r := range rs {
				if r != nil {
					r.changed = make(chan struct{})
					chans[i], before[i] = r.changed, r.slot
				}
			}
			if tt.change > 0 {
				p.interval = tt.change
				p.reschedule(tt.changeAt)
			}
			if tt.cancel >= 0 {
				p.cancel(rs[tt.cancel], tt.changeAt)
			}
			for i, r := range rs {
				switch {
				case i == tt.cancel:
					assert.False(t, r.inList, "request %d was cancelled", i)
				case r != nil:
					slots[i] = r.slot
				}
				if tt.want[i] >= 0 {
					assert.Equal(t, tt.want[i], slots[i], "slot of request %d", i)
				}
				if chans[i] != nil {
					closed := false
					select {
					case <-chans[i]:
						closed = true
					default:
					}
					moved := i != tt.cancel && r.slot != before[i]
					assert.Equal(t, moved, closed, "request %d is told exactly when it moves", i)
				}
			}
			// Requests come due in order.
			p.settle(math.MaxInt64 / 2)
			for i := 1; i < len(sent); i++ {
				assert.LessOrEqual(t, sent[i-1], sent[i])
			}
			assert.Zero(t, p.pending)
		})
	}
}

// TestAdaptiveCancel: a cancelled reservation gives its place back, a due one cannot be given
// back, a second Cancel does nothing.
func TestAdaptiveCancel(t *testing.T) {
	a := newAdaptive(t, WithInitialRate(10))
	_, _ = a.Reserve(at0)
	r1, _ := a.Reserve(at0)
	r2, _ := a.Reserve(at0)
	require.Equal(t, ms(200), r2.Delay(at0))
	ch := r2.Changed()
	now := at0.Add(ms(10))
	r1.Cancel(now)
	assert.Equal(t, ms(90), r2.Delay(now), "moved up by one interval")
	select {
	case <-ch:
	default:
		t.Fatal("not told")
	}
	r1.Cancel(now) // second cancel: no-op
	assert.Equal(t, ms(90), r2.Delay(now))
	assert.Nil(t, r1.Changed(), "a cancelled reservation never moves")
	// Due: not given back.
	r2.Cancel(at0.Add(ms(100)))
	r3, _ := a.Reserve(at0.Add(ms(100)))
	assert.Equal(t, ms(100), r3.Delay(at0.Add(ms(100))))
}

// TestAdaptiveEpoch: the throttles for requests sent before a cut do not cut again; one for a
// request sent after it does.
func TestAdaptiveEpoch(t *testing.T) {
	a := newAdaptive(t, WithInitialRate(1000))
	now := at0
	for range 5 { // five requests, 1 ms apart
		r, err := a.Reserve(now)
		require.NoError(t, err)
		now = now.Add(r.Delay(now))
	}
	now = now.Add(ms(1))
	for range 5 { // all five are throttled
		a.Observe(now, statusResponse(http.StatusTooManyRequests), nil)
	}
	s := a.Stats()
	assert.Equal(t, int64(5), s.Throttles)
	assert.Equal(t, int64(1), s.Cuts, "one cut for requests that all left before it")
	rate := a.Rate()
	assert.Less(t, rate, 1000.0)

	// A request sent well after the cut is throttled: a new epoch, a new cut.
	now = now.Add(time.Second)
	r, _ := a.Reserve(now)
	now = now.Add(r.Delay(now) + ms(1))
	a.Observe(now, statusResponse(http.StatusTooManyRequests), nil)
	assert.Equal(t, int64(2), a.Stats().Cuts)
	assert.Less(t, a.Rate(), rate)
}

// TestAdaptiveThrottleStatuses: only the configured statuses are throttles; transport errors
// teach nothing.
func TestAdaptiveThrottleStatuses(t *testing.T) {
	tests := []struct {
		name      string
		opts      []AdaptiveOption
		status    int
		err       error
		throttles int64
		successes int64
	}{
		{"429 by default", nil, 429, nil, 1, 0},
		{"503 not by default", nil, 503, nil, 0, 1},
		{"503 configured", []AdaptiveOption{WithThrottleStatuses(429, 503)}, 503, nil, 1, 0},
		{"many statuses", []AdaptiveOption{WithThrottleStatuses(420, 421, 422, 423, 424, 425, 426, 427, 428, 429)}, 429, nil, 1, 0},
		{"200", nil, 200, nil, 0, 1},
		{"transport error", nil, 0, errors.New("connection reset"), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdaptive(t, tt.opts...)
			_, _ = a.Reserve(at0)
			var resp *http.Response
			if tt.err == nil {
				resp = statusResponse(tt.status)
			}
			a.Observe(at0.Add(ms(1)), resp, tt.err)
			s := a.Stats()
			assert.Equal(t, tt.throttles, s.Throttles)
			assert.Equal(t, tt.successes, s.Successes)
			assert.Zero(t, s.InFlight, "the response (or error) answered the request")
		})
	}
}

// TestAdaptiveLyingHeaders: what a server claims is clamped, malformed fields are ignored, and
// nothing panics.
func TestAdaptiveLyingHeaders(t *testing.T) {
	hdr := func(kv ...string) *http.Response {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody}
	}
	tests := []struct {
		name       string
		opts       []AdaptiveOption
		resp       *http.Response
		wantRate   float64 // the pace after the response (0: no signal, nothing paced)
		wantServer float64
		wantAllow  int64 // the allowance after the response
	}{
		{"a billion per second is read as the maximum", []AdaptiveOption{WithRateBounds(0.01, 1000)},
			hdr("Ratelimit-Policy", `"p";q=1000000000;w=1`), 1000 * (1 - DefaultHeadroom), 1000, 0},
		{"huge quota in a tiny window", nil,
			hdr("Ratelimit-Policy", `"p";q=999999999999999;w=1`), DefaultMaxRate * (1 - DefaultHeadroom), DefaultMaxRate, 0},
		{"negative quota ignored", nil, hdr("Ratelimit-Policy", `"p";q=-5;w=1`), 0, 0, 0},
		{"zero window ignored", nil, hdr("Ratelimit-Policy", `"p";q=100;w=0`), 0, 0, 0},
		{"garbage ignored", nil, hdr("Ratelimit-Policy", `q=;;w==`, "X-Ratelimit-Limit", "lots", "X-Ratelimit-Remaining", "-3"),
			0, 0, 0},
		{"huge remaining without a quota: no allowance, spread no faster than 4x the rate", nil,
			hdr("X-Ratelimit-Remaining", "999999999999", "X-Ratelimit-Reset", "1"), 4 * DefaultInitialRate, 0, 0},
		{"remaining above the declared quota is clamped to it", nil,
			hdr("Ratelimit-Policy", `"p";q=10;w=60`, "Ratelimit", `"p";r=1000000;t=1`), 9.0 / 60 * (1 - DefaultHeadroom), 10.0 / 60, 10},
		{"remaining above a limit without a window is clamped to it; the reset gives the window", nil,
			hdr("X-Ratelimit-Limit", "5000", "X-Ratelimit-Remaining", "999999999", "X-Ratelimit-Reset", "3600"),
			4999.0 / 3600 * (1 - DefaultHeadroom), 5000.0 / 3600, 5000},
		{"nothing left cuts; a huge reset holds nothing", nil,
			hdr("X-Ratelimit-Remaining", "0", "X-Ratelimit-Reset", "99999999999"), cutMax * DefaultInitialRate, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdaptive(t, tt.opts...)
			_, _ = a.Reserve(at0)
			require.NotPanics(t, func() { a.Observe(at0.Add(ms(1)), tt.resp, nil) })
			assert.InDelta(t, tt.wantRate, a.Rate(), tt.wantRate*1e-9+1e-12)
			assert.InDelta(t, tt.wantServer, a.Stats().ServerRate, 1e-9)
			assert.Equal(t, tt.wantAllow, a.Stats().Allowance)
		})
	}
}

// TestAdaptiveSpreadsRemaining: a server that says what remains but declares no quota gives no
// allowance (nothing bounds its claim); when more is left than the pace spends before the reset,
// the rest is spread evenly until then, and the pace falls back after the reset.
func TestAdaptiveSpreadsRemaining(t *testing.T) {
	a := newAdaptive(t)
	_, _ = a.Reserve(at0)
	remaining := func(n, reset string) *http.Response {
		h := http.Header{}
		h.Set(ratelimitheader.HeaderXRemaining, n)
		h.Set(ratelimitheader.HeaderXReset, reset)
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody}
	}
	// 300 left with 10 s to go: 30 per second, above the initial 20 (and under 4 x 20).
	a.Observe(at0.Add(ms(1)), remaining("300", "10"), nil)
	assert.InDelta(t, 30.0, a.Rate(), 1e-9)
	assert.Zero(t, a.Stats().Allowance)
	// After the reset, the law's own rate again (any response updates the pace).
	a.Observe(at0.Add(11*time.Second), remaining("5", "60"), nil)
	assert.InDelta(t, DefaultInitialRate, a.Rate(), 1e-9)
}

// TestAdaptiveDecay: what was learned fades while the key is quiet, from the next Reserve's now.
func TestAdaptiveDecay(t *testing.T) {
	const hl = 10 * time.Second
	learn := func(t *testing.T) *Adaptive {
		a := newAdaptive(t, WithDecayHalfLife(hl), WithInitialRate(10))
		_, _ = a.Reserve(at0)
		a.Observe(at0.Add(ms(1)), policyOnlyResponse(1001, time.Second), nil)
		require.InDelta(t, 1000*(1-DefaultHeadroom), a.Rate(), 1e-9)
		return a
	}
	tests := []struct {
		name      string
		quiet     time.Duration
		wantRate  float64
		forgotten bool
	}{
		{"a short pause changes nothing", hl / 100, 1000 * (1 - DefaultHeadroom), false},
		{"one half-life: halfway back to the initial rate", hl, 10 + (1000*(1-DefaultHeadroom)-10)/2, false},
		{"two half-lives: a quarter of the way left", 2 * hl, 10 + (1000*(1-DefaultHeadroom)-10)/4, false},
		{"twenty half-lives: forgotten", 20 * hl, 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := learn(t)
			now := at0.Add(ms(1) + tt.quiet)
			_, _ = a.Reserve(now)
			assert.InDelta(t, tt.wantRate, a.Rate(), 1e-6)
			// The pacer keeps the decayed pace at once.
			r, _ := a.Reserve(now)
			assert.Equal(t, time.Duration(math.Round(1e9/tt.wantRate)), r.Delay(now))
			if tt.forgotten {
				assert.Zero(t, a.Stats().ServerRate)
			} else {
				assert.NotZero(t, a.Stats().ServerRate, "the declared rate is kept until forgotten")
			}
			// The next response that declares the rate brings the pace back to it.
			a.Observe(now.Add(ms(1)), policyOnlyResponse(1001, time.Second), nil)
			assert.InDelta(t, 1000*(1-DefaultHeadroom), a.Rate(), 1e-9)
		})
	}
}

// TestAdaptiveConcurrent hammers one limiter from many goroutines (run with -race).
func TestAdaptiveConcurrent(t *testing.T) {
	a := newAdaptive(t, WithRateBounds(1, 1e9), WithInitialRate(1e6))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			now := at0
			for i := range 500 {
				now = now.Add(time.Microsecond)
				r, err := a.Reserve(now)
				if err != nil {
					t.Error(err)
					return
				}
				_ = r.Changed()
				if i%7 == g {
					r.Cancel(now)
					continue
				}
				status := http.StatusOK
				if i%50 == 0 {
					status = http.StatusTooManyRequests
				}
				a.Observe(now.Add(r.Delay(now)), statusResponse(status), nil)
				_ = a.Rate()
				_ = a.Stats()
			}
		})
	}
	wg.Wait()
	s := a.Stats()
	assert.Positive(t, s.Successes)
	assert.Positive(t, s.Throttles)
	assert.Positive(t, a.Rate())
}
