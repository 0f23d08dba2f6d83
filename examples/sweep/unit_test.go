package main

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/internal/pipenet"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestClairvoyantPhysical: the clairvoyant's elapsed time is the textbook physical limit where
// one is known (the run starts on a window boundary: seed phases are tested apart), and it never
// draws a 429.
func TestClairvoyantPhysical(t *testing.T) {
	tests := []struct {
		c    cell
		want time.Duration
	}{
		// A bucket of 5 refilling at 5/s: 5 at once, then 295 at 200 ms; the last answer a
		// round trip after it left.
		{cell{Server: algorithm.NameTokenBucket, Limit: limits[1], RTT: 2 * time.Millisecond, Workers: 16, Clients: 1, N: 300},
			295*200*time.Millisecond + 2*time.Millisecond},
		// A fixed window of 50 a second: 6 windows of 50, the last opening 5 s in; its requests
		// leave half a round trip before, and their answers come back half a round trip after.
		{cell{Server: algorithm.NameFixedWindow, Limit: limits[2], RTT: 50 * time.Millisecond, Workers: 64, Clients: 1, N: 300},
			5*time.Second + 25*time.Millisecond}, // the last 50 arrive as the sixth window opens
		// One worker at 200 ms a round trip, far under the limit: 300 round trips.
		{cell{Server: algorithm.NameSlidingLog, Limit: limits[3], RTT: 200 * time.Millisecond, Workers: 1, Clients: 1, N: 300},
			300 * 200 * time.Millisecond},
	}
	for _, tt := range tests {
		var o outcome
		synctest.Test(t, func(t *testing.T) {
			var err error
			if o, err = simulate(tt.c, clientPhysical, pipeNet{pipenet.New()}); err != nil {
				t.Fatal(err)
			}
		})
		if o.elapsed != tt.want || o.denied != 0 || o.lost != 0 {
			t.Errorf("%v: %v, %d 429s, %d lost; want %v, none, none", tt.c, o.elapsed, o.denied, o.lost, tt.want)
		}
	}
}

// TestClairvoyantEveryKind: on every server kind, at every seed's phase, the clairvoyant never
// draws a 429 and is never slower than its rate allows.
func TestClairvoyantEveryKind(t *testing.T) {
	for _, kind := range serverKinds {
		for seed := uint64(1); seed <= 3; seed++ {
			c := cell{Server: kind, Limit: limits[2], RTT: 50 * time.Millisecond, Workers: 16, Clients: 2, Headers: headersNone}
			o := runOnce(t, c, clientPhysical, seed)
			if o.denied != 0 || o.lost != 0 {
				t.Errorf("%v seed %d: %d 429s, %d lost", c, seed, o.denied, o.lost)
			}
			// The changing server runs at half rate for a quarter of the nominal run.
			if least := time.Duration(float64(nominal(c)) * 0.5); o.elapsed < least {
				t.Errorf("%v seed %d: %v, faster than the limit allows (%v)", c, seed, o.elapsed, least)
			}
		}
	}
}

func TestFairness(t *testing.T) {
	tests := []struct {
		admitted     []int64
		lo, hi, jain float64
	}{
		{[]int64{7}, 1, 1, 1},
		{[]int64{10, 10}, 1, 1, 1},
		{[]int64{5, 15}, 0.5, 1.5, 0.8},
		{[]int64{0, 0, 10, 10}, 0, 2, 0.5},
	}
	for _, tt := range tests {
		lo, hi, j := fairness(tt.admitted)
		if math.Abs(lo-tt.lo) > 1e-9 || math.Abs(hi-tt.hi) > 1e-9 || math.Abs(j-tt.jain) > 1e-9 {
			t.Errorf("fairness(%v) = %v, %v, %v; want %v, %v, %v", tt.admitted, lo, hi, j, tt.lo, tt.hi, tt.jain)
		}
	}
}

