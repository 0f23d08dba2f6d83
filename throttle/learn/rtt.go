package learn

// rtt estimates the round trip from the attempts' send and answer times: the smallest one lately
// (the path without queueing, as BBR's min_rtt), and a smoothed mean and mean deviation (as TCP's
// SRTT and RTTVAR, RFC 6298, gains 1/8 and 1/4). It is a plain value, guarded by the learner.
type rtt struct {
	srtt, rttvar int64
	// late is the smoothed lateness of the sender: how long after their reservations' times the
	// waiters woke (gain 1/4, as RTTVAR). Sends that leave late bunch at the server as much as
	// trips that vary, so it widens the jitter margin as the round trip's deviation does.
	late  int64
	min   int64
	minAt int64
	// spread is the largest queueing a round trip showed lately: its excess over min when it was
	// measured, kept minRTTWindow from spreadAt, its last refresh, and then replaced by the
	// newest excess (as min is). A bound on how much two requests' trips differ that a rare long
	// trip sets, where the smoothed deviation forgets it within a few answers.
	spread   int64
	spreadAt int64
	seen     bool
}

// minRTTWindow is how long a smallest round trip is believed before a newer, larger one replaces
// it: ten seconds, as BBR keeps its min_rtt, long enough to span a queue's build-up and drain.
const minRTTWindow = int64(10e9)

// add records one round trip d measured at t.
func (r *rtt) add(t, d int64) {
	d = max(d, 0)
	if !r.seen {
		r.srtt, r.rttvar, r.min, r.minAt, r.seen = d, d/2, d, t, true
		return
	}
	dev := r.srtt - d
	if dev < 0 {
		dev = -dev
	}
	r.rttvar += (dev - r.rttvar) / 4
	r.srtt += (d - r.srtt) / 8
	if d <= r.min || t-r.minAt > minRTTWindow {
		r.min, r.minAt = d, t
	}
	if q := d - r.min; q >= r.spread || t-r.spreadAt > minRTTWindow {
		r.spread, r.spreadAt = q, t
	}
}

// addLate records one waiter that woke d after its reservation's time.
func (r *rtt) addLate(d int64) { r.late += (max(d, 0) - r.late) / 4 }

// margin is how late to aim after a server-side instant so that a request arrives after it: the
// jitter margin times the round trip's mean deviation plus the sender's mean lateness.
func (r *rtt) margin(k float64) int64 { return int64(k * float64(r.rttvar+r.late)) }

// windowSlack is how much longer than its window w a window of sends is kept (see plan): the
// jitter margin, or the largest queueing seen lately if that is more, up to a twentieth of w. A
// request whose trip is shorter by more than the slack than that of the request a window before
// it reaches a sliding log inside the window and is refused, and the refusal costs its
// Retry-After, a whole window's sends at a window of a second; the slack costs its length once
// per window, wherever the lane applies (a bucket or a window read as refilling too). A rare long
// trip (a loaded host's) is what the smoothed deviation forgets, so the largest one is kept, up to
// half the 1.10x goal's tenth of the window: the other half is the start's and the trips' (with a
// tenth, trips 80 ms long took a fixed window of a second from 1.04x to 1.10x).
func (r *rtt) windowSlack(k float64, w int64) int64 { return max(r.margin(k), min(r.spread, w/20)) }

// oneWay is half the smallest round trip: how long a request takes to reach the server.
func (r *rtt) oneWay() int64 { return r.min / 2 }
