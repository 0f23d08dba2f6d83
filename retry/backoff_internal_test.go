package retry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestScheduleIsExponentialAndCapped(t *testing.T) {
	tests := []struct {
		name      string
		base, max time.Duration
		want      []time.Duration
	}{
		{"defaults", DefaultBaseDelay, DefaultMaxDelay, []time.Duration{
			200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
			1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond,
			12800 * time.Millisecond, 25600 * time.Millisecond, 30 * time.Second, 30 * time.Second,
		}},
		{"cap equals base", time.Second, time.Second, []time.Duration{time.Second, time.Second, time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(tt.base, tt.max)
			for i, want := range tt.want {
				assert.Equal(t, want, s.NextBackOff(), "interval %d", i)
			}
		})
	}
}

func TestFullJitterStaysInInterval(t *testing.T) {
	for _, interval := range []time.Duration{0, 1, 2, time.Millisecond, time.Second} {
		seen := map[bool]int{}
		for range 2000 {
			d := fullJitter(interval)
			assert.GreaterOrEqual(t, d, time.Duration(0))
			assert.LessOrEqual(t, d, interval)
			seen[d > interval/2]++
		}
		if interval >= time.Millisecond { // both halves are drawn: it is jitter, not a constant
			assert.Positive(t, seen[true])
			assert.Positive(t, seen[false])
		}
	}
	assert.Equal(t, time.Duration(0), fullJitter(-time.Second))
}
