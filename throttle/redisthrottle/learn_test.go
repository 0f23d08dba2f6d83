package redisthrottle

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// us is t in microseconds, as the scripts store it.
func us(t time.Time) string { return strconv.FormatInt(t.UnixMicro(), 10) }

// packMeter encodes a success meter as the scripts keep it (cmsgpack): the current bucket starts
// at now, the meter started ten seconds before, and counts[j] is the count of the bucket j
// buckets before the current one (counts[0] is the current one).
func packMeter(now time.Time, counts []int64) string {
	const nb = 20
	vals := make([]int64, 3+nb)
	vals[0], vals[1], vals[2] = now.UnixMicro(), 1, now.Add(-10*time.Second).UnixMicro()
	for j, c := range counts {
		vals[3+((-j)%nb+nb)%nb] = c // Lua index 1 (Go 0) is current; j back wraps around
	}
	b := []byte{0xdc, 0, byte(len(vals))}
	for _, v := range vals {
		b = append(b, 0xd3)
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	return string(b)
}

// perBucket returns counts with c in each of the buckets 1..n back (the current one empty).
func perBucket(c int64, n int) []int64 {
	out := make([]int64, n+1)
	for j := 1; j <= n; j++ {
		out[j] = c
	}
	return out
}

// setState writes fields of l's state hash.
func setState(t *testing.T, c *redis.Client, l *Limiter, fields map[string]any) {
	t.Helper()
	if err := c.HSet(context.Background(), l.Key(), fields).Err(); err != nil {
		t.Fatal(err)
	}
}

// floatField reads a numeric field of l's state hash.
func floatField(t *testing.T, c *redis.Client, l *Limiter, field string) float64 {
	t.Helper()
	r, err := strconv.ParseFloat(hget(t, c, l, field), 64)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestCutLaw drives the throttle script from hand-set states.
func TestCutLaw(t *testing.T) {
	c := newClient(t, redisURL(t))
	now := epoch
	tests := []struct {
		name    string
		state   map[string]any
		want    float64 // new rate; 0: no cut
		wantM   float64
		wantTat int64 // µs after now, 0: not checked
	}{
		{"measured", map[string]any{"r": 100, "mt": packMeter(now, perBucket(9, 10))}, 90 * 0.98, 100, 0},
		{"too few successes", map[string]any{"r": 100, "mt": packMeter(now, perBucket(0, 10))}, 90, 100, 0},
		{"measured above the rate", map[string]any{"r": 100, "m": 120, "mt": packMeter(now, perBucket(15, 10))}, 90, 120, 0},
		{"measured above the rate, no m", map[string]any{"r": 100, "mt": packMeter(now, perBucket(15, 10))}, 90, 100, 0},
		{"measured far below: at most half", map[string]any{"r": 100, "mt": packMeter(now, perBucket(2, 10))}, 50, 100, 0},
		{"end of slow start: to the measured rate", map[string]any{"r": 100, "s": 1, "mt": packMeter(now, perBucket(2, 10))}, 20 * 0.98, 100, 0},
		{"blackout halves, keeps m", map[string]any{"r": 100, "n": 1, "m": 80, "mt": packMeter(now, perBucket(9, 10))}, 50, 80, 0},
		{"floor", map[string]any{"r": 0.052}, DefaultMinRate, 0.052, 0},
		{"advertised below the floor", map[string]any{"r": 0.02, "h": 0.01}, 0.018, 0.02, 0},
		{"re-spaces booked slots", map[string]any{"r": 100, "t": us(now.Add(100 * time.Millisecond))}, 90, 100, 111112},
		{"request of an older epoch", map[string]any{"r": 100, "cc": 1}, 0, 0, 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustNew(t, c, fmt.Sprintf("cut-%d", i))
			setState(t, c, l, tt.state)
			l.Observe(now, throttled, nil)
			got := floatField(t, c, l, "r")
			if tt.want == 0 {
				if got != 100 || l.Stats().Cuts != 0 {
					t.Errorf("rate %v cuts %d: want no cut", got, l.Stats().Cuts)
				}
				return
			}
			if !near(got, tt.want) {
				t.Errorf("rate %v, want %v", got, tt.want)
			}
			if m := floatField(t, c, l, "m"); !near(m, tt.wantM) {
				t.Errorf("m %v, want %v", m, tt.wantM)
			}
			if s := l.Stats(); s.Cuts != 1 || !near(l.Rate(), tt.want) {
				t.Errorf("stats %+v", s)
			}
			if tt.wantTat > 0 {
				if got, want := hget(t, c, l, "t"), strconv.FormatInt(now.UnixMicro()+tt.wantTat, 10); got != want {
					t.Errorf("slot %s, want %s", got, want)
				}
			}
		})
	}
}

// TestOneCutPerEpoch: throttles for requests booked before a cut, whichever process booked them,
// do not cut again; one booked after it does.
func TestOneCutPerEpoch(t *testing.T) {
	url := redisURL(t)
	a := mustNew(t, newClient(t, url), "epoch")
	b := mustNew(t, newClient(t, url), "epoch")
	now := epoch
	for range 2 {
		a.Reserve(now)
		b.Reserve(now)
	}
	a.Observe(now, throttled, nil) // cuts: 20 -> 18
	a.Observe(now, throttled, nil) // booked before the cut
	b.Observe(now, throttled, nil) // booked before the cut, by the other process
	b.Observe(now, throttled, nil)
	if ca, cb := a.Stats().Cuts, b.Stats().Cuts; ca != 1 || cb != 0 {
		t.Fatalf("cuts %d and %d, want 1 and 0", ca, cb)
	}
	b.Reserve(now) // booked after the cut
	b.Observe(now, throttled, nil)
	if cb := b.Stats().Cuts; cb != 1 {
		t.Errorf("a throttle for a request booked after the cut did not cut")
	}
}

// TestGrowthLaw drives the reserve script's growth from hand-set states.
func TestGrowthLaw(t *testing.T) {
	c := newClient(t, redisURL(t))
	now := epoch
	base := func(extra map[string]any) map[string]any {
		m := map[string]any{"r": 50, "s": 0, "m": 100, "h": 0, "t": us(now)}
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
		wantM     float64
	}{
		{"recovers towards 98% of m", base(nil), 3, 50 + 48*3/(50*0.3), 100},
		{"probes above it", base(map[string]any{"r": 98}), 3, 98 + 100*0.01*3/98, 100},
		{"slow start", base(map[string]any{"s": 1, "m": 0}), 3, 50 * math.Pow(2, 3/(50*0.1)), 0},
		{"slow start at most doubles per call", base(map[string]any{"s": 1, "m": 0, "r": 1}), 3, 2, 0},
		{"no successes", base(nil), 0, 50, 100},
		{"pace not binding", base(map[string]any{"t": us(now.Add(-21 * time.Millisecond))}), 3, 50, 100},
		{"advertised cap", base(map[string]any{"s": 1, "h": 55}), 3, 55, 100},
		{"max bound", base(map[string]any{"r": DefaultMaxRate, "s": 1}), 3, DefaultMaxRate, 100},
		{"end of a blackout bounds m by the peak", base(map[string]any{"n": 2, "m": 300, "mt": packMeter(now, perBucket(20, 10))}), 1, 50 + (196-50)*1/(50*0.3), 200},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustNew(t, c, fmt.Sprintf("growth-%d", i))
			setState(t, c, l, tt.state)
			for range tt.successes {
				l.Observe(now, ok200, nil)
			}
			if _, err := l.Reserve(now); err != nil {
				t.Fatal(err)
			}
			if got := floatField(t, c, l, "r"); !near(got, tt.want) {
				t.Errorf("rate %v, want %v", got, tt.want)
			}
			if got := floatField(t, c, l, "m"); !near(got, tt.wantM) {
				t.Errorf("m %v, want %v", got, tt.wantM)
			}
		})
	}
}

