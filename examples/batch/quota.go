package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/steadyhttp/steady/internal/margin"
)

// quota is a known quota per window (-quota L/W): at most limit requests in any window, usable
// at any time within it.
type quota struct {
	limit  int
	window time.Duration
}

// maxQuotaWindow bounds the window of -quota and -counter, as throttle.NewWindowQuota and
// throttle.NewWindowCounter do.
const maxQuotaWindow = 366 * 24 * time.Hour

// parseQuota parses -quota's value, "L/W" with L a whole number of requests and W a Go duration
// ("200/1s", "6000/1m", "5000/1h"); "" is no quota.
func parseQuota(s string) (quota, error) {
	n, d, err := parseLimitWindow("quota", s)
	return quota{limit: n, window: d}, err
}

// parseLimitWindow parses the value s of -name, "L/W" with L a whole number of requests (at least
// 1) and W a Go duration (positive, at most maxQuotaWindow); "" gives zeros. Errors are
// *usageError naming the flag and the value.
func parseLimitWindow(name, s string) (int, time.Duration, error) {
	if s == "" {
		return 0, 0, nil
	}
	l, w, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, usagef("invalid -%s %q: want LIMIT/WINDOW, such as 200/1s or 6000/1m", name, s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(l))
	if err != nil || n < 1 {
		return 0, 0, usagef("invalid -%s %q: the limit must be a whole number of requests, at least 1", name, s)
	}
	d, err := time.ParseDuration(strings.TrimSpace(w))
	if err != nil || d <= 0 || d > maxQuotaWindow {
		return 0, 0, usagef("invalid -%s %q: the window must be a Go duration (1s, 1m, 1h), positive and at most %v", name, s, maxQuotaWindow)
	}
	return n, d, nil
}

// set reports whether a quota was given.
func (q quota) set() bool { return q.limit > 0 }

// stretched is the window the client keeps with margin m: W/(1-m), so that at most L requests go
// in any window that much longer than the server's (room for network jitter). parseFlags refuses
// a quota whose stretched window exceeds maxQuotaWindow.
func (q quota) stretched(m float64) time.Duration { return margin.Window(q.window, m) }

// String formats the quota as -quota takes it.
func (q quota) String() string { return fmt.Sprintf("%d/%v", q.limit, q.window) }
