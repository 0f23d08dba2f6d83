package margin

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMargin(t *testing.T) {
	assert.InDelta(t, 199.0, Rate(200, 0.005), 1e-9)
	assert.InDelta(t, 200.0, Rate(200, 0), 1e-9)

	for _, tt := range []struct {
		b    int64
		m    float64
		want int
	}{
		{10, 0.005, 9}, {10, 0, 10}, {200, 0.005, 199}, {100, 0.01, 99}, {1, 0.005, 1}, {3, 0.5, 1},
		{math.MaxInt64, 0, math.MaxInt32},
	} {
		assert.Equal(t, tt.want, Burst(tt.b, tt.m), "Burst(%d, %v)", tt.b, tt.m)
	}

	assert.Equal(t, 1_005_025_126*time.Nanosecond, Window(time.Second, 0.005))
	assert.Equal(t, time.Minute, Window(time.Minute, 0))
	assert.Equal(t, time.Duration(math.MaxInt64), Window(math.MaxInt64/3*2, 0.5))
}
