package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/retry"
)

func TestCounter(t *testing.T) {
	c := &counter{}
	ctx := withTrack(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", "http://x/", nil)
	require.NoError(t, err)
	c.Attempt(req, 1)
	c.Retry(req, 1, retry.Reason{Status: 429}, time.Second)
	c.Attempt(req.Clone(ctx), 2)
	c.Retry(req, 2, retry.Reason{Err: syscall.ECONNRESET}, time.Second)
	c.Attempt(req.Clone(ctx), 3)
	c.GaveUp(req, 3, retry.Reason{Status: 503}, retry.ErrAttemptsExhausted)
	assert.Equal(t, int64(2), c.retries.Load())
	assert.Equal(t, int64(3), trackOf(ctx).attempts.Load(), "the clones share the track")

	bare, err := http.NewRequest("GET", "http://x/", nil)
	require.NoError(t, err)
	c.Attempt(bare, 1) // no track: nothing to note, no panic
}

func TestTally(t *testing.T) {
	var tl tally
	for i := range maxReasons + 3 {
		tl.add(fmt.Sprintf("reason %d", i), i+1)
	}
	tl.add("reason 0", 10)
	tl.add("ignored", 0)
	list := tl.list()
	require.Len(t, list, maxReasons+1)
	assert.Equal(t, reasonCount{"reason 0", 11}, list[0])
	assert.Equal(t, reasonCount{otherReasons, 6 + 7 + 8}, list[maxReasons])
	total := 0
	for _, r := range list {
		total += r.Count
	}
	assert.Equal(t, tl.count(), total)
}

func TestFailureReason(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	tests := []struct {
		name    string
		ctx     context.Context
		err     error
		timeout time.Duration
		want    string
	}{
		{"run cancelled", cancelled, errors.New("anything"), 0, "cancelled"},
		{"request timeout", live, fmt.Errorf("wrapped: %w", context.DeadlineExceeded), time.Second, "timeout (-timeout 1s)"},
		{"retry error with cause", live, &retry.Error{Err: syscall.ECONNREFUSED, Cause: retry.ErrAttemptsExhausted},
			0, "connection refused (retry: attempts exhausted)"},
		{"plain error", live, errors.New("boom"), 0, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, failureReason(tt.ctx, tt.err, tt.timeout))
		})
	}
}

func TestSummaryPhysicalLimitOfACounter(t *testing.T) {
	// A sliding window counter's initial burst is borrowed from its next window: N/R.
	s := &summary{requests: 1000, succeeded: 1000, elapsed: 10 * time.Second,
		server: &serverReport{algorithm: "sliding-window", limitRPS: 100, allowance: 100, requests: 1000}}
	assert.Equal(t, 10*time.Second, s.physicalLimit())
	assert.Contains(t, strings.Join(s.lines(), "\n"), "elapsed 10.00s = 1.000 x the physical limit 10.00s ((1000-0)/100)")
}

func TestSummaryComparesWithThePhysicalLimit(t *testing.T) {
	s := &summary{requests: 1000, succeeded: 1000, elapsed: 10 * time.Second,
		server: &serverReport{algorithm: "token-bucket", limitRPS: 100, allowance: 10, requests: 1000}}
	assert.Equal(t, 9900*time.Millisecond, s.physicalLimit())
	assert.InDelta(t, 100.0, s.rate(), 1e-9)
	text := strings.Join(s.lines(), "\n")
	assert.Contains(t, text, "100.0 req/s achieved = 100.0% of its limit 100 req/s (token-bucket, burst 10)")
	assert.Contains(t, text, "elapsed 10.00s = 1.010 x the physical limit 9.90s ((1000-10)/100)")
	assert.Contains(t, text, "pace:                not told")

	var b strings.Builder
	require.NoError(t, s.writeJSON(&b))
	assert.Contains(t, b.String(), `"physical_limit_s":9.9`)
	assert.Contains(t, b.String(), `"server_limit_rps":100`)
	assert.NotContains(t, b.String(), "known_rate_rps")
}

