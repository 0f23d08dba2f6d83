package retry_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/steadyhttp/steady/retry"
)

func TestAddJitterOnlyAdds(t *testing.T) {
	tests := []struct {
		d        time.Duration
		f        float64
		min, max time.Duration
	}{
		{2 * time.Second, 0.1, 2 * time.Second, 2200 * time.Millisecond},
		{2 * time.Second, 0, 2 * time.Second, 2 * time.Second},
		{2 * time.Second, 1, 2 * time.Second, 4 * time.Second},
		{2 * time.Second, 5, 2 * time.Second, 4 * time.Second}, // clamped to 1
		{2 * time.Second, -1, 2 * time.Second, 2 * time.Second},
		{2 * time.Second, math.NaN(), 2 * time.Second, 2 * time.Second},
		{0, 0.1, 0, 0},
		{-time.Second, 0.1, 0, 0},
		{1, 0.1, 1, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v/%v", tt.d, tt.f), func(t *testing.T) {
			for range 1000 {
				got := retry.AddJitter(tt.d, tt.f)
				assert.GreaterOrEqual(t, got, tt.min)
				assert.LessOrEqual(t, got, tt.max)
			}
		})
	}
}
