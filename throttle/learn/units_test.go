package learn

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// The units quota is read from the vendors' headers (OpenAI's tokens in its documentation's table,
// GitHub's GraphQL points), and a spent one holds until its reset only when it comes back whole or
// the request was refused for it: a continuously refilled quota spent by an admitted request is
// paced by the units lane instead.
func TestSignalUnits(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	read := func(status int, h http.Header) Signal {
		return readSignal(0, 0, now, &http.Response{StatusCode: status, Header: h, Body: http.NoBody}, nil, []int{429}, nil)
	}
	s := read(200, header("x-ratelimit-limit-requests", "60", "x-ratelimit-limit-tokens", "150000", "x-ratelimit-remaining-requests", "59",
		"x-ratelimit-remaining-tokens", "149984", "x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s"))
	assert.Equal(t, int64(150000), s.UnitLimit)
	assert.Equal(t, int64(time.Minute), s.UnitWindow)
	assert.True(t, s.HasUnitRemaining)
	assert.Equal(t, int64(149984), s.UnitRemaining)
	assert.True(t, s.UnitContinuous)
	assert.Equal(t, int64(60), s.Limit, "the requests quota is read as before")

	spent := header("x-ratelimit-limit-tokens", "150000", "x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "20s")
	assert.False(t, read(200, spent).HasRetry, "an admitted request spent a refilling quota: paced, not held")
	s = read(429, spent)
	assert.True(t, s.HasRetry, "refused for tokens: held until they are back")
	assert.Equal(t, int64(20*time.Second), s.RetryAfter)

	s = read(200, header("x-ratelimit-limit", "5000", "x-ratelimit-remaining", "0", "x-ratelimit-reset", "1800000600",
		"x-ratelimit-resource", "graphql"))
	assert.Equal(t, int64(5000), s.UnitLimit, "GraphQL points")
	assert.True(t, s.HasRetry, "spent points come back whole at the reset")
	assert.Equal(t, int64(10*time.Minute), s.RetryAfter)
}

// The learner paces weighted requests by the declared units quota: after the credit the server
// said remains, each request waits for its own cost at the declared rate.
func TestLearnerPacesUnits(t *testing.T) {
	l, err := New()
	assert.NoError(t, err)
	t0 := time.Unix(0, 0)
	r, _ := l.ReserveN(t0, 100)
	assert.Zero(t, r.Delay(t0))
	// 6000 tokens a minute (10 ms a token), 1000 remaining after the first request.
	l.ObserveAttempt(t0, t0.Add(time.Millisecond), &http.Response{StatusCode: 200, Body: http.NoBody, Header: header(
		"x-ratelimit-limit-requests", "1000", "x-ratelimit-remaining-requests", "999", "x-ratelimit-reset-requests", "60ms",
		"x-ratelimit-limit-tokens", "6000", "x-ratelimit-remaining-tokens", "1000", "x-ratelimit-reset-tokens", "1s")}, nil)
	now := t0.Add(time.Millisecond)
	// The credit is the 1000 remaining less the units the server may not have counted (the
	// answered request's own 100 among them, on the safe side) and the jitter reserve.
	r1, _ := l.ReserveN(now, 700)
	assert.Zero(t, r1.Delay(now), "within the credit: at once")
	r2, _ := l.ReserveN(now, 300) // does not fit what is left: waits for its 300 tokens
	d := r2.Delay(now)
	perToken := time.Duration(float64(10*time.Millisecond) / (1 - DefaultTuning().Headroom))
	assert.InDelta(t, float64(300*perToken), float64(d), float64(time.Millisecond), "waits %v", d)
	r2.Cancel(now)
}
