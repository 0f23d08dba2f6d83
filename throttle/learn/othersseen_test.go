package learn_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestASlowAnswerIsNoOtherClient: a lone client's three requests are counted in the order
// sent; the first one's handler is slow, so its answer (the highest count) comes last. Observed
// after the other two, it sets lastLeft to a count the server had long passed, and the next
// request's answer shows a fall of 3 where this client sent 1: "another client seen".
func TestASlowAnswerIsNoOtherClient(t *testing.T) {
	const limit = 20
	w := time.Minute
	l, events, _ := observedLearner(t)
	t0 := time.Unix(1_700_000_040, 0).Truncate(w)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	left := limit
	answer := func() *http.Response { left--; return httprateAnswer(http.StatusOK, limit, left, w, t0, false) }

	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(2), answer(), nil) // 19
	send(t, l, ms(3))                             // A
	send(t, l, ms(4))                             // B
	send(t, l, ms(5))                             // C
	a, b, c := answer(), answer(), answer()       // counted in the order sent: 18, 17, 16
	l.ObserveAttempt(ms(4), ms(6), b, nil)
	l.ObserveAttempt(ms(5), ms(7), c, nil)
	l.ObserveAttempt(ms(3), ms(80), a, nil) // A's handler was slow
	send(t, l, ms(81))                      // D
	l.ObserveAttempt(ms(81), ms(83), answer(), nil)
	if e := strings.Join(*events, "\n"); strings.Contains(e, "another client seen") {
		t.Errorf("a lone client's reordered answers read as another client's:\n%s", e)
	}
}

// TestACostlyRequestIsNoOtherClient: a request of cost 3 (ReserveN) against a server that counts its
// cost in the only quota it declares (testserver's Rule.Cost on a requests rule).
func TestACostlyRequestIsNoOtherClient(t *testing.T) {
	const limit = 20
	w := time.Minute
	l, events, _ := observedLearner(t)
	t0 := time.Unix(1_700_000_040, 0).Truncate(w)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(2), httprateAnswer(http.StatusOK, limit, 19, w, t0, false), nil)
	if r, err := l.ReserveN(ms(3), 3); err != nil || r.Delay(ms(3)) != 0 {
		t.Fatal("not due")
	}
	l.ObserveAttempt(ms(3), ms(5), httprateAnswer(http.StatusOK, limit, 16, w, t0, false), nil)
	if e := strings.Join(*events, "\n"); strings.Contains(e, "another client seen") {
		t.Errorf("a lone client's request of cost 3 read as another client's:\n%s", e)
	}
}

// TestRequestsInFlightAreNoOtherClient: the answer that sets the baseline comes back while two of
// the client's requests are still on their way; the server counts them after it, so the next
// request's answer shows a fall of three for one request sent since. They were this client's.
func TestRequestsInFlightAreNoOtherClient(t *testing.T) {
	const limit = 20
	w := time.Minute
	l, events, _ := observedLearner(t)
	t0 := time.Unix(1_700_000_040, 0).Truncate(w)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	left := limit
	answer := func() *http.Response { left--; return httprateAnswer(http.StatusOK, limit, left, w, t0, false) }
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(2), answer(), nil) // 19
	send(t, l, ms(3))                             // A
	send(t, l, ms(3))                             // B
	send(t, l, ms(3))                             // C
	a, b, c := answer(), answer(), answer()       // 18, 17, 16
	l.ObserveAttempt(ms(3), ms(5), a, nil)        // the baseline: B and C still on their way
	send(t, l, ms(6))                             // D, counted after B and C
	d := answer()                                 // 15
	l.ObserveAttempt(ms(6), ms(8), d, nil)
	l.ObserveAttempt(ms(3), ms(9), b, nil)
	l.ObserveAttempt(ms(3), ms(9), c, nil)
	if e := strings.Join(*events, "\n"); strings.Contains(e, "another client seen") {
		t.Errorf("a lone client's requests in flight read as another client's:\n%s", e)
	}
}

// TestOvertakenOnTheWayIsNoOtherClient: after the baseline, the client sends D, E and F; E and F
// overtake D on the way, so D's answer shows a fall of three where one request had left before
// it. Every request sent since the baseline may have been counted before D.
func TestOvertakenOnTheWayIsNoOtherClient(t *testing.T) {
	const limit = 20
	w := time.Minute
	l, events, _ := observedLearner(t)
	t0 := time.Unix(1_700_000_040, 0).Truncate(w)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(2), httprateAnswer(http.StatusOK, limit, 19, w, t0, false), nil)
	send(t, l, ms(3)) // D
	send(t, l, ms(4)) // E
	send(t, l, ms(5)) // F
	// E and F reach the server first (18, 17 left); D is counted last, with 16 left.
	l.ObserveAttempt(ms(3), ms(9), httprateAnswer(http.StatusOK, limit, 16, w, t0, false), nil)
	if e := strings.Join(*events, "\n"); strings.Contains(e, "another client seen") {
		t.Errorf("a lone client's requests that overtook one on the way read as another client's:\n%s", e)
	}
}
