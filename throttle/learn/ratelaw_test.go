package learn_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/throttle/learn"
)

func newLaw(t testing.TB) *learn.RateLaw {
	t.Helper()
	l, err := learn.NewRateLaw(1)
	if err != nil {
		t.Fatal(err)
	}
	l.ObserveRoundTrip(time.Unix(0, 0), time.Unix(0, 1e6))
	return l
}

// lawStep is one piece of evidence: n successes, or a throttle of a request sent at sent.
type lawStep struct {
	at       time.Duration
	n        int64
	throttle bool
	sent     time.Duration
}

// lawScript is a run against a server that admits 10 at once and then about 20/s: the first
// throttle, a search, its refutation, a throttle from the cut's epoch, and the recovery.
func lawScript() []lawStep {
	var s []lawStep
	at := time.Duration(0)
	for range 10 {
		at += time.Millisecond
		s = append(s, lawStep{at: at, n: 1})
	}
	s = append(s, lawStep{at: at + time.Millisecond, throttle: true, sent: at})
	at += time.Millisecond
	for i := range 60 {
		at += 50 * time.Millisecond
		s = append(s, lawStep{at: at, n: 1})
		if i == 20 {
			s = append(s, lawStep{at: at + time.Millisecond, throttle: true, sent: at})
			// In flight with it: the same epoch.
			s = append(s, lawStep{at: at + 2*time.Millisecond, throttle: true, sent: at})
		}
	}
	return s
}

func (s lawStep) apply(l *learn.RateLaw, t0 time.Time) {
	if s.throttle {
		l.Throttle(t0.Add(s.sent), t0.Add(s.at))
		return
	}
	l.Admit(t0.Add(s.at), s.n)
}

// TestRateLawIsTheLearnersLaw drives a Learner and a RateLaw with the same headerless answers: the
// law is the Learner's rate strategy, so both pace alike through the first throttle, the search, its
// refutation and the cut.
func TestRateLawIsTheLearnersLaw(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	l, err := learn.New()
	if err != nil {
		t.Fatal(err)
	}
	law := newLaw(t)
	for i, s := range lawScript() {
		if s.throttle {
			r, _ := l.Reserve(t0.Add(s.sent))
			_ = r
			l.ObserveAttempt(t0.Add(s.sent), t0.Add(s.at), resp(429), nil)
		} else {
			sent := t0.Add(s.at - time.Millisecond)
			r, _ := l.Reserve(sent)
			_ = r
			l.ObserveAttempt(sent, t0.Add(s.at), resp(200), nil)
		}
		s.apply(law, t0)
		if !law.Active() {
			continue
		}
		if got, want := law.Rate(), l.Rate(); !near(got, want, 1e-6) {
			t.Fatalf("step %d (%+v): law paces at %v/s, the Learner at %v/s", i, s, got, want)
		}
	}
	if st := law.State(); st != "bisect" {
		t.Fatalf("law state %q after a refuted search, want bisect", st)
	}
	if lim := l.LearnedLimit(); lim.Source != "estimated" || !near(float64(lim.Quota), float64(int64(law.Estimate())), 0) {
		t.Fatalf("Learner believes %+v, law estimates %v/s", lim, law.Estimate())
	}
}

func near(a, b, rel float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= rel*max(a, b, 1e-12)
}

// TestRateLawSurvivesEncoding runs one law whole and another encoded and decoded into a fresh law
// between every step, as processes sharing it through Redis do: they end in the same state, byte
// for byte.
func TestRateLawSurvivesEncoding(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	whole := newLaw(t)
	state, _ := newLaw(t).MarshalBinary()
	for i, s := range lawScript() {
		s.apply(whole, t0)
		next := newLaw(t)
		if err := next.UnmarshalBinary(state); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		s.apply(next, t0)
		state, _ = next.MarshalBinary()
		if w, _ := whole.MarshalBinary(); !bytes.Equal(w, state) {
			t.Fatalf("step %d (%+v): the law passed through its encoding differs (rate %v)", i, s, whole.Rate())
		}
	}
}

