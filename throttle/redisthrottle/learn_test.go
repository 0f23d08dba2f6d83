package redisthrottle

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	ok200     = &http.Response{StatusCode: http.StatusOK, Header: http.Header{}}
	throttled = &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
)

// us is t in microseconds, as the scripts store it.
func us(t time.Time) string { return strconv.FormatInt(t.UnixMicro(), 10) }

// setState writes fields of l's state hash.
func setState(t *testing.T, c *redis.Client, l *Limiter, fields map[string]any) {
	t.Helper()
	if err := c.HSet(context.Background(), l.Key(), fields).Err(); err != nil {
		t.Fatal(err)
	}
}

// rateOf reads the shared rate from Redis.
func rateOf(t *testing.T, c *redis.Client, l *Limiter) float64 {
	t.Helper()
	r, err := strconv.ParseFloat(hget(t, c, l, "r"), 64)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestCutLaw drives the throttle script from hand-set states: the new rate is the measured rate of
// successes less the headroom, kept within [Cut*rate, 0.98*rate] and above the floor; a throttle
// inside the epoch does not cut; booked slots are re-spaced at the new rate.
func TestCutLaw(t *testing.T) {
	c := newClient(t, redisURL(t))
	now := epoch
	tests := []struct {
		name    string
		state   map[string]any
		want    float64 // new rate; 0: no cut
		wantTat int64   // µs after now, -1: unchanged
	}{
		{"measured", map[string]any{"r": 100, "w": us(now.Add(-500 * time.Millisecond)), "c0": 45, "c1": 90, "m0": us(now.Add(-10 * time.Second))}, 90 * 0.99, -1},
		{"too few successes", map[string]any{"r": 100, "w": us(now.Add(-500 * time.Millisecond)), "c0": 2, "c1": 0, "m0": us(now.Add(-10 * time.Second))}, 70, -1},
		{"measured above the rate", map[string]any{"r": 100, "w": us(now.Add(-time.Millisecond)), "c0": 10, "c1": 120, "m0": us(now.Add(-10 * time.Second))}, 98, -1},
		{"measured far below", map[string]any{"r": 100, "w": us(now.Add(-500 * time.Millisecond)), "c0": 10, "c1": 0, "m0": us(now.Add(-10 * time.Second))}, 70, -1},
		{"young meter", map[string]any{"r": 100, "w": us(now.Add(-500 * time.Millisecond)), "c0": 40, "c1": 0, "m0": us(now.Add(-500 * time.Millisecond))}, 80 * 0.99, -1},
		{"stale meter", map[string]any{"r": 100, "w": us(now.Add(-3 * time.Second)), "c0": 90, "c1": 90, "m0": us(now.Add(-10 * time.Second))}, 70, -1},
		{"previous window only", map[string]any{"r": 100, "w": us(now.Add(-1500 * time.Millisecond)), "c0": 90, "c1": 0, "m0": us(now.Add(-10 * time.Second))}, 70, -1}, // 45 in the last second: below Cut
		{"inside the epoch", map[string]any{"r": 100, "e": us(now.Add(time.Millisecond))}, 0, -1},
		{"floor", map[string]any{"r": 0.06}, DefaultMinRate, -1},
		{"advertised below the floor", map[string]any{"r": 0.02, "h": 0.01}, 0.014, -1},
		{"re-spaces booked slots", map[string]any{"r": 100, "t": us(now.Add(100 * time.Millisecond))}, 70, 142858},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustNew(t, c, fmt.Sprintf("cut-%d", i))
			setState(t, c, l, tt.state)
			l.Observe(now, throttled, nil)
			got := rateOf(t, c, l)
			if tt.want == 0 {
				if got != 100 || l.Stats().Cuts != 0 {
					t.Errorf("rate %v cuts %d: want no cut", got, l.Stats().Cuts)
				}
				return
			}
			if !near(got, tt.want) {
				t.Errorf("rate %v, want %v", got, tt.want)
			}
			if l.Stats().Cuts != 1 || !near(l.Rate(), tt.want) {
				t.Errorf("stats %+v", l.Stats())
			}
			if tt.wantTat >= 0 {
				if got, want := hget(t, c, l, "t"), strconv.FormatInt(now.UnixMicro()+tt.wantTat, 10); got != want {
					t.Errorf("slot %s, want %s", got, want)
				}
			}
			// the epoch runs to the last booked slot plus the grace; a second throttle in it does
			// not cut
			l.Observe(now.Add(DefaultEpochGrace-time.Microsecond), throttled, nil)
			if got2 := rateOf(t, c, l); got2 != got {
				t.Errorf("second throttle in the epoch cut again: %v -> %v", got, got2)
			}
		})
	}
}

