package ratelimitheader

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// expectedInfo is what Parse must read back from Write(f): f with the documented normalization
// (durations rounded up to whole seconds and clamped, windows scaled, counts clamped).
func expectedInfo(f Fields) Info {
	info := Info{
		Policy:       policyName(f.Policy),
		Remaining:    min(max(f.Remaining, 0), maxSFInteger),
		HasRemaining: true,
		Reset:        time.Duration(ceilSeconds(f.Reset)) * time.Second,
		HasReset:     true,
	}
	if f.Limit > 0 {
		info.Limit = min(f.Limit, maxSFInteger)
		if f.Window > 0 {
			q, w := scaleWindow(info.Limit, f.Window)
			info.Limit = q
			if w <= int64(maxWindow/time.Second) {
				info.Window = time.Duration(w) * time.Second
			}
		}
	}
	if f.RetryAfter > 0 {
		info.RetryAfter = time.Duration(max(ceilSeconds(f.RetryAfter), 1)) * time.Second
		info.HasRetryAfter = true
	}
	return info
}

// randomFields draws Fields over the interesting ranges, edge values included. With whole set, every
// duration is a whole number of seconds (and the window at most maxWindow), so nothing is rounded.
func randomFields(r *rand.Rand, whole bool) Fields {
	pick := func(vals ...int64) int64 { return vals[r.IntN(len(vals))] }
	dur := func(limit time.Duration) time.Duration {
		d := time.Duration(r.Int64N(int64(limit)))
		switch r.IntN(4) {
		case 0:
			d = time.Duration(pick(0, 1, int64(time.Second), int64(MaxDelay), int64(MaxDelay)+1, -1))
		case 1:
			d = d.Truncate(time.Millisecond)
		}
		if whole {
			d = max(d, 0).Truncate(time.Second)
		}
		return d
	}
	names := []string{"", "default", "burst", "daily", "per-key 42", `a "quoted" \ name`, "é", "tab\there"}
	f := Fields{
		Policy:    names[r.IntN(len(names))],
		Limit:     pick(0, 1, 10, r.Int64N(1_000_000), maxSFInteger, 1<<62, -5),
		Window:    dur(maxWindow),
		Remaining: pick(0, 1, r.Int64N(1_000_000), maxSFInteger+1, -1),
		Reset:     dur(2 * MaxDelay),
	}
	if r.IntN(2) == 0 {
		f.RetryAfter = dur(2 * MaxDelay)
	}
	if whole {
		f.Policy = strings.Map(func(c rune) rune {
			if c < 0x20 || c > 0x7e {
				return '_'
			}
			return c
		}, f.Policy)
		if f.Policy == "" {
			f.Policy = "default"
		}
		f.Limit = min(max(f.Limit, 0), maxSFInteger)
		f.Remaining = min(max(f.Remaining, 0), maxSFInteger)
		f.Reset = min(f.Reset, MaxDelay)
		f.RetryAfter = min(f.RetryAfter, MaxDelay)
		if f.RetryAfter > 0 {
			f.RetryAfter = max(f.RetryAfter, time.Second)
		}
		if f.Limit == 0 {
			f.Window = 0
		}
	}
	return f
}

// TestRoundTripExact: Fields that need no normalization come back identically.
func TestRoundTripExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		f := randomFields(r, true)
		h := http.Header{}
		Write(h, f)
		got := Parse(h, refNow)
		want := Info{
			Policy: f.Policy, Limit: f.Limit, Window: f.Window,
			Remaining: f.Remaining, HasRemaining: true, Reset: f.Reset, HasReset: true,
			RetryAfter: f.RetryAfter, HasRetryAfter: f.RetryAfter > 0,
		}
		if !assert.Equal(t, want, got, "fields %+v wrote %v", f, h) {
			return
		}
	}
}

// TestRoundTripNormalized: any Fields come back as documented, and writing what was read back
// reproduces the draft fields byte for byte (the codec is a fixed point after one round).
func TestRoundTripNormalized(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 5000; i++ {
		f := randomFields(r, false)
		h := http.Header{}
		Write(h, f)
		got := Parse(h, refNow)
		if !assert.Equal(t, expectedInfo(f), got, "fields %+v wrote %v", f, h) {
			return
		}

		again := http.Header{}
		Write(again, Fields{Policy: got.Policy, Limit: got.Limit, Window: got.Window,
			Remaining: got.Remaining, Reset: got.Reset, RetryAfter: got.RetryAfter})
		for _, key := range []string{HeaderRateLimit, HeaderXRemaining, HeaderXReset, HeaderRetryAfter} {
			if key == HeaderRetryAfter && f.RetryAfter > MaxDelay {
				continue // written as it is, read back clamped to MaxDelay
			}
			if !assert.Equal(t, h[key], again[key], "%s after a second round of %+v", key, f) {
				return
			}
		}
		if got.Window > 0 {
			assert.Equal(t, h[HeaderRateLimitPolicy], again[HeaderRateLimitPolicy], "policy after a second round of %+v", f)
		}
	}
}