// TestRateLawStartupPace: before the first throttle the pace is the startup's in-flight cap over
// one round trip, (successes+1)/RTT, at least the initial rate; the initial rate before a round trip.
func TestRateLawStartupPace(t *testing.T) {
	l, err := learn.NewRateLaw(2)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Rate(); got != 2 {
		t.Fatalf("before a round trip: %v/s, want the initial 2/s", got)
	}
	l.ObserveRoundTrip(time.Unix(0, 0), time.Unix(0, 1e8))
	if got := l.Rate(); !near(got, 10, 1e-9) {
		t.Fatalf("no success, RTT 100 ms: %v/s, want 10/s (one in flight)", got)
	}
	l.Admit(time.Unix(1, 0), 9)
	if got := l.Rate(); !near(got, 100, 1e-9) || l.Active() || l.State() != "slow-start" {
		t.Fatalf("9 successes: %v/s (%s), want 100/s in slow-start", got, l.State())
	}
	l.Admit(time.Unix(2, 0), 2000)
	if got := l.Rate(); got != learn.DefaultMaxRate {
		t.Fatalf("2,009 successes: %v/s, want the cap open (the maximum, %v/s)", got, float64(learn.DefaultMaxRate))
	}
}

// TestRateLawOneCutPerEpoch: a throttle for a request sent before the last cut (within the jitter
// margin after it) belongs to that cut, whoever reports it.
func TestRateLawOneCutPerEpoch(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	l := newLaw(t)
	l.Admit(t0, 20)
	if ev := l.Throttle(t0, t0.Add(time.Millisecond)); ev == "" || !l.Active() {
		t.Fatalf("first throttle: event %q, active %v", ev, l.Active())
	}
	rate := l.Rate()
	if ev := l.Throttle(t0.Add(time.Millisecond), t0.Add(2*time.Millisecond)); ev != "" || l.Rate() != rate {
		t.Fatalf("a throttle for a request sent with the cut: event %q, rate %v -> %v", ev, rate, l.Rate())
	}
	if ev := l.Throttle(t0.Add(time.Second), t0.Add(time.Second+time.Millisecond)); ev == "" {
		t.Fatalf("a throttle for a request sent a second after the cut did not cut")
	}
}

// TestRateLawTheCutsHoldIsItsEpoch: the first request after a cut goes a spacing after it, so a
// throttle for a request sent sooner (later than the jitter margin: a sender that was booked
// before the cut and left late, on a loaded host) belongs to the cut; one sent after the hold is
// the next epoch's. Taken as a refutation, a late sender's throttle right after the first one
// set the estimate to the startup's count (4/s against 100/s), at a probe of 5% per quiet span.
func TestRateLawTheCutsHoldIsItsEpoch(t *testing.T) {
	for _, run := range []int64{4, 20, 100} {
		t.Run(fmt.Sprintf("run=%d", run), func(t *testing.T) {
			t0 := time.Unix(1_700_000_000, 0)
			l := newLaw(t)
			l.Admit(t0, run)
			cut := t0.Add(time.Millisecond)
			if ev := l.Throttle(t0, cut); ev == "" || l.Rate() != float64(run) {
				t.Fatalf("first throttle after %d: event %q, pace %v/s", run, ev, l.Rate())
			}
			spacing := time.Duration(float64(time.Second) / float64(run))
			late := cut.Add(spacing * 9 / 10)
			if ev := l.Throttle(late, late.Add(time.Millisecond)); ev != "" || l.Rate() != float64(run) || l.Estimate() != 0 {
				t.Fatalf("a throttle for a request sent %v after the cut, inside its hold of %v: event %q, pace %v/s, estimate %v/s",
					late.Sub(cut), spacing, ev, l.Rate(), l.Estimate())
			}
			next := cut.Add(spacing * 11 / 10)
			if ev := l.Throttle(next, next.Add(time.Millisecond)); ev == "" {
				t.Fatalf("a throttle for a request sent %v after the cut, past its hold of %v, did not cut", next.Sub(cut), spacing)
			}
		})
	}
}