// TestAdvertisedRate: a rate in the RateLimit headers paces every process at once, less one
// request per window and the headroom; lying headers are clamped or ignored.
func TestAdvertisedRate(t *testing.T) {
	url := redisURL(t)
	tests := []struct {
		name   string
		header http.Header
		want   float64
	}{
		{"draft policy", http.Header{"Ratelimit-Policy": {`"default";q=101;w=1`}}, 99},
		{"per minute", http.Header{"Ratelimit-Policy": {`"default";q=601;w=60`}}, 9.9},
		{"enormous", http.Header{"Ratelimit-Policy": {`"default";q=999999999999;w=1`}}, DefaultMaxRate * 0.99},
		{"garbage", http.Header{"Ratelimit-Policy": {`nonsense;;q=`}}, DefaultInitialRate},
		{"negative", http.Header{"X-Ratelimit-Limit": {"-5"}}, DefaultInitialRate},
		{"limit without a window", http.Header{"X-Ratelimit-Limit": {"100"}}, DefaultInitialRate},
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

// TestSlowStartAndForget: a fresh key starts at the initial rate and doubles every 100 ms of full
// use; the learned state expires after WithForget.
func TestSlowStartAndForget(t *testing.T) {
	c := newClient(t, redisURL(t))
	l := mustNew(t, c, "slowstart", WithInitialRate(10), WithForget(time.Minute))
	now := epoch
	if _, err := l.Reserve(now); err != nil {
		t.Fatal(err)
	}
	// at full use, 10/s for 100 ms is one success: 10 * 2^(1/(10*0.1)) = 20
	now = now.Add(100 * time.Millisecond)
	l.Observe(now, ok200, nil)
	if _, err := l.Reserve(now); err != nil {
		t.Fatal(err)
	}
	if got := l.Rate(); !near(got, 20) {
		t.Errorf("rate %v, want 20", got)
	}
	ttl, err := c.PTTL(context.Background(), l.Key()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 59*time.Second || ttl > time.Minute {
		t.Errorf("PTTL %v, want about a minute", ttl)
	}
}

// TestReservationsMove: a learning limiter's waiting reservations move when the shared rate
// changes, and Changed announces it.
func TestReservationsMove(t *testing.T) {
	c := newClient(t, redisURL(t))
	l := mustNew(t, c, "move", WithInitialRate(10))
	now := epoch
	l.Reserve(now)
	r, _ := l.Reserve(now) // due at +100ms at 10/s
	if got := r.Delay(now); got != 100*time.Millisecond {
		t.Fatalf("delay %v, want 100ms", got)
	}
	changed := r.Changed()
	// the server advertises 101 per second: 100/s less one request per window, at 99%: 99/s
	l.Observe(now, &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Ratelimit-Policy": {`"default";q=101;w=1`}}}, nil)
	r2, _ := l.Reserve(now)
	select {
	case <-changed:
	default:
		t.Fatal("Changed did not fire when the rate moved")
	}
	// the schedule was re-spaced from now: the waiting reservation's 100ms becomes 100ms*10/99
	want := time.Duration(math.Ceil(float64(100*time.Millisecond) * 10 / 99))
	if got := r.Delay(now); got != want {
		t.Errorf("moved delay %v, want %v", got, want)
	}
	// the next booking comes after it at the new pace
	if got := r2.Delay(now); got < want || got > want+10102*time.Microsecond {
		t.Errorf("next booking %v, want one interval after %v", got, want)
	}
}
