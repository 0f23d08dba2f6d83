package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlagsErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0"}, "invalid -n 0"},
		{[]string{"-c", "0"}, "invalid -c 0"},
		{[]string{"-c", "100000"}, "invalid -c 100000"},
		{[]string{"-limit", "0"}, "invalid -limit 0"},
		{[]string{"-window", "0s"}, "invalid -window 0s"},
		{[]string{"-window", "-1s"}, "invalid -window -1s"},
		{[]string{"-burst", "0"}, "invalid -burst 0"},
		{[]string{"-margin", "0.6"}, "invalid -margin 0.6"},
		{[]string{"-margin", "NaN"}, "invalid -margin NaN"},
		{[]string{"-timeout", "-1s"}, "invalid -timeout -1s"},
		{[]string{"-json", "-markdown"}, "-json and -markdown exclude each other"},
		{[]string{"-algorithms", "token-bucket,gcra"}, `invalid -algorithms item "gcra"`},
		{[]string{"-algorithms", " , "}, "invalid -algorithms"},
		{[]string{"-clients", "curl"}, `invalid -clients item "curl"`},
		{[]string{"-headers", "maybe"}, `invalid -headers "maybe"`},
		{[]string{"-limit", "1", "-window", "1ns"}, ""}, // 1e9/s is a usable rate
		{[]string{"-n", "x"}, `invalid value "x" for flag -n`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parseFlags(tt.args)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			var ue *usageError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), tt.want)

			var stdout, stderr bytes.Buffer
			assert.Equal(t, exitUsage, run(context.Background(), tt.args, &stdout, &stderr))
			assert.Empty(t, stdout.String())
			assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
		})
	}
}

