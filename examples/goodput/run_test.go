package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runGoodput runs the command in-process with args and returns its exit status, stdout and stderr.
func runGoodput(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// decodeRows decodes -json output: one object per line, nothing else.
func decodeRows(t *testing.T, out string) []row {
	t.Helper()
	var rows []row
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r row
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&r), "line %q", sc.Text())
		rows = append(rows, r)
	}
	require.NoError(t, sc.Err())
	return rows
}

// The program runs in-process with tiny settings: every client against one algorithm with headers on
// and off. The table has one row per (headers, client) in order, every row's counts agree with
// each other and with the server's, and the steady clients lose nothing.
func TestRunAllClientsBothHeaderModes(t *testing.T) {
	code, out, errOut := runGoodput(t, t.Context(), "-n", "60", "-limit", "400", "-c", "4",
		"-algorithms", "token-bucket", "-headers", "both", "-timeout", "60s", "-json")
	require.Equal(t, exitOK, code, "stderr:\n%s", errOut)
	rows := decodeRows(t, out)
	require.Len(t, rows, 2*len(allClients), "stdout:\n%s", out)

	i := 0
	for _, headers := range []bool{true, false} {
		for _, kind := range allClients {
			r := rows[i]
			i++
			t.Run(headersWord(headers)+"/"+string(kind), func(t *testing.T) {
				assert.Equal(t, "token-bucket", r.Algorithm)
				assert.Equal(t, headers, r.Headers)
				assert.Equal(t, string(kind), r.Client)
				assert.Equal(t, 60, r.Requests)
				assert.Equal(t, 4, r.Workers)
				assert.InDelta(t, 400.0, r.LimitRPS, 1e-9)
				assert.Equal(t, int64(10), r.InitialBurst)
				assert.InDelta(t, 50.0/400, r.PhysicalS, 1e-9, "physical = (N - burst)/R")
				require.NotNil(t, r.Ratio)
				assert.InDelta(t, r.ElapsedS/r.PhysicalS, *r.Ratio, 1e-9)
				assert.False(t, r.TimedOut)
				assert.False(t, r.Interrupted)
				assert.GreaterOrEqual(t, r.Lost, 0)
				assert.LessOrEqual(t, r.Lost, r.Requests)
				// Every attempt reaches the server: the first of each request plus every retry.
				assert.Equal(t, int64(r.Requests)+r.Retries, r.ServerRequests)
				assert.LessOrEqual(t, r.ServerDenied, r.ServerRequests)
				if r.ServerRequests > 0 {
					assert.InDelta(t, float64(r.ServerDenied)/float64(r.ServerRequests), r.DeniedShare, 1e-12)
				}
				switch kind {
				case steadyLearning, steadyTold:
					assert.Zero(t, r.Lost, "steady loses nothing")
					assert.NotEmpty(t, r.Goal)
				case xrate:
					assert.Zero(t, r.Retries, "xrate never retries")
					assert.Equal(t, int(r.ServerDenied), r.Lost, "every 429 is a lost request")
					assert.Empty(t, r.Goal)
				case retryableHTTP:
					assert.Empty(t, r.Goal)
				}
				if kind == steadyLearning {
					require.NotNil(t, r.LearnedRPS, "the learning client reports what it learned")
					assert.Positive(t, *r.LearnedRPS)
				} else {
					assert.Nil(t, r.LearnedRPS)
				}
			})
		}
	}
	// Progress: a start line and a result line per run (and a line every five seconds).
	assert.Equal(t, len(rows), strings.Count(errOut, " requests from 4 workers (timeout 1m0s)\n"), "stderr:\n%s", errOut)
	assert.Len(t, regexp.MustCompile(`(?m)^goodput: \[\d/8\] .*, retries \d+, lost \d+`).FindAllString(errOut, -1), len(rows), "stderr:\n%s", errOut)
}

