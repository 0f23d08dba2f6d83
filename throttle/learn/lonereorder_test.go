package learn_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/steadyhttp/steady/throttle/learn"
)

// TestLoneSlidingLogSpikeIsNoCounter: a lone client, one worker, on testserver's
// x-ratelimit persona over a sliding log of 10/s (its reset: when its newest entry leaves, a Unix
// time rounded up). One request's trip out takes 100 ms instead of 0.5 ms (a loaded host, a
// retransmit); its entry sits late in the log, and a request a window later at the pace is
// refused, naming the same second as the first answer of that second (0 left). It must not be read as
// a counter (a refusal within a window that began with little back): the spike explains it.
func TestLoneSlidingLogSpikeIsNoCounter(t *testing.T) {
	alg, _ := algorithm.New(algorithm.NameSlidingLog, algorithm.Config{Limit: 10, Window: time.Second})
	srv := &xrlServer{alg: alg}
	start := time.Unix(1_700_000_000, 123_000_000)
	l, events := scriptedRun(t, srv, 40, start, func(i int) time.Duration {
		if i == 11 {
			return 100 * time.Millisecond
		}
		return 500 * time.Microsecond
	}, func(int) time.Duration { return 500 * time.Microsecond })
	if got := l.LearnedLimit(); got.Kind == learn.KindCounter {
		t.Errorf("a lone client on a sliding log learned %+v (events %q)", got, *events)
	}
}

// TestBurstAnsweredOutOfOrderIsNoOtherClient: three requests leave in one instant (the
// pacer's burst, as every synctest sim sends them); the server counts them A, B, C (18, 17, 16
// left) and their answers come back C, B, A. Each has the newest send time, so each in turn
// becomes the baseline, the last A's 18 with nothing in flight: the next request's 15 is a fall of
// 3 for 1 sent.
func TestBurstAnsweredOutOfOrderIsNoOtherClient(t *testing.T) {
	const limit = 20
	w := time.Minute
	l, events, _ := observedLearner(t)
	t0 := time.Unix(1_700_000_040, 0).Truncate(w)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(2), httprateAnswer(http.StatusOK, limit, 19, w, t0, false), nil)
	send(t, l, ms(3))                                                                           // A
	send(t, l, ms(3))                                                                           // B
	send(t, l, ms(3))                                                                           // C
	l.ObserveAttempt(ms(3), ms(5), httprateAnswer(http.StatusOK, limit, 16, w, t0, false), nil) // C
	l.ObserveAttempt(ms(3), ms(6), httprateAnswer(http.StatusOK, limit, 17, w, t0, false), nil) // B
	l.ObserveAttempt(ms(3), ms(7), httprateAnswer(http.StatusOK, limit, 18, w, t0, false), nil) // A
	send(t, l, ms(8))                                                                           // D
	l.ObserveAttempt(ms(8), ms(10), httprateAnswer(http.StatusOK, limit, 15, w, t0, false), nil)
	if e := strings.Join(*events, "\n"); strings.Contains(e, "another client seen") {
		t.Errorf("a lone client's burst, answered out of order, read as another client's:\n%s", e)
	}
}

// TestNewestCountedFirstIsNoOtherClient: the same in real time, send times distinct: A, B, C
// leave a microsecond apart; C reaches the server first (18 left), then A (17), B (16); C's handler
// is slow, so its answer comes last. C is the newest send, so its 18 becomes the baseline with
// nothing in flight.
func TestNewestCountedFirstIsNoOtherClient(t *testing.T) {
	const limit = 20
	w := time.Minute
	l, events, _ := observedLearner(t)
	t0 := time.Unix(1_700_000_040, 0).Truncate(w)
	us := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Microsecond) }
	send(t, l, us(0))
	l.ObserveAttempt(us(0), us(2000), httprateAnswer(http.StatusOK, limit, 19, w, t0, false), nil)
	send(t, l, us(3000))                                                                              // A
	send(t, l, us(3001))                                                                              // B
	send(t, l, us(3002))                                                                              // C
	l.ObserveAttempt(us(3000), us(5000), httprateAnswer(http.StatusOK, limit, 17, w, t0, false), nil) // A
	l.ObserveAttempt(us(3001), us(6000), httprateAnswer(http.StatusOK, limit, 16, w, t0, false), nil) // B
	l.ObserveAttempt(us(3002), us(9000), httprateAnswer(http.StatusOK, limit, 18, w, t0, false), nil) // C, slow
	send(t, l, us(10000))                                                                             // D
	l.ObserveAttempt(us(10000), us(12000), httprateAnswer(http.StatusOK, limit, 15, w, t0, false), nil)
	if e := strings.Join(*events, "\n"); strings.Contains(e, "another client seen") {
		t.Errorf("a lone client whose newest request was counted first and answered last read as another client:\n%s", e)
	}
}
