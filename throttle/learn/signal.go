package learn

import (
	"net/http"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// Signal is one attempt's outcome as the learner reads it: when it left and came back, whether the
// server throttled it, and what the server declared about its quota. Times are on the learner's
// integer clock (nanoseconds); zero and false fields mean "not said". A Signal is a plain value.
type Signal struct {
	Sent, Answered int64 // when the attempt left, and when its outcome came back
	Failed         bool  // no response: a transport error teaches nothing about the quota
	Throttled      bool  // a throttle status (429 by default)

	Limit        int64 // declared quota per Window (0: not said)
	Window       int64 // declared window in nanoseconds (0: not said)
	Remaining    int64 // quota left when the server answered (valid when HasRemaining)
	HasRemaining bool
	Reset        int64 // time from the answer until the quota is restored (valid when HasReset)
	HasReset     bool
	RetryAfter   int64 // the server asked for this much quiet (valid when HasRetryAfter)
	HasRetry     bool
}

// headers reports whether the signal carries any declared quota field.
func (s *Signal) headers() bool { return s.Limit > 0 || s.HasRemaining }

// readSignal turns one attempt into a Signal. now is the answer's wall time, used to resolve
// absolute resets and Retry-After dates.
func readSignal(sent, answered int64, now time.Time, resp *http.Response, err error, statuses []int) Signal {
	s := Signal{Sent: sent, Answered: answered}
	if err != nil || resp == nil {
		s.Failed = true
		return s
	}
	for _, st := range statuses {
		if resp.StatusCode == st {
			s.Throttled = true
		}
	}
	info := ratelimitheader.Parse(resp.Header, now)
	s.Limit, s.Window = info.Limit, int64(info.Window)
	s.Remaining, s.HasRemaining = max(info.Remaining, 0), info.HasRemaining
	s.Reset, s.HasReset = int64(info.Reset), info.HasReset
	s.RetryAfter, s.HasRetry = int64(info.RetryAfter), info.HasRetryAfter
	return s
}