func TestRateLawRefusesBadState(t *testing.T) {
	good, _ := newLaw(t).MarshalBinary()
	for name, data := range map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)-1],
		"format":    append([]byte{9}, good[1:]...),
		"state":     append([]byte{good[0], 77}, good[2:]...),
	} {
		l := newLaw(t)
		if err := l.UnmarshalBinary(data); !errors.Is(err, learn.ErrBadLawState) {
			t.Errorf("%s: err %v, want ErrBadLawState", name, err)
		}
		if l.Rate() != 1000 { // the startup pace at 1 ms, untouched
			t.Errorf("%s: the law changed (rate %v)", name, l.Rate())
		}
	}
	if _, err := learn.NewRateLaw(0); !errors.Is(err, learn.ErrInvalidOption) {
		t.Errorf("initial rate 0: %v, want ErrInvalidOption", err)
	}
}

// FuzzRateLawState: any bytes decode into a usable law or are refused; never a panic, never a
// pace that is not a positive finite number.
func FuzzRateLawState(f *testing.F) {
	good, _ := newLaw(f).MarshalBinary()
	f.Add(good)
	l := newLaw(f)
	l.Admit(time.Unix(1, 0), 10)
	l.Throttle(time.Unix(1, 0), time.Unix(1, 1e6))
	cut, _ := l.MarshalBinary()
	f.Add(cut)
	f.Fuzz(func(t *testing.T, data []byte) {
		l := newLaw(t)
		if err := l.UnmarshalBinary(data); err != nil {
			return
		}
		at := time.Unix(2, 0)
		l.Admit(at, 3)
		l.Throttle(at, at.Add(time.Millisecond))
		if r := l.Rate(); !(r > 0) || r > learn.DefaultMaxRate {
			t.Fatalf("rate %v from %s", r, fmt.Sprintf("%x", data))
		}
	})
}

// TestRateLawCeiling: a ceiling bounds the pace from the first cut on; a doubling the ceiling holds
// short is remembered as such (the pace held before it is the lower end, not half the ceiling), a
// doubling it refuses entirely is none, and a cruise at the ceiling does not probe above it.
func TestRateLawCeiling(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	l := newLaw(t)
	l.SetCeiling(25)
	if got := l.Rate(); got > 25 {
		t.Fatalf("startup pace %v/s above the ceiling", got)
	}
	l.Admit(t0, 8)
	if ev := l.Throttle(t0, t0.Add(time.Millisecond)); ev == "" || l.Rate() != 8 {
		t.Fatalf("first throttle after 8 successes: event %q, pace %v/s, want a search from 8/s", ev, l.Rate())
	}
	at := t0.Add(time.Second)
	var paces []float64
	for range 16 { // four search steps of four successes, 10 ms apart
		at = at.Add(10 * time.Millisecond)
		if evs := l.Admit(at, 1); len(evs) > 0 {
			paces = append(paces, l.Rate())
		}
	}
	if !slices.Equal(paces, []float64{16, 25}) {
		t.Fatalf("search steps at %v/s, want [16 25]: the ceiling holds the second short and refuses the rest", paces)
	}
	l.Throttle(at, at.Add(time.Millisecond))
	if got := l.Estimate(); got != 16 {
		t.Fatalf("throttled at the ceiling after a doubling it held short: estimate %v/s, want the 16/s held before it", got)
	}
	probesAtCeiling := 0
	for range 5000 {
		at = at.Add(50 * time.Millisecond)
		atCeiling := l.Estimate() >= 25
		for _, ev := range l.Admit(at, 1) {
			if atCeiling && strings.Contains(ev, "probe at") {
				probesAtCeiling++
			}
		}
		if l.Rate() > 25 {
			t.Fatalf("pace %v/s above the ceiling (%s)", l.Rate(), l.State())
		}
	}
	if l.Estimate() != 25 || probesAtCeiling != 0 {
		t.Fatalf("after 5,000 successes: estimate %v/s (want the probes to have reached the ceiling, 25), %d probes from it", l.Estimate(), probesAtCeiling)
	}
	l.SetCeiling(10)
	if got := l.Rate(); got != 10 {
		t.Fatalf("a lower ceiling: pace %v/s, want 10", got)
	}
}