func TestServerFlagDefaults(t *testing.T) {
	tests := []struct {
		args          []string
		wantBurst     int64
		wantAllowance int64
	}{
		{nil, 10, 10},
		{[]string{"-server-algorithm", "leaky-bucket"}, 10, 10},
		{[]string{"-server-algorithm", "fixed-window", "-server-limit", "50"}, 0, 50},
		{[]string{"-server-algorithm", "sliding-window", "-server-limit", "50", "-server-burst", "50"}, 50, 50},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cfg, err := parseFlags(tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.wantBurst, cfg.server.burst)
			assert.Equal(t, tt.wantAllowance, cfg.server.initialAllowance())
			assert.Zero(t, cfg.burst, "no known pace, no burst")
		})
	}
}

// TestKnownCounter: -counter's limit shrinks by the margin, rounded down, at least 1; its window
// stays the server's (the client's windows must start where the server's do).
func TestKnownCounter(t *testing.T) {
	tests := []struct {
		args      []string
		want      windowCounter
		wantLimit int
	}{
		{[]string{"-counter", "200/1s"}, windowCounter{200, time.Second}, 199},
		{[]string{"-counter", "200/1s", "-margin", "0"}, windowCounter{200, time.Second}, 200},
		{[]string{"-counter", " 6000 / 1m ", "-margin", "0.01"}, windowCounter{6000, time.Minute}, 5940},
		{[]string{"-counter", "3/1s", "-margin", "0.5"}, windowCounter{3, time.Second}, 1},
		{[]string{"-counter", "1/1h"}, windowCounter{1, time.Hour}, 1},
		{[]string{"-counter", "5/8784h"}, windowCounter{5, 8784 * time.Hour}, 4},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cfg, err := parseFlags(tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.counter)
			assert.Equal(t, tt.wantLimit, cfg.counter.shrunk(cfg.margin))
			assert.False(t, cfg.quota.set())
			assert.Zero(t, cfg.rate)
		})
	}
	cfg, err := parseFlags(nil)
	require.NoError(t, err)
	assert.False(t, cfg.counter.set(), "no -counter, no counter")
}

// TestKnownPace: the margin applies to everything told: the rate, the burst (rounded down, at least
// 1) and a quota's window (stretched).
func TestKnownPace(t *testing.T) {
	tests := []struct {
		args       []string
		wantRate   float64
		wantBurst  int
		wantQuota  quota
		wantWindow time.Duration
	}{
		{[]string{"-rate", "200"}, 199, 1, quota{}, 0},
		{[]string{"-rate", "200", "-burst", "10"}, 199, 9, quota{}, 0},
		{[]string{"-rate", "200", "-burst", "10", "-margin", "0"}, 200, 10, quota{}, 0},
		{[]string{"-rate", "200", "-burst", "1000", "-margin", "0.01"}, 198, 990, quota{}, 0},
		{[]string{"-quota", "200/1s"}, 0, 0, quota{200, time.Second}, 1_005_025_126},
		{[]string{"-quota", "6000/1m", "-margin", "0"}, 0, 0, quota{6000, time.Minute}, time.Minute},
		{[]string{"-quota", " 5000 / 1h "}, 0, 0, quota{5000, time.Hour}, 3_618_090_453_000},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cfg, err := parseFlags(tt.args)
			require.NoError(t, err)
			assert.InDelta(t, tt.wantRate, cfg.pacedRate(), 1e-9)
			if cfg.rate > 0 {
				assert.Equal(t, tt.wantBurst, cfg.pacedBurst())
			}
			assert.Equal(t, tt.wantQuota, cfg.quota)
			if tt.wantQuota.set() {
				assert.InDelta(t, float64(tt.wantWindow), float64(cfg.quota.stretched(cfg.margin)), 1e3)
			}
		})
	}
}
