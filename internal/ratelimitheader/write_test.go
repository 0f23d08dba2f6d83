package ratelimitheader

import (
	"math/big"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name string
		f    Fields
		want http.Header
	}{
		{"whole-second window", Fields{Policy: "default", Limit: 100, Window: time.Minute, Remaining: 42, Reset: 17 * time.Second},
			http.Header{
				"Ratelimit-Policy":      {`"default";q=100;w=60`},
				"Ratelimit":             {`"default";r=42;t=17`},
				"X-Ratelimit-Limit":     {"100"},
				"X-Ratelimit-Remaining": {"42"},
				"X-Ratelimit-Reset":     {"17"},
			}},
		{"empty policy is default, throttled", Fields{Limit: 10, Window: time.Second, Remaining: 0, Reset: 300 * time.Millisecond, RetryAfter: 300 * time.Millisecond},
			http.Header{
				"Ratelimit-Policy":      {`"default";q=10;w=1`},
				"Ratelimit":             {`"default";r=0;t=1`},
				"X-Ratelimit-Limit":     {"10"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {"1"},
				"Retry-After":           {"1"},
			}},
		{"sub-second window scaled", Fields{Policy: "burst", Limit: 10, Window: 100 * time.Millisecond, Remaining: 3, Reset: 2500 * time.Millisecond},
			http.Header{
				"Ratelimit-Policy":      {`"burst";q=100;w=1`},
				"Ratelimit":             {`"burst";r=3;t=3`},
				"X-Ratelimit-Limit":     {"10"},
				"X-Ratelimit-Remaining": {"3"},
				"X-Ratelimit-Reset":     {"3"},
			}},
		{"non-integer-second window scaled", Fields{Limit: 2, Window: 1500 * time.Millisecond, Remaining: 1, Reset: time.Second},
			http.Header{
				"Ratelimit-Policy":      {`"default";q=4;w=3`},
				"Ratelimit":             {`"default";r=1;t=1`},
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"1"},
				"X-Ratelimit-Reset":     {"1"},
			}},
		{"no window", Fields{Limit: 5, Remaining: 5},
			http.Header{
				"Ratelimit-Policy":      {`"default";q=5`},
				"Ratelimit":             {`"default";r=5;t=0`},
				"X-Ratelimit-Limit":     {"5"},
				"X-Ratelimit-Remaining": {"5"},
				"X-Ratelimit-Reset":     {"0"},
			}},
		{"no limit", Fields{Limit: 0, Window: time.Second, Remaining: 2, Reset: time.Second},
			http.Header{
				"Ratelimit":             {`"default";r=2;t=1`},
				"X-Ratelimit-Remaining": {"2"},
				"X-Ratelimit-Reset":     {"1"},
			}},
		{"out-of-range values clamped", Fields{Limit: -1, Remaining: -7, Reset: -time.Second, RetryAfter: 72 * time.Hour},
			http.Header{
				"Ratelimit":             {`"default";r=0;t=0`},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {"0"},
				"Retry-After":           {"259200"}, // never clamped: see FormatRetryAfter
			}},
		{"counts beyond structured integers clamped", Fields{Limit: 1 << 62, Window: time.Second, Remaining: 1 << 62, Reset: 100 * time.Hour},
			http.Header{
				"Ratelimit-Policy":      {`"default";q=999999999999999;w=1`},
				"Ratelimit":             {`"default";r=999999999999999;t=86400`},
				"X-Ratelimit-Limit":     {"999999999999999"},
				"X-Ratelimit-Remaining": {"999999999999999"},
				"X-Ratelimit-Reset":     {"86400"},
			}},
		{"policy name escaped and sanitized", Fields{Policy: "a \"q\" \\ é\n", Limit: 1, Window: time.Second},
			http.Header{
				"Ratelimit-Policy":      {`"a \"q\" \\ ___";q=1;w=1`},
				"Ratelimit":             {`"a \"q\" \\ ___";r=0;t=0`},
				"X-Ratelimit-Limit":     {"1"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {"0"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			Write(h, tt.f)
			assert.Equal(t, tt.want, h)
		})
	}
}

func TestWriteReplaces(t *testing.T) {
	h := http.Header{
		"Ratelimit":         {`"old";r=1;t=1`, `"older";r=2;t=2`},
		"Retry-After":       {"99"},
		"X-Ratelimit-Reset": {"99"},
		"Content-Type":      {"text/plain"},
	}
	Write(h, Fields{Limit: 1, Window: time.Second, RetryAfter: time.Second})
	assert.Equal(t, []string{`"default";r=0;t=0`}, h["Ratelimit"])
	assert.Equal(t, []string{"1"}, h["Retry-After"])
	assert.Equal(t, []string{"0"}, h["X-Ratelimit-Reset"])
	assert.Equal(t, []string{"text/plain"}, h["Content-Type"])
}

func TestScaleWindow(t *testing.T) {
	tests := []struct {
		name   string
		limit  int64
		window time.Duration
		q, w   int64
	}{
		{"whole seconds kept", 100, time.Minute, 100, 60},
		{"whole seconds not reduced", 60, time.Minute, 60, 60},
		{"10 per 100ms", 10, 100 * time.Millisecond, 100, 1},
		{"1 per 100ms", 1, 100 * time.Millisecond, 10, 1},
		{"2 per 1.5s", 2, 1500 * time.Millisecond, 4, 3},
		{"3 per 1.5s", 3, 1500 * time.Millisecond, 2, 1},
		{"1 per 2.5s", 1, 2500 * time.Millisecond, 2, 5},
		{"7 per 333ms", 7, 333 * time.Millisecond, 7000, 333},
		{"1 per 1ns", 1, 1, 1_000_000_000, 1},
		{"exact pair would need a window above 24h", 1, time.Second + 1, 1, 2},
		{"exact pair would need a quota beyond structured integers", 999_999_999_999_999, 3 * time.Millisecond, 999_999_999_999_999, 1},
		{"long non-whole window", 5, 48*time.Hour + time.Millisecond, 5, 172801},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, w := scaleWindow(tt.limit, tt.window)
			assert.Equal(t, tt.q, q, "q")
			assert.Equal(t, tt.w, w, "w")
		})
	}
}