// The text and Markdown tables have the preamble, a header and one line per row, with as many
// cells as columns.
func TestTableShapes(t *testing.T) {
	args := []string{"-n", "40", "-limit", "400", "-c", "4", "-algorithms", "sliding-log,leaky-bucket",
		"-clients", "steady-told,steady-learning", "-headers", "on", "-timeout", "60s"}
	tests := []struct {
		name  string
		flag  string
		table func(t *testing.T, lines []string) [][]string
	}{
		{"text", "", func(t *testing.T, lines []string) [][]string {
			var out [][]string
			for _, l := range lines {
				out = append(out, strings.Fields(l))
			}
			return out
		}},
		{"markdown", "-markdown", func(t *testing.T, lines []string) [][]string {
			var out [][]string
			for _, l := range lines {
				require.True(t, strings.HasPrefix(l, "| ") && strings.HasSuffix(l, " |"), "line %q", l)
				cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "| "), " |"), " | ")
				out = append(out, cells)
			}
			require.Len(t, out, 6)
			assert.Equal(t, strings.Repeat(" --- |", len(columns)), strings.TrimPrefix(lines[1], "|"))
			return append(out[:1], out[2:]...) // without the separator
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := args
			if tt.flag != "" {
				a = append(a[:len(a):len(a)], tt.flag)
			}
			code, out, errOut := runGoodput(t, t.Context(), a...)
			require.Equal(t, exitOK, code, "stderr:\n%s", errOut)
			assert.Contains(t, out, "physical = (N − initial burst)/R")
			assert.Contains(t, out, "machine: ")
			var table []string
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if strings.HasPrefix(l, "algorithm") || strings.HasPrefix(l, "|") ||
					strings.HasPrefix(l, "sliding-log") || strings.HasPrefix(l, "leaky-bucket") {
					table = append(table, l)
				}
			}
			cells := tt.table(t, table)
			require.Len(t, cells, 5, "header and four rows:\n%s", out)
			if tt.name == "markdown" {
				assert.Equal(t, columns, cells[0])
			}
			want := [][2]string{{"sliding-log", "steady-told"}, {"sliding-log", "steady-learning"},
				{"leaky-bucket", "steady-told"}, {"leaky-bucket", "steady-learning"}}
			for i, w := range want {
				c := cells[i+1]
				if tt.name == "markdown" {
					require.Len(t, c, len(columns), "row %q", table[i+2])
				}
				assert.Equal(t, w[0], c[0])
				assert.Equal(t, "on", c[1])
				assert.Equal(t, w[1], c[2])
			}
		})
	}
}

// A run that cannot finish in its timeout counts its unfinished requests as lost and says so;
// the benchmark goes on with the next run.
func TestTimeoutCountsLost(t *testing.T) {
	code, out, errOut := runGoodput(t, t.Context(), "-n", "30", "-limit", "1", "-burst", "1", "-c", "2",
		"-algorithms", "token-bucket", "-headers", "on", "-clients", "steady-told,xrate", "-timeout", "300ms", "-json")
	require.Equal(t, exitOK, code, "stderr:\n%s", errOut)
	rows := decodeRows(t, out)
	require.Len(t, rows, 2)
	for _, r := range rows {
		assert.True(t, r.TimedOut, "%s", r.Client)
		assert.GreaterOrEqual(t, r.Lost, 28, "%s: at most the burst and one more get through in 300ms at 1/s", r.Client)
		assert.GreaterOrEqual(t, r.ElapsedS, 0.3)
	}
	assert.Contains(t, rows[0].Goal, "missed")
	assert.Contains(t, errOut, "(timed out)")
}

// With -check, a missed goal gives exit status 3 and names the row; without it, 0.
func TestCheck(t *testing.T) {
	args := []string{"-n", "10", "-limit", "1", "-burst", "1", "-c", "1", "-algorithms", "token-bucket",
		"-headers", "on", "-clients", "steady-told", "-timeout", "100ms", "-json"}
	code, _, errOut := runGoodput(t, t.Context(), append(args, "-check")...)
	assert.Equal(t, exitGoalMissed, code, "stderr:\n%s", errOut)
	assert.Contains(t, errOut, "goal missed: token-bucket, headers on, steady-told: missed:")
	code, _, errOut = runGoodput(t, t.Context(), args...)
	assert.Equal(t, exitOK, code, "stderr:\n%s", errOut)
}

// A context that has ended before the first run stops the benchmark with status 1; the table (no
// rows) is still printed.
func TestInterruptedBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	code, out, errOut := runGoodput(t, ctx, "-n", "10", "-algorithms", "token-bucket", "-headers", "on")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errOut, "goodput: interrupted")
	assert.Contains(t, out, "algorithm")
	assert.NotContains(t, out, "token-bucket  on")
}
