package redisthrottle

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/steadyhttp/steady/throttle"
)

// declaring is a success whose headers declare perSec requests a second.
func declaring(perSec int) *http.Response {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Ratelimit-Policy": {"\"default\";q=" + strconv.Itoa(perSec) + ";w=1"}}}
}

// reserveAt reserves one request on l at at.
func reserveAt(t *testing.T, l *Limiter, at time.Duration) throttle.Reservation {
	t.Helper()
	r, err := l.Reserve(epoch.Add(at))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSlotsAgreeAcrossMissedChanges: two slots booked one after the other, by two processes, stay
// one spacing apart whatever pace changes one of the processes missed: each places its slot on the
// slot clock it last heard, as Redis does (with slots moved change by change from the pace each
// process last heard, b, which missed a change, placed its slot where a's already was).
func TestSlotsAgreeAcrossMissedChanges(t *testing.T) {
	c := newClient(t, redisURL(t))
	a, b := mustNew(t, c, "clock", WithInitialRate(10)), mustNew(t, c, "clock", WithInitialRate(10))
	reserveAt(t, a, 0) // due at once
	w := reserveAt(t, b, 0)
	x := reserveAt(t, a, 0)                  // the slot after w
	for i, perSec := range []int{400, 120} { // two changes of pace that b does not hear of
		a.ObserveAttempt(epoch, epoch.Add(time.Millisecond), declaring(perSec), nil)
		reserveAt(t, a, time.Duration(i+1)*time.Millisecond)
	}
	now := epoch.Add(3 * time.Millisecond)
	reserveAt(t, b, 3*time.Millisecond) // b hears of the last
	rate := b.Rate()
	if !near(rate, 120*(1-DefaultHeadroom)) || !near(a.Rate(), rate) {
		t.Fatalf("paces a %v/s, b %v/s; want the declared 120/s less the headroom", a.Rate(), rate)
	}
	gap := x.Delay(now) - w.Delay(now)
	spacing := time.Duration(1e9 / rate)
	if w.Delay(now) <= 0 || math.Abs(float64(gap-spacing)) > float64(2*time.Microsecond) {
		t.Fatalf("b's slot is due in %v, a's next one %v later; want one spacing, %v", w.Delay(now), gap, spacing)
	}
}

// TestMissedSlotIsBookedAgain: a slot that the pace, risen while its process did not hear of it,
// made due before the process heard is booked again behind the line (counted as lost), instead
// of going at once beside the slot due then.
func TestMissedSlotIsBookedAgain(t *testing.T) {
	c := newClient(t, redisURL(t))
	a, b := mustNew(t, c, "missed", WithInitialRate(10)), mustNew(t, c, "missed", WithInitialRate(10))
	reserveAt(t, a, 0)
	w := reserveAt(t, b, 0) // due in 100 ms at 10/s
	if d := w.Delay(epoch); d != 100*time.Millisecond {
		t.Fatalf("b's slot is due in %v, want 100ms", d)
	}
	// The declared rate takes the pace to 990/s: w's slot is due about 1 ms later, which b hears
	// of only at 50 ms.
	a.ObserveAttempt(epoch, epoch.Add(time.Millisecond), declaring(999), nil)
	reserveAt(t, a, time.Millisecond)
	now := epoch.Add(50 * time.Millisecond)
	next := reserveAt(t, b, 50*time.Millisecond)
	lost := b.Stats().Lost
	d := w.Delay(now)
	if d <= 0 || b.Stats().Lost != lost+1 {
		t.Fatalf("b's missed slot: delay %v, lost %d -> %d; want booked again (a delay, one lost)", d, lost, b.Stats().Lost)
	}
	if d <= next.Delay(now) {
		t.Errorf("the missed slot is due in %v, b's last booking in %v: want it behind", d, next.Delay(now))
	}
}

// TestSlotDueBeforeACutIsBookedAgain: a slot still waiting that was due before the law cut (its
// process was late) is booked again when the process hears of the cut, instead of going less
// than a spacing after the cut, which the cut's hold keeps quiet.
func TestSlotDueBeforeACutIsBookedAgain(t *testing.T) {
	c := newClient(t, redisURL(t))
	a, b := mustNew(t, c, "cutlate", WithInitialRate(10)), mustNew(t, c, "cutlate", WithInitialRate(10))
	reserveAt(t, a, 0)
	w := reserveAt(t, b, 0)                                                                               // due at 100 ms; b is late and has not sent it at 150 ms
	a.ObserveAttempt(epoch.Add(140*time.Millisecond), epoch.Add(150*time.Millisecond), throttled429, nil) // the cut
	if law := storedLaw(t, a); !law.Active() {
		t.Fatalf("the law did not cut: %s", law.State())
	}
	now := epoch.Add(160 * time.Millisecond)
	reserveAt(t, b, 160*time.Millisecond) // b hears of the cut
	spacing := time.Duration(1e9 / b.Rate())
	if d := w.Delay(now); now.Add(d).Before(epoch.Add(150*time.Millisecond + spacing)) {
		t.Fatalf("b's late slot is due %v after the cut, want at least a spacing (%v): booked again", now.Add(d).Sub(epoch.Add(150*time.Millisecond)), spacing)
	}
	if b.Stats().Lost != 1 {
		t.Errorf("lost %d, want the late slot counted", b.Stats().Lost)
	}
}

// TestOlderStateGetsAClock: a learning state written by the release before the slot clock (a pace
// and its time, but no clock) gets one on the first reservation, kept from then on, instead of
// reading as a new state at every call.
func TestOlderStateGetsAClock(t *testing.T) {
	c := newClient(t, redisURL(t))
	a := mustNew(t, c, "older")
	if err := c.HSet(context.Background(), a.Key(), "e", 20, "g", epoch.UnixMicro(), "t", epoch.UnixMicro(), "r", 20, "s", 1).Err(); err != nil {
		t.Fatal(err)
	}
	reserveAt(t, a, 0)
	vs := hget(t, c, a, "vs")
	w := reserveAt(t, a, time.Millisecond)
	if got := hget(t, c, a, "vs"); got != vs || vs == "" {
		t.Fatalf("the state's clock began at %q, then %q: want one clock, kept", vs, got)
	}
	if d := w.Delay(epoch.Add(time.Millisecond)); d <= 0 || d > 100*time.Millisecond {
		t.Fatalf("the second slot is due in %v, want within two spacings at 20/s", d)
	}
}