func TestParseFlagsValues(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, c *config)
	}{
		{"defaults", nil, func(t *testing.T, c *config) {
			assert.Equal(t, 2000, c.n)
			assert.Equal(t, 16, c.workers)
			assert.InDelta(t, 200.0, c.rate(), 1e-9)
			assert.InDelta(t, 0.005, c.margin, 1e-12, "the told clients' margin")
			assert.Equal(t, int64(10), c.burst)
			assert.Equal(t, []string{"token-bucket", "leaky-bucket", "fixed-window", "sliding-log", "sliding-window"}, c.algorithms)
			assert.Equal(t, allClients, c.clients)
			assert.Equal(t, []bool{true, false}, c.headers)
			assert.Equal(t, 150*time.Second, c.timeout, "15 × 2000/200")
		}},
		{"lists keep order, drop repeats and blanks", []string{"-algorithms", "sliding-log, fixed-window,sliding-log,", "-clients", "xrate,steady-told,xrate"},
			func(t *testing.T, c *config) {
				assert.Equal(t, []string{"sliding-log", "fixed-window"}, c.algorithms)
				assert.Equal(t, []clientKind{xrate, steadyTold}, c.clients)
			}},
		{"headers on", []string{"-headers", "on"}, func(t *testing.T, c *config) { assert.Equal(t, []bool{true}, c.headers) }},
		{"headers off", []string{"-headers", "off"}, func(t *testing.T, c *config) { assert.Equal(t, []bool{false}, c.headers) }},
		{"window", []string{"-limit", "600", "-window", "1m"}, func(t *testing.T, c *config) {
			assert.InDelta(t, 10.0, c.rate(), 1e-9)
			assert.Equal(t, 3000*time.Second, c.timeout)
		}},
		{"short run's timeout has a floor", []string{"-n", "10", "-limit", "1000"}, func(t *testing.T, c *config) {
			assert.Equal(t, minTimeout, c.timeout)
		}},
		{"explicit timeout", []string{"-timeout", "2s"}, func(t *testing.T, c *config) { assert.Equal(t, 2*time.Second, c.timeout) }},
		{"margin", []string{"-margin", "0"}, func(t *testing.T, c *config) { assert.Zero(t, c.margin) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseFlags(tt.args)
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, exitOK, run(context.Background(), []string{"-h"}, &stdout, &stderr))
	assert.Empty(t, stdout.String())
	for _, f := range []string{"-n", "-c", "-limit", "-window", "-burst", "-margin", "-algorithms", "-clients", "-headers", "-timeout", "-json", "-markdown"} {
		assert.Regexp(t, `(?m)^  `+f+`( |$)`, stderr.String())
	}
}

func TestPhysicalLimit(t *testing.T) {
	tests := []struct {
		alg     string
		limit   int64
		window  time.Duration
		burst   int64
		n       int
		initial int64
		want    time.Duration
		phase   time.Duration // of the start in its window
	}{
		{"token-bucket", 200, time.Second, 10, 2000, 10, 9950 * time.Millisecond, 0},
		{"leaky-bucket", 200, time.Second, 10, 2000, 10, 9950 * time.Millisecond, 0},
		{"fixed-window", 200, time.Second, 10, 2000, 200, 9 * time.Second, 0},
		{"sliding-log", 200, time.Second, 10, 2000, 200, 9 * time.Second, 0},
		{"sliding-window", 600, time.Minute, 10, 1200, 0, 2 * time.Minute, 0},
		{"sliding-window", 600, time.Minute, 10, 1200, 0, 2*time.Minute - 15*time.Second, 15 * time.Second},
		{"fixed-window", 200, time.Second, 10, 2000, 200, 9 * time.Second, 300 * time.Millisecond},
		{"token-bucket", 200, time.Second, 10, 10, 10, 0, 0},
		{"fixed-window", 200, time.Second, 10, 150, 200, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.alg, func(t *testing.T) {
			s := setup{algorithm: tt.alg, limit: tt.limit, window: tt.window, burst: tt.burst}
			assert.Equal(t, tt.initial, s.initialBurst())
			start := time.Unix(1_700_000_040, 0).Add(tt.phase) // 1_700_000_040 s is a whole number of minutes
			assert.Equal(t, tt.want, s.physicalLimit(tt.n, start))
			assert.NoError(t, s.rule().Validate())
		})
	}
}

func TestGoalVerdict(t *testing.T) {
	ratio := func(f float64) *float64 { return &f }
	tests := []struct {
		name    string
		kind    clientKind
		headers bool
		r       row
		want    string
	}{
		{"learning with headers met", steadyLearning, true, row{Ratio: ratio(1.02), DeniedShare: 0.005}, "met"},
		{"learning with headers slow", steadyLearning, true, row{Ratio: ratio(1.05), DeniedShare: 0}, "missed: 1.050× > 1.03×"},
		{"learning with headers 429s", steadyLearning, true, row{Ratio: ratio(1.0), DeniedShare: 0.006}, "missed: 429s 0.60% > 0.50%"},
		{"learning without headers met", steadyLearning, false, row{Ratio: ratio(1.10), DeniedShare: 0.03}, "met"},
		{"learning without headers all missed", steadyLearning, false, row{Ratio: ratio(1.2), DeniedShare: 0.04, Lost: 2},
			"missed: 1.200× > 1.10×, 429s 4.00% > 3.00%, lost 2"},
		{"told met", steadyTold, true, row{Ratio: ratio(1.01)}, "met"},
		{"told one 429", steadyTold, false, row{Ratio: ratio(1.0), DeniedShare: 0.0005}, "missed: 429s 0.05% > 0.00%"},
		{"no physical limit", steadyTold, true, row{}, "met"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, ok := goalFor(tt.kind, tt.headers)
			require.True(t, ok)
			assert.Equal(t, tt.want, g.verdict(&tt.r))
			tt.r.Goal = g.verdict(&tt.r)
			assert.Equal(t, tt.want != "met", tt.r.missed())
		})
	}
	for _, k := range []clientKind{retryableHTTP, xrate} {
		_, ok := goalFor(k, true)
		assert.False(t, ok, "%s has no goal", k)
	}
}

func TestCPUModel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC  7B13 64-Core Processor\nmodel name\t: other\n", "AMD EPYC 7B13 64-Core Processor"},
		{"processor\t: 0\nFeatures\t: fp asimd\n", ""},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, cpuModel(strings.NewReader(tt.in)))
	}
	assert.Contains(t, machine(), " CPUs")
}

// The progress reporter writes one line per interval with the batch's count, and nothing after
// stop returns.
func TestProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		b := &batch{n: 100}
		b.done.Store(7)
		stop := startProgress(&buf, "p", b, time.Second)
		time.Sleep(2500 * time.Millisecond)
		stop()
		time.Sleep(5 * time.Second)
		assert.Equal(t, "p   7/100 done after 1s\np   7/100 done after 2s\n", buf.String())

		buf.Reset()
		startProgress(&buf, "p", b, 0)()
		assert.Empty(t, buf.String())
	})
}
