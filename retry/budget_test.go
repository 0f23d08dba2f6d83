package retry_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/retry"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func TestNewBudgetValidates(t *testing.T) {
	tests := []struct {
		tokens int
		ratio  float64
		ok     bool
	}{
		{100, 0.1, true},
		{2, 2, true},
		{1, 0.1, false},
		{0, 0.1, false},
		{-5, 0.1, false},
		{100, 0, false},
		{100, -1, false},
		{100, math.NaN(), false},
		{100, math.Inf(1), false},
		{100, 101, false},
		{math.MaxInt32 + 1, 0.1, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%v", tt.tokens, tt.ratio), func(t *testing.T) {
			b, err := retry.NewBudget(tt.tokens, tt.ratio)
			if tt.ok {
				require.NoError(t, err)
				assert.Equal(t, float64(tt.tokens), b.Tokens("any"))
				return
			}
			assert.ErrorIs(t, err, retry.ErrInvalidOption)
			assert.Nil(t, b)
		})
	}
}

// op is one step of a budget scenario: a retry request (want = allowed) or n successes.
type op struct {
	retry     bool
	successes int
	want      bool
	tokens    float64 // tokens after the step
}

func TestBudgetScenarios(t *testing.T) {
	cases := []struct {
		name   string
		tokens int
		ratio  float64
		ops    []op
	}{
		{
			name: "from full, retries while above half", tokens: 6, ratio: 0.5,
			ops: []op{
				{retry: true, want: true, tokens: 5},
				{retry: true, want: true, tokens: 4},
				{retry: true, want: true, tokens: 3},
				{retry: true, want: false, tokens: 3},
				{retry: true, want: false, tokens: 3},
			},
		},
		{
			name: "successes refill, capped at the maximum", tokens: 4, ratio: 0.5,
			ops: []op{
				{retry: true, want: true, tokens: 3},
				{retry: true, want: true, tokens: 2},
				{retry: true, want: false, tokens: 2},
				{successes: 1, tokens: 2.5},
				{retry: true, want: true, tokens: 1.5},
				{retry: true, want: false, tokens: 1.5},
				{successes: 10, tokens: 4},
				{retry: true, want: true, tokens: 3},
			},
		},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			b, err := retry.NewBudget(tt.tokens, tt.ratio)
			require.NoError(t, err)
			now := t0
			for i, o := range tt.ops {
				now = now.Add(time.Second)
				if o.retry {
					assert.Equal(t, o.want, b.AllowRetry("h", now), "step %d", i)
				}
				for range o.successes {
					b.Succeeded("h", now)
				}
				assert.InDelta(t, o.tokens, b.Tokens("h"), 1e-9, "step %d", i)
			}
		})
	}
}

func TestBudgetDefaultsBurstAndRate(t *testing.T) {
	b, err := retry.NewBudget(retry.DefaultBudgetTokens, retry.DefaultBudgetRatio)
	require.NoError(t, err)
	allowed := 0
	for range 1000 {
		if b.AllowRetry("h", t0) {
			allowed++
		}
	}
	assert.Equal(t, 50, allowed, "burst from full")
	// Then 1,000 successes interleaved with retry requests: one retry per 10 successes.
	allowed = 0
	for range 1000 {
		b.Succeeded("h", t0)
		if b.AllowRetry("h", t0) {
			allowed++
		}
	}
	assert.Equal(t, 100, allowed, "steady state: ratio 0.1")
	// Other hosts are not affected.
	assert.Equal(t, 100.0, b.Tokens("other"))
	assert.True(t, b.AllowRetry("other", t0))
}

func TestBudgetEvictsLeastRecentlyUsed(t *testing.T) {
	b, err := retry.NewBudget(4, 1)
	require.NoError(t, err)
	for i := range retry.BudgetMaxKeys {
		require.True(t, b.AllowRetry(fmt.Sprint("h", i), t0.Add(time.Duration(i)*time.Second)))
		require.Equal(t, 3.0, b.Tokens(fmt.Sprint("h", i)))
	}
	// h0 is used again, so h1 is now the least recently used.
	require.True(t, b.AllowRetry("h0", t0.Add(time.Hour*24)))
	require.True(t, b.AllowRetry("new", t0.Add(time.Hour*25)))
	assert.Equal(t, 4.0, b.Tokens("h1"), "evicted: back to full")
	assert.Equal(t, 2.0, b.Tokens("h0"))
	assert.Equal(t, 3.0, b.Tokens("h2"))
	assert.Equal(t, 3.0, b.Tokens("new"))
}