func TestJudge(t *testing.T) {
	few := func(h string, ratio, share float64) *record {
		return &record{Headers: h, Clients: 1, ElapsedOverPhysical: ratio, ThrottledShare: share, Share: 1, maxShare: 1, Jain: 1}
	}
	inDialect := func(d string, share float64) *record {
		r := few(headersHonest, 1.0, share)
		r.Dialect = d
		return r
	}
	warm := func(w float64) *float64 { return &w }
	tests := []struct {
		name string
		r    *record
		aimd float64
		met  bool
	}{
		{"honest within", few(headersHonest, 1.10, 0.005), -1, true},
		{"honest 429s", few(headersHonest, 1.0, 0.006), -1, false},
		{"none within", few(headersNone, 1.0, 0.03), -1, true},
		{"testserver dialect 429s", inDialect(dialectTestserver, 0.006), -1, false},
		{"github within", inDialect("github", 0.005), -1, true},
		{"github 403s", inDialect("github", 0.006), -1, false},
		{"stripe within", inDialect("stripe", 0.03), -1, true},
		{"stripe 429s", inDialect("stripe", 0.031), -1, false},
		{"none persona within", inDialect("none", 0.03), -1, true},
		{"slow", few(headersNone, 1.11, 0), -1, false},
		{"lost", &record{Headers: headersNone, Clients: 2, ElapsedOverPhysical: 1, Lost: 1, Share: 1, maxShare: 1, Jain: 1}, -1, false},
		{"unfair pair", &record{Headers: headersNone, Clients: 2, ElapsedOverPhysical: 1, Share: 0.79, maxShare: 1.21, Jain: 0.96}, -1, false},
		{"many met", &record{Clients: 10, ElapsedOverPhysical: 1.25, ThrottledShareWarm: warm(0.01), Jain: 0.9}, 0.04, true},
		{"many over AIMD", &record{Clients: 10, ElapsedOverPhysical: 1, ThrottledShareWarm: warm(0.011), Jain: 1}, 0.04, false},
		{"many unfair", &record{Clients: 10, ElapsedOverPhysical: 1, ThrottledShareWarm: warm(0), Jain: 0.89}, 0.04, false},
	}
	for _, tt := range tests {
		tt.r.judge(tt.aimd)
		if tt.r.met() != tt.met {
			t.Errorf("%s: met %v (%s), want %v", tt.name, tt.r.met(), tt.r.verdict(), tt.met)
		}
	}
}

func TestAIMDAndCubicLaws(t *testing.T) {
	a := newAIMD()
	for range 20 {
		a.success(0)
	}
	if a.rate() != initialRate+20 {
		t.Errorf("slow start: %v, want %v", a.rate(), initialRate+20)
	}
	a.throttle(1, true)
	a.throttle(1, false)
	if a.rate() != (initialRate+20)/2 {
		t.Errorf("after one fresh and one stale 429: %v, want %v", a.rate(), (initialRate+20)/2)
	}
	c := newAWSCubic()
	if c.rate() != 0 {
		t.Errorf("cubic before any 429 paces at %v, want unpaced", c.rate())
	}
	for i := range 100 {
		c.success(float64(i) / 100) // 100/s for a second
	}
	c.throttle(1, true)
	if r := c.rate(); r <= 0 || r > 100*awsBeta+1e-9 {
		t.Errorf("cubic after a 429 at ~100/s: %v, want at most %v", r, 100*awsBeta)
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-servers", "fixed-window", "-limits", "5/s,100/min", "-rtts", "1ms", "-workers", "16", "-sharing", "1,10", "-seeds", "2", "-json"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.grid.cells()) != 2*2*3 || !o.json || o.grid.seeds != 2 {
		t.Errorf("got %d cells, json %v, seeds %d", len(o.grid.cells()), o.json, o.grid.seeds)
	}
	for _, bad := range [][]string{{"-servers", "magic"}, {"-limits", "7/s"}, {"-rtts", "0s"}, {"-workers", "0"}, {"-seeds", "0"}, {"-clients", ""}, {"extra"}} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}

// TestRulesFor: each server kind enforces the rule it names, the count-denied server counting
// refusals, and the changing server halving its rate a quarter of the way and restoring it halfway.
func TestRulesFor(t *testing.T) {
	rules, at, err := rulesFor(serverCountDenied, limits[1], 40*time.Second)
	if err != nil || len(rules) != 1 || !rules[0].CountDenied || rules[0].Algorithm != algorithm.NameSlidingWindow || at[0] != 0 {
		t.Errorf("count-denied: %+v %v %v", rules, at, err)
	}
	rules, at, err = rulesFor(serverChanging, limits[1], 40*time.Second)
	if err != nil || len(rules) != 3 || at[1] != 10*time.Second || at[2] != 20*time.Second {
		t.Fatalf("changing: %+v %v %v", rules, at, err)
	}
	if rules[1].Limit != 5 || rules[1].Window != 2*time.Second || rules[2].Limit != 5 || rules[2].Window != time.Second {
		t.Errorf("changing 5/s: %+v, want 5 per 2 s, then 5 per 1 s", rules[1:])
	}
	if h := halved(rules[0]); h.Limit != 5 || h.Burst != 5 {
		t.Errorf("halved: %+v", h)
	}
	if _, _, err := rulesFor("magic", limits[1], time.Second); err == nil {
		t.Error("an unknown server kind is accepted")
	}
}
