package learn

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Once the probe's bracket is within ProbeGain, every later admission called start, which stopped
// nothing and returned its reason: an event (an observer call and a debug line) per request for
// the rest of the learner's life. A settled probe is quiet.
func TestASettledProbeIsQuiet(t *testing.T) {
	var events []string
	l, err := New(WithObserver(func(e Event) { events = append(events, e.Detail) }))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "1")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", "1")
	answer := func(at int) {
		if _, err := l.Reserve(ms(at)); err != nil {
			t.Fatal(err)
		}
		l.ObserveAttempt(ms(at), ms(at+1), &http.Response{StatusCode: 200, Header: h.Clone(), Body: io.NopCloser(strings.NewReader(""))}, nil)
	}
	answer(0)
	var d *declaredStrategy
	for _, s := range l.strats {
		if x, ok := s.(*declaredStrategy); ok {
			d = x
		}
	}
	// The state the probe reaches after a refusal that leaves the bracket within ProbeGain
	// (shown 21 ms, refused at 20.5 ms) and a whole wait of admissions since.
	d.oneProbe = quotaOfOneProbe{shown: 21e6, refuted: 20.5e6, tests: []probeTest{{0, 1}}, lastRefusal: 2, since: 400, wait: 400, lastSent: int64(ms(0).Sub(t0))}
	before := len(events)
	for i := 1; i <= 50; i++ {
		answer(1000 + 25*i) // slower than the window shown: no admission shows a shorter one
	}
	var probe int
	for _, e := range events[before:] {
		if strings.Contains(e, "probe:") {
			probe++
		}
	}
	if probe > 1 {
		t.Errorf("50 admissions after the probe settled drew %d probe events (%q ...), want at most 1; tests %v", probe, events[before], d.oneProbe.tests)
	}
}
