package learn_test

import (
	"strconv"
	"testing"
)

// TestAShareIsOfTheCountOnce: a client that shares a key spends its share of what the server
// says remains once, not again at every answer. Its own requests the server had not seen when it
// answered are its claims on that count, taken from its share already; the rest of the count is
// what the other clients left, and they spend their shares of it. Taken of the count less its own
// claims, each answer handed out the share of the others' unseen claims again: ten clients
// spending a tenth of every count they were told emptied a fixed window of 50/s within it and
// were refused at every reset (a third of all attempts behind 50 ms).
//
// The client's share is halved first (a throttle with credit left: another client spends the
// quota); then in a new window of 100 it is answered request by request, each answer two fewer
// (the other client takes as much as it does), across round trips of 1 and 50 ms.
func TestAShareIsOfTheCountOnce(t *testing.T) {
	for _, rttMs := range []int{1, 50} {
		l, events, ms := observedLearner(t)
		rtt := rttMs
		policy := `RateLimit-Policy: "w";q=100;w=60`
		say := func(left, reset int) string {
			return `RateLimit: "w";r=` + strconv.Itoa(left) + `;t=` + strconv.Itoa(reset)
		}
		send(t, l, ms(0))
		l.ObserveAttempt(ms(0), ms(rtt), resp(200, policy, say(99, 60)), nil)
		send(t, l, ms(rtt+1))
		l.ObserveAttempt(ms(rtt+1), ms(2*rtt+1), resp(429, policy, say(0, 58)), nil)
		if got := l.LearnedLimit(); got.Quota != 100 {
			t.Fatalf("rtt %d ms: learned %+v, want the declared 100", rtt, got)
		}

		// A new window: the first answer says 98 (the other client took one).
		now := 61_000
		send(t, l, ms(now))
		l.ObserveAttempt(ms(now), ms(now+rtt), resp(200, policy, say(98, 60)), nil)
		sent := 1
		var flight []int // send times of the requests not answered yet, oldest first
		at := now + rtt
		for step := 0; step < 200; step++ {
			// Everything due now goes.
			for {
				r, err := l.Reserve(ms(at))
				if err != nil {
					t.Fatal(err)
				}
				if r.Delay(ms(at)) != 0 {
					r.Cancel(ms(at))
					break
				}
				flight = append(flight, at)
				sent++
			}
			if len(flight) == 0 {
				break
			}
			// The oldest is answered: the server counted all of this client's answered
			// requests, and as many of the other's.
			s := flight[0]
			flight = flight[1:]
			at = max(at+1, s+rtt)
			left := max(100-2*(sent-len(flight)), 0)
			l.ObserveAttempt(ms(s), ms(at), resp(200, policy, say(left, 59)), nil)
		}
		// Half of the window, and the request the reserve may keep back, at most.
		if sent > 51 {
			t.Errorf("rtt %d ms: a client with half the quota sent %d of a window of 100 (events %q)", rtt, sent, *events)
		}
		t.Logf("rtt %d ms: %d sent of a window of 100 with half of it", rtt, sent)
	}
}