// TestProbeLaw drives the reserve script's probing from hand-set states: doubling in slow start,
// growing steps after, only when the pace binds and successes were reported, once per probe
// interval, capped by an advertised rate and the bounds.
func TestProbeLaw(t *testing.T) {
	c := newClient(t, redisURL(t))
	now := epoch
	base := func(extra map[string]any) map[string]any {
		m := map[string]any{"r": 50, "b": 50, "k": 0, "s": 0, "h": 0, "p": us(now.Add(-ProbeInterval)),
			"t": us(now), "w": us(now), "c0": 0, "c1": 0, "m0": us(now)}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name      string
		state     map[string]any
		successes int
		want      float64
	}{
		{"additive", base(nil), 3, 50 + 50*probeStep*(1+1.0/16)},
		{"steps grow", base(map[string]any{"k": 16}), 1, 50 + 50*probeStep*(1+17.0/16)},
		{"slow start doubles", base(map[string]any{"s": 1}), 1, 100},
		{"no successes", base(nil), 0, 50},
		{"pace not binding", base(map[string]any{"t": us(now.Add(-21 * time.Millisecond))}), 1, 50},
		{"too soon", base(map[string]any{"p": us(now.Add(-ProbeInterval + time.Microsecond))}), 1, 50},
		{"advertised cap", base(map[string]any{"h": 50.05}), 5, 50.05},
		{"max bound", base(map[string]any{"r": DefaultMaxRate, "s": 1}), 1, DefaultMaxRate},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustNew(t, c, fmt.Sprintf("probe-%d", i))
			setState(t, c, l, tt.state)
			for range tt.successes {
				l.Observe(now, ok200, nil)
			}
			if _, err := l.Reserve(now); err != nil {
				t.Fatal(err)
			}
			if got := rateOf(t, c, l); !near(got, tt.want) {
				t.Errorf("rate %v, want %v", got, tt.want)
			}
			if got := hget(t, c, l, "c0"); got != strconv.Itoa(tt.successes) {
				t.Errorf("meter %s, want %d", got, tt.successes)
			}
		})
	}
}

// TestAdvertisedRate: a rate in the RateLimit headers paces every process at once, less the
// headroom; lying headers are clamped.
func TestAdvertisedRate(t *testing.T) {
	url := redisURL(t)
	tests := []struct {
		name   string
		header http.Header
		want   float64
	}{
		{"draft policy", http.Header{"Ratelimit-Policy": {`"default";q=100;w=1`}}, 99},
		{"x-ratelimit with window", http.Header{"Ratelimit-Policy": {`"default";q=600;w=60`}}, 9.9},
		{"enormous", http.Header{"Ratelimit-Policy": {`"default";q=999999999999;w=1`}}, DefaultMaxRate * 0.99},
		{"garbage", http.Header{"Ratelimit-Policy": {`nonsense;;q=`}}, DefaultInitialRate},
		{"negative", http.Header{"X-Ratelimit-Limit": {"-5"}}, DefaultInitialRate},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("adv-%d", i)
			a := mustNew(t, newClient(t, url), key)
			b := mustNew(t, newClient(t, url), key)
			a.Observe(epoch, &http.Response{StatusCode: http.StatusOK, Header: tt.header}, nil)
			if _, err := a.Reserve(epoch); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Reserve(epoch.Add(time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if got := b.Rate(); !near(got, tt.want) {
				t.Errorf("other process paces at %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSlowStartAndForget: a fresh key starts at the initial rate, doubles per probe interval while
// the pace binds and requests succeed, and the learned state expires after WithForget.
func TestSlowStartAndForget(t *testing.T) {
	c := newClient(t, redisURL(t))
	l := mustNew(t, c, "slowstart", WithInitialRate(10), WithForget(time.Minute))
	now := epoch
	want := 10.0
	for step := range 4 {
		// book until the pace binds, then report the successes
		for {
			r, _ := l.Reserve(now)
			if r.Delay(now) > 0 {
				break
			}
			l.Observe(now, ok200, nil)
		}
		if got := l.Rate(); !near(got, want) {
			t.Fatalf("step %d: rate %v, want %v", step, got, want)
		}
		now = now.Add(ProbeInterval)
		l.Observe(now, ok200, nil)
		want *= 2
	}
	ttl, err := c.PTTL(context.Background(), l.Key()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 59*time.Second || ttl > time.Minute {
		t.Errorf("PTTL %v, want about a minute", ttl)
	}
}
