package learn_test

import "testing"

// TestAPauseIsNoRateTheServerAdmits: the admitted rate is measured over the last successes since
// the last cut; a server that asks for a pause with its throttle (a proxy's constant "Retry-After:
// 1") puts that pause between the answers that were in flight at the throttle and those after it,
// and eight successes measured across a second's pause said 7/s. Against HAProxy at 100/s, two
// runs of thirteen cut to 6.3/s there and crept back 5 % a probe (a ninth of the limit, for
// minutes). A server that admitted 100/s before the pause and all it was sent after it is paced
// at no less than half of that, however its tests are refuted.
func TestAPauseIsNoRateTheServerAdmits(t *testing.T) {
	l, events, ms := observedLearner(t)
	for i := range 100 { // 100/s admitted for a second
		send(t, l, ms(10*i))
		l.ObserveAttempt(ms(10*i), ms(10*i+1), resp(200), nil)
	}
	// A throttle with a pause of a second, and three answers in flight with it admitted.
	l.ObserveAttempt(ms(999), ms(1000), resp(429, "Retry-After: 1"), nil)
	for i := range 3 {
		l.ObserveAttempt(ms(996+i), ms(1001+i), resp(200), nil)
	}
	// After the pause: five admitted at the search's pace, then a throttle.
	for i := range 5 {
		l.ObserveAttempt(ms(2000+5*i), ms(2001+5*i), resp(200), nil)
	}
	l.ObserveAttempt(ms(2025), ms(2026), resp(429, "Retry-After: 1"), nil)
	// The test that follows is refuted at once, after the next pause: the pace falls back to
	// what the server was seen to admit.
	l.ObserveAttempt(ms(3001), ms(3002), resp(200), nil)
	l.ObserveAttempt(ms(3010), ms(3011), resp(429, "Retry-After: 1"), nil)
	if rate := l.Rate(); rate < 50 {
		t.Errorf("pace %.3g/s after the second throttle, want at least 50/s (100/s were admitted, the pause is not the server's rate); events %q", rate, *events)
	}
}

// TestAPauseEndedByHandIsNoRateEither: a pause ended early (Throttle.Resume) ends there, and no rate
// is measured across the part of it that was held.
func TestAPauseEndedByHandIsNoRateEither(t *testing.T) {
	l, events, ms := observedLearner(t)
	for i := range 100 {
		send(t, l, ms(10*i))
		l.ObserveAttempt(ms(10*i), ms(10*i+1), resp(200), nil)
	}
	l.ObserveAttempt(ms(999), ms(1000), resp(429, "Retry-After: 5"), nil)
	for i := range 3 {
		l.ObserveAttempt(ms(996+i), ms(1001+i), resp(200), nil)
	}
	l.Resume(ms(1500))
	for i := range 5 {
		l.ObserveAttempt(ms(1500+5*i), ms(1501+5*i), resp(200), nil)
	}
	l.ObserveAttempt(ms(1525), ms(1526), resp(429), nil)
	l.ObserveAttempt(ms(1601), ms(1602), resp(200), nil)
	l.ObserveAttempt(ms(1610), ms(1611), resp(429), nil)
	if rate := l.Rate(); rate < 50 {
		t.Errorf("pace %.3g/s after the second throttle, want at least 50/s (100/s were admitted, the held half second is not the server's rate); events %q", rate, *events)
	}
}
