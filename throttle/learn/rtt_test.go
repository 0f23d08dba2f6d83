package learn

import "testing"

// TestWindowSlackKeepsTheLongestRecentTrip checks the window of sends' slack: the longest recent
// trip's excess over the smallest where it passes the jitter margin (which a rare long trip
// leaves within a few answers), at most a twentieth of the window, and forgotten as the smallest
// round trip is, once minRTTWindow passes without one as long.
func TestWindowSlackKeepsTheLongestRecentTrip(t *testing.T) {
	const ms = int64(1e6)
	const k = 4 // the default JitterMargin
	var r rtt
	now := int64(0)
	for range 50 {
		now += 5 * ms
		r.add(now, 50*ms)
	}
	if got := r.windowSlack(k, 1000*ms); got != r.margin(k) {
		t.Fatalf("even trips: slack %v, want the jitter margin %v", got, r.margin(k))
	}
	now += 5 * ms
	r.add(now, 80*ms) // one trip 30 ms long
	for range 40 {
		now += 5 * ms
		r.add(now, 50*ms)
	}
	if m := r.margin(k); m >= 30*ms {
		t.Fatalf("the margin kept the long trip (%v): the test tests nothing", m)
	}
	if got := r.windowSlack(k, 1000*ms); got != 30*ms {
		t.Errorf("after one trip 30 ms long: slack %v, want 30ms", got)
	}
	if got := r.windowSlack(k, 200*ms); got != max(10*ms, r.margin(k)) {
		t.Errorf("window 200 ms: slack %v, want a twentieth of it", got)
	}
	for now < 12e9 {
		now += 5 * ms
		r.add(now, 50*ms)
	}
	if got := r.windowSlack(k, 1000*ms); got != r.margin(k) {
		t.Errorf("12 s later: slack %v, want the jitter margin %v again", got, r.margin(k))
	}
}
