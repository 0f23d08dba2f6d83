package learn_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// A short window that begins at the first request after the last one ended and says its end
// truncated to the second (ulule/limiter's memory store: `expiration.Unix()`, no Retry-After)
// ends up to a second after it says. Its resets were taken as said: a lateness of a second is
// taken only on windows of lateSpan seconds or more, and a window of a few seconds was refused at
// every end (67-250 of 400 sends at 2, 3 and 5 s; ulule's 10 per 2 s in real time: 82 of 232
// attempts). Refused at the reset it named, the learner takes each end as a window after the
// answer to the window's first request (endsAfterFirst), which does not drift as the windows
// begin where the requests arrive: once learned, no window is refused. One client sending one
// request at a time, windows of 2, 3 and 5 s, ends truncated and rounded up, any phase of the
// second, round trips of 2 and 100 ms, 400 sends: none refused in the second half of the run,
// and the run within 1.10x of a window per limit's requests admitted.
func TestAShortWindowThatBeginsAtTheFirstRequest(t *testing.T) {
	for _, truncate := range []bool{true, false} {
		for _, w := range []time.Duration{2 * time.Second, 3 * time.Second, 5 * time.Second} {
			for _, frac := range []int{0, 250, 500, 950} {
				for _, rtt := range []time.Duration{2 * time.Millisecond, 100 * time.Millisecond} {
					const limit, sends = 5, 400
					l, _, _ := observedLearner(t)
					srv := &firstRequestWindow{limit: limit, w: w, truncate: truncate}
					at := time.Unix(1_700_000_000, int64(frac)*1_000_000)
					begin := at
					refused, late, admitted := 0, 0, 0
					for sent := 0; sent < sends; sent++ {
						if d := waitFor(t, l, at); d > 0 {
							at = at.Add(d)
							send(t, l, at)
						}
						r := srv.answer(at.Add(rtt / 2))
						if r.StatusCode != http.StatusOK {
							refused++
							if sent >= sends/2 {
								late++
							}
						} else {
							admitted++
						}
						l.ObserveAttempt(at, at.Add(rtt), r, nil)
						at = at.Add(rtt)
					}
					ratio := float64(at.Sub(begin)) / (float64(admitted) / limit * float64(w))
					desc := fmt.Sprintf("%v window, truncated %v, %d ms into the second, rtt %v: %d of %d refused (%d in the second half), %.3fx, learned %+v",
						w, truncate, frac, rtt, refused, sends, late, ratio, l.LearnedLimit())
					// A known miss (docs/learner-measurements.md): ends rounded up, late in the
					// second, behind 100 ms, read a second long after the projection's refutation
					// (its ends are a window and the client's lateness apart).
					knownMiss := !truncate && frac == 950 && rtt == 100*time.Millisecond
					if late > 0 || (!knownMiss && ratio > 1.10) {
						t.Errorf("%s; want no refusal once learned and, but for the known miss, at most 1.10x", desc)
						continue
					}
					t.Log(desc)
				}
			}
		}
	}
}