// TestScaleWindowRate checks the documented rule over many pairs: the advertised rate q/w equals
// limit/window exactly, or (fallback) is not above it; w is a whole number of seconds >= 1.
func TestScaleWindowRate(t *testing.T) {
	limits := []int64{1, 2, 3, 7, 10, 99, 1000, 12345, 1_000_000, maxSFInteger}
	windows := []time.Duration{1, 7, time.Microsecond, 3 * time.Millisecond, 100 * time.Millisecond, 333 * time.Millisecond,
		time.Second, 1500 * time.Millisecond, time.Second + 1, 7 * time.Second, 61*time.Second + 250*time.Millisecond,
		time.Hour + 1, MaxDelay, 30 * 24 * time.Hour, maxWindow - 1}
	for _, limit := range limits {
		for _, window := range windows {
			q, w := scaleWindow(limit, window)
			if !assert.GreaterOrEqual(t, w, int64(1), "limit %d window %v", limit, window) {
				continue
			}
			assert.GreaterOrEqual(t, q, int64(1), "limit %d window %v", limit, window)
			assert.LessOrEqual(t, q, int64(maxSFInteger), "limit %d window %v", limit, window)
			// Compare q/(w s) with limit/window as exact fractions: q*window vs limit*w*1e9.
			lhs := new(big.Int).Mul(big.NewInt(q), big.NewInt(int64(window)))
			rhs := new(big.Int).Mul(big.NewInt(limit), new(big.Int).Mul(big.NewInt(w), big.NewInt(int64(time.Second))))
			cmp := lhs.Cmp(rhs)
			assert.LessOrEqual(t, cmp, 0, "limit %d window %v: q=%d w=%d advertises a higher rate", limit, window, q, w)
			if window%time.Second == 0 {
				assert.Equal(t, limit, q)
				assert.Equal(t, int64(window/time.Second), w)
			}
		}
	}
}

// TestWriteMatchesHTTPSFV checks the hand-written serialisation against httpsfv's general
// serializer, for names that need escaping and numbers at the edges of the Integer range.
func TestWriteMatchesHTTPSFV(t *testing.T) {
	names := []string{"", "default", "per-ip", `quo"te`, `back\slash`, `"\"`, "with space", "x;q=1", "~!#$%&'()*+,-./:<=>?@[]^_`{|}"}
	limits := []int64{0, 1, 7, 1000, maxSFInteger, maxSFInteger + 1}
	windows := []time.Duration{0, time.Millisecond, 1500 * time.Millisecond, time.Second, time.Hour, 1000 * time.Hour}
	marshal := func(name string, params ...any) string {
		p := httpsfv.NewParams()
		for i := 0; i < len(params); i += 2 {
			p.Add(params[i].(string), params[i+1])
		}
		v, err := httpsfv.Marshal(httpsfv.List{httpsfv.Item{Value: name, Params: p}})
		require.NoError(t, err)
		return v
	}
	for _, name := range names {
		for _, limit := range limits {
			for _, window := range windows {
				f := Fields{Policy: name, Limit: limit, Window: window, Remaining: limit / 3, Reset: window / 2, RetryAfter: window}
				h := http.Header{}
				Write(h, f)
				pn := policyName(name)
				if limit > 0 {
					l := min(limit, maxSFInteger)
					want := marshal(pn, "q", l)
					if window > 0 {
						q, w := scaleWindow(l, window)
						want = marshal(pn, "q", q, "w", w)
					}
					assert.Equal(t, []string{want}, h[HeaderRateLimitPolicy], "%q %d %v", name, limit, window)
				} else {
					assert.NotContains(t, h, HeaderRateLimitPolicy)
				}
				r := min(max(f.Remaining, 0), maxSFInteger)
				assert.Equal(t, []string{marshal(pn, "r", r, "t", ceilSeconds(f.Reset))}, h[HeaderRateLimit])
				h.Add(HeaderXRemaining, "appended")
				assert.Equal(t, []string{strconv.FormatInt(ceilSeconds(f.Reset), 10)}, h[HeaderXReset], "appending to one header leaves the others")
			}
		}
	}
}
