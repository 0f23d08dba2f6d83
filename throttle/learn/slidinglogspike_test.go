package learn_test

import (
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/steadyhttp/steady/throttle/learn"
)

// TestLoneSlidingLogSpikeIsNoCounter: a lone client, one worker, on testserver's
// x-ratelimit persona over a sliding log of 10/s (its reset: when its newest entry leaves, a Unix
// time rounded up). One request's trip out takes 100 ms instead of 0.5 ms (a loaded host, a
// retransmit); its entry sits late in the log, and a request a window later at the pace is
// refused at the log's edge, naming the same second as the first answer of that second (0 left).
// It must not be read as a counter (a rule that read a refusal within a window that began with
// little back as a counter's did).
func TestLoneSlidingLogSpikeIsNoCounter(t *testing.T) {
	alg, _ := algorithm.New(algorithm.NameSlidingLog, algorithm.Config{Limit: 10, Window: time.Second})
	srv := &xrlServer{alg: alg}
	start := time.Unix(1_700_000_000, 123_000_000)
	l, events := scriptedRun(t, srv, 40, start, func(i int) time.Duration {
		if i == 11 {
			return 100 * time.Millisecond
		}
		return 500 * time.Microsecond
	}, func(int) time.Duration { return 500 * time.Microsecond })
	if got := l.LearnedLimit(); got.Kind == learn.KindCounter {
		t.Errorf("a lone client on a sliding log learned %+v (events %q)", got, *events)
	}
}
