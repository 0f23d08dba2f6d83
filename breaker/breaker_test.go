package breaker

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/throttle"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newBreaker(t *testing.T, opts ...Option) *Breaker {
	t.Helper()
	b, err := New(opts...)
	require.NoError(t, err)
	return b
}

// record lets one request for key go at now and records o; it fails the test when refused.
func record(t *testing.T, b *Breaker, key string, now time.Time, o Outcome) {
	t.Helper()
	tk, err := b.Allow(key, now)
	require.NoError(t, err)
	tk.Record(now, o)
}

func TestOpensOnFailureRatio(t *testing.T) {
	type step struct {
		at       time.Duration // after t0
		failures int
		succ     int
	}
	tests := []struct {
		name     string
		steps    []step
		wantOpen bool
	}{
		{"below the minimum number of requests", []step{{0, 9, 0}}, false},
		{"at the minimum, all failed", []step{{0, 10, 0}}, true},
		{"ratio just below", []step{{0, 4, 6}}, false},
		{"ratio reached", []step{{0, 5, 5}}, true},
		{"successes first, then failures reach the ratio", []step{{0, 0, 10}, {time.Second, 10, 0}}, true},
		{"old failures slid out of the window", []step{{0, 9, 0}, {11 * time.Second, 1, 0}}, false},
		{"failures within one window", []step{{0, 5, 0}, {9 * time.Second, 5, 0}}, true},
		{"successes slid out, the failures that stay reach the ratio", []step{{0, 0, 20}, {5 * time.Second, 10, 0}, {11 * time.Second, 0, 0}, {11 * time.Second, 1, 0}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBreaker(t, WithMinRequests(10), WithFailureRatio(0.5), WithWindow(10*time.Second))
			for _, s := range tt.steps {
				now := t0.Add(s.at)
				for range s.succ {
					record(t, b, "a", now, Success)
				}
				for range s.failures {
					if st, _ := b.State("a", now); st == Open {
						break
					}
					record(t, b, "a", now, Failure)
				}
			}
			last := t0.Add(tt.steps[len(tt.steps)-1].at)
			st, _ := b.State("a", last)
			assert.Equal(t, tt.wantOpen, st == Open, "state %v", st)
		})
	}
}

// opened returns a Breaker whose key "a" opened at t0 (10 failures) with the given options.
func opened(t *testing.T, opts ...Option) *Breaker {
	t.Helper()
	b := newBreaker(t, append([]Option{WithMinRequests(10), WithCooldown(5 * time.Second)}, opts...)...)
	for range 10 {
		record(t, b, "a", t0, Failure)
	}
	st, until := b.State("a", t0)
	require.Equal(t, Open, st)
	require.Equal(t, t0.Add(5*time.Second), until)
	return b
}

func TestOpenRefusesUntilTheCooldownEnds(t *testing.T) {
	b := opened(t)
	_, err := b.Allow("a", t0.Add(5*time.Second-1))
	var oe *OpenError
	require.ErrorAs(t, err, &oe)
	assert.ErrorIs(t, err, ErrCircuitOpen)
	assert.Equal(t, OpenError{Key: "a", State: Open, Until: t0.Add(5 * time.Second)}, *oe)

	record(t, b, "b", t0, Success) // another key is not affected
	tk, err := b.Allow("a", t0.Add(5*time.Second))
	require.NoError(t, err)
	assert.True(t, tk.Probe())
}

func TestHalfOpen(t *testing.T) {
	half := t0.Add(5 * time.Second)
	tests := []struct {
		name      string
		probes    int
		outcomes  []Outcome // of the probes, in order
		wantState State
	}{
		{"one probe succeeds: closed", 1, []Outcome{Success}, Closed},
		{"one probe fails: open again", 1, []Outcome{Failure}, Open},
		{"three probes, all succeed", 3, []Outcome{Success, Success, Success}, Closed},
		{"three probes, two succeed so far", 3, []Outcome{Success, Success}, HalfOpen},
		{"three probes, the last fails", 3, []Outcome{Success, Success, Failure}, Open},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := opened(t, WithProbes(tt.probes))
			var tickets []Ticket
			for range tt.probes {
				tk, err := b.Allow("a", half)
				require.NoError(t, err)
				assert.True(t, tk.Probe())
				tickets = append(tickets, tk)
			}
			_, err := b.Allow("a", half)
			var oe *OpenError
			require.ErrorAs(t, err, &oe, "every probe place is taken")
			assert.Equal(t, HalfOpen, oe.State)
			for i, o := range tt.outcomes {
				tickets[i].Record(half, o)
			}
			st, until := b.State("a", half)
			assert.Equal(t, tt.wantState, st)
			if tt.wantState == Open {
				assert.Equal(t, half.Add(5*time.Second), until, "a new cool-down")
			}
			if tt.wantState == Closed {
				record(t, b, "a", half, Failure) // the window starts empty: one failure does not reopen
				st, _ = b.State("a", half)
				assert.Equal(t, Closed, st)
			}
		})
	}
}

