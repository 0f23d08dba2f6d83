package learn_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/throttle/learn"
)

// TestALoneClientIsNoOtherClient: the count that a lone client's answers say falls only by its own
// requests, however they are reordered: none of these may read as another client's spending
// ("another client seen"), which stops the rules that tell a counter (notBackAtWindowEnd). Each case
// is a quota of 20 a minute, answered in httprate's headers; at(n) is n ms into the window, and
// left(n) an answer saying n are left.
func TestALoneClientIsNoOtherClient(t *testing.T) {
	const limit = 20
	w := time.Minute
	t0 := time.Unix(1_700_000_040, 0).Truncate(w)
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	left := func(n int) *http.Response { return httprateAnswer(http.StatusOK, limit, n, w, t0, false) }
	for _, c := range []struct {
		name string
		run  func(t *testing.T, l *learn.Learner)
	}{
		{"a slow answer comes last", func(t *testing.T, l *learn.Learner) {
			// A, B and C are counted in the order sent (18, 17, 16), but A's handler is slow:
			// its answer, the highest count, comes after the others. D then shows a fall of
			// three from it for one request sent since.
			send(t, l, at(3)) // A
			send(t, l, at(4)) // B
			send(t, l, at(5)) // C
			l.ObserveAttempt(at(4), at(6), left(17), nil)
			l.ObserveAttempt(at(5), at(7), left(16), nil)
			l.ObserveAttempt(at(3), at(80), left(18), nil)
			send(t, l, at(81)) // D
			l.ObserveAttempt(at(81), at(83), left(15), nil)
		}},
		{"a request of cost three", func(t *testing.T, l *learn.Learner) {
			// A server that counts a request's cost in the only quota it declares (testserver's
			// Rule.Cost on a requests rule).
			if r, err := l.ReserveN(at(3), 3); err != nil || r.Delay(at(3)) != 0 {
				t.Fatal("a request of cost three with 19 left not due at once")
			}
			l.ObserveAttempt(at(3), at(5), left(16), nil)
		}},
		{"requests in flight at the baseline", func(t *testing.T, l *learn.Learner) {
			// A's answer comes while B and C are on their way; the server counts them after it,
			// and D after them: a fall of three from A's count for one request sent since.
			send(t, l, at(3)) // A
			send(t, l, at(3)) // B
			send(t, l, at(3)) // C
			l.ObserveAttempt(at(3), at(5), left(18), nil)
			send(t, l, at(6)) // D
			l.ObserveAttempt(at(6), at(8), left(15), nil)
			l.ObserveAttempt(at(3), at(9), left(17), nil)
			l.ObserveAttempt(at(3), at(9), left(16), nil)
		}},
		{"a burst answered out of order", func(t *testing.T, l *learn.Learner) {
			// A, B and C leave in one instant (the pacer's burst) and are counted in that order
			// (18, 17, 16 left); their answers come back C, B, A, the last saying 18 with nothing
			// in flight. D then shows a fall of three from it.
			send(t, l, at(3))
			send(t, l, at(3))
			send(t, l, at(3))
			l.ObserveAttempt(at(3), at(5), left(16), nil)
			l.ObserveAttempt(at(3), at(6), left(17), nil)
			l.ObserveAttempt(at(3), at(7), left(18), nil)
			send(t, l, at(8)) // D
			l.ObserveAttempt(at(8), at(10), left(15), nil)
		}},
		{"the newest counted first, answered last", func(t *testing.T, l *learn.Learner) {
			// A, B and C leave a millisecond apart; C reaches the server first (18 left), then A
			// (17) and B (16), and C's handler is slow: the newest send's answer, 18, comes last.
			send(t, l, at(3)) // A
			send(t, l, at(4)) // B
			send(t, l, at(5)) // C
			l.ObserveAttempt(at(3), at(6), left(17), nil)
			l.ObserveAttempt(at(4), at(7), left(16), nil)
			l.ObserveAttempt(at(5), at(10), left(18), nil)
			send(t, l, at(11)) // D
			l.ObserveAttempt(at(11), at(13), left(15), nil)
		}},
		{"overtaken on the way", func(t *testing.T, l *learn.Learner) {
			// D, E and F leave in turn; E and F reach the server first (18, 17 left), and D is
			// counted last, with 16 left: a fall of three where one request had left before D.
			send(t, l, at(3)) // D
			send(t, l, at(4)) // E
			send(t, l, at(5)) // F
			l.ObserveAttempt(at(3), at(9), left(16), nil)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, events, _ := observedLearner(t)
			send(t, l, at(0))
			l.ObserveAttempt(at(0), at(2), left(19), nil)
			c.run(t, l)
			if e := strings.Join(*events, "\n"); strings.Contains(e, "another client seen") {
				t.Errorf("a lone client's own requests read as another client's:\n%s", e)
			}
		})
	}
}