func TestIgnoredProbeFreesItsPlace(t *testing.T) {
	b := opened(t)
	half := t0.Add(5 * time.Second)
	tk, err := b.Allow("a", half)
	require.NoError(t, err)
	_, err = b.Allow("a", half)
	require.ErrorIs(t, err, ErrCircuitOpen)
	tk.Record(half, Ignored)
	st, _ := b.State("a", half)
	assert.Equal(t, HalfOpen, st)
	record(t, b, "a", half, Success)
	st, _ = b.State("a", half)
	assert.Equal(t, Closed, st)
}

// TestOutcomesOfAnEarlierStateAreNotCounted: a request let through while closed that fails after the
// circuit opened does not count against the half-open state, nor does it extend the cool-down.
func TestOutcomesOfAnEarlierStateAreNotCounted(t *testing.T) {
	b := newBreaker(t, WithMinRequests(10), WithCooldown(5*time.Second))
	late, err := b.Allow("a", t0)
	require.NoError(t, err)
	for range 10 {
		record(t, b, "a", t0, Failure)
	}
	half := t0.Add(5 * time.Second)
	probe, err := b.Allow("a", half)
	require.NoError(t, err)
	late.Record(half, Failure)
	st, _ := b.State("a", half)
	assert.Equal(t, HalfOpen, st)
	probe.Record(half, Success)
	st, _ = b.State("a", half)
	assert.Equal(t, Closed, st)
}

func TestObserverSeesEveryChange(t *testing.T) {
	var mu sync.Mutex
	var events []Event
	b := opened(t, WithObserver(func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}))
	half := t0.Add(5 * time.Second)
	record(t, b, "a", half, Failure) // probe fails
	again := half.Add(5 * time.Second)
	record(t, b, "a", again, Success)
	assert.Equal(t, []Event{
		{Key: "a", From: Closed, To: Open, At: t0, Requests: 10, Failures: 10},
		{Key: "a", From: Open, To: HalfOpen, At: half},
		{Key: "a", From: HalfOpen, To: Open, At: half},
		{Key: "a", From: Open, To: HalfOpen, At: again},
		{Key: "a", From: HalfOpen, To: Closed, At: again},
	}, events)
}

func TestMaxKeys(t *testing.T) {
	b := newBreaker(t, WithMaxKeys(2), WithMinRequests(1), WithCooldown(time.Minute))
	record(t, b, "a", t0, Failure) // open
	record(t, b, "b", t0, Failure) // open
	tk, err := b.Allow("c", t0)
	require.NoError(t, err, "no closed circuit to forget: the new key goes unguarded")
	tk.Record(t0, Failure)
	assert.Equal(t, 2, b.Len())
	b2 := newBreaker(t, WithMaxKeys(2))
	record(t, b2, "a", t0, Success)
	record(t, b2, "b", t0, Success)
	record(t, b2, "c", t0, Success)
	assert.Equal(t, 2, b2.Len(), "a closed circuit was forgotten")
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []Option{
		WithFailureRatio(0), WithFailureRatio(1.5), WithMinRequests(0), WithWindow(0), WithCooldown(0),
		WithProbes(0), WithMode(Mode(7)), WithClassifier(nil), WithKeyFunc(nil), WithMaxKeys(0), nil,
	} {
		b, err := New(o)
		assert.Nil(t, b)
		assert.ErrorIs(t, err, ErrInvalidOption)
	}
}

func TestDefaultClassifier(t *testing.T) {
	resp := func(code int) *http.Response { return &http.Response{StatusCode: code} }
	tests := []struct {
		name string
		resp *http.Response
		err  error
		want Outcome
	}{
		{"200", resp(200), nil, Success},
		{"404", resp(404), nil, Success},
		{"429 is the throttle's business", resp(429), nil, Success},
		{"500", resp(500), nil, Failure},
		{"503", resp(503), nil, Failure},
		{"refused", nil, &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, Failure},
		{"EOF", nil, io.EOF, Failure},
		{"caller cancelled", nil, context.Canceled, Ignored},
		{"caller's deadline", nil, context.DeadlineExceeded, Ignored},
		{"throttle refused locally", nil, &throttle.WaitTooLongError{Key: "a"}, Ignored},
		{"unknown error", nil, errors.New("boom"), Ignored},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, DefaultClassifier(tt.resp, tt.err))
		})
	}
}

func TestStrings(t *testing.T) {
	assert.Equal(t, "closed open half-open State(9)", Closed.String()+" "+Open.String()+" "+HalfOpen.String()+" "+State(9).String())
	assert.Equal(t, "success failure ignored Outcome(9)", Success.String()+" "+Failure.String()+" "+Ignored.String()+" "+Outcome(9).String())
	assert.Equal(t, "pause fail-fast Mode(9)", Pause.String()+" "+FailFast.String()+" "+Mode(9).String())
}
