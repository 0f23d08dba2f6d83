package redisstore

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// unreachable is a Redis URL nothing listens on (port 1 refuses at once).
const unreachable = "redis://127.0.0.1:1/0"

func TestBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opt  Option
	}{
		{"timeout zero", WithTimeout(0)},
		{"timeout negative", WithTimeout(-time.Second)},
		{"retry interval zero", WithRetryInterval(0)},
		{"unknown policy", WithPolicy(Policy(7))},
		{"unknown rule policy", WithRulePolicy("r", Policy(-1))},
		{"share zero", WithFallbackShare(0)},
		{"share above one", WithFallbackShare(1.5)},
		{"share NaN", WithFallbackShare(math.NaN())},
		{"fallback keys negative", WithFallbackMaxKeys(-1)},
		{"prefix with brace", WithKeyPrefix("app{1}:")},
		{"nil hash tag", WithHashTag(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(unreachable, tt.opt)
			if err == nil {
				s.Close()
				t.Fatal("no error")
			}
			var oe *testserver.OptionError
			if !errors.Is(err, testserver.ErrInvalidOption) || !errors.As(err, &oe) {
				t.Fatalf("error %v (%T) does not match ErrInvalidOption / *OptionError", err, err)
			}
		})
	}
	if _, err := New(nil); !errors.Is(err, testserver.ErrInvalidOption) {
		t.Errorf("New(nil): %v", err)
	}
	_, err := Open("redis://user:s3cret@127.0.0.1:6379/notanumber")
	if !errors.Is(err, testserver.ErrInvalidOption) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Open with a bad URL: %v (must match ErrInvalidOption and not show the password)", err)
	}
}

func TestParsePolicy(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Policy
		ok   bool
	}{
		{"fallback", Fallback, true},
		{"fail-open", FailOpen, true},
		{"Fail-Closed", FailClosed, true},
		{"open", 0, false},
		{"", 0, false},
	} {
		p, err := ParsePolicy(tt.in)
		if (err == nil) != tt.ok || (tt.ok && p != tt.want) {
			t.Errorf("ParsePolicy(%q) = %v, %v", tt.in, p, err)
		}
		if tt.ok && p.String() != strings.ToLower(tt.in) {
			t.Errorf("%v.String() = %q", p, p.String())
		}
		if !tt.ok && !errors.Is(err, testserver.ErrInvalidOption) {
			t.Errorf("ParsePolicy(%q): %v does not match ErrInvalidOption", tt.in, err)
		}
	}
	if s := Policy(9).String(); s != "Policy(9)" {
		t.Errorf("unknown policy prints %q", s)
	}
}

// TestSupports: the bounds of exact arithmetic, at and just beyond each.
func TestSupports(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name   string
		alg    string
		limit  int64
		window time.Duration
		burst  int64
		field  string // "" when supported
	}{
		{"ordinary", algorithm.NameTokenBucket, 100, time.Second, 0, ""},
		{"sub-microsecond window", algorithm.NameFixedWindow, 1, 1500 * time.Nanosecond, 0, "window"},
		{"nanosecond window", algorithm.NameSlidingLog, 1, time.Nanosecond, 0, "window"},
		{"longest window", algorithm.NameFixedWindow, 1, MaxWindow, 0, ""},
		{"window too long", algorithm.NameFixedWindow, 1, MaxWindow + time.Microsecond, 0, "window"},
		{"fixed window limit at bound", algorithm.NameFixedWindow, MaxCount, time.Second, 0, ""},
		{"fixed window limit beyond", algorithm.NameFixedWindow, MaxCount + 1, time.Second, 0, "limit"},
		{"bucket 25000 per day", algorithm.NameTokenBucket, 25_000, day, 0, ""},
		{"bucket 30000 per day", algorithm.NameLeakyBucket, 30_000, day, 0, "burst*window"},
		{"bucket with a small burst", algorithm.NameTokenBucket, 1_000_000, day, 1000, ""},
		{"bucket burst beyond", algorithm.NameTokenBucket, 10, time.Second, MaxProduct/1_000_000 + 1, "burst*window"},
		{"sliding window 25000 per day", algorithm.NameSlidingWindow, 25_000, day, 0, ""},
		{"sliding window 30000 per day", algorithm.NameSlidingWindow, 30_000, day, 0, "limit*window"},
		{"sliding log a million per day", algorithm.NameSlidingLog, 1_000_000, day, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Supports(mustAlg(t, tt.alg, tt.limit, tt.window, tt.burst))
			var ce *CheckError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("unsupported: %v", err)
			case tt.field != "" && (!errors.Is(err, ErrUnsupported) || !errors.As(err, &ce) || ce.Field != tt.field):
				t.Fatalf("error %v, want a *CheckError on %q matching ErrUnsupported", err, tt.field)
			}
		})
	}
	if err := Supports(nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Supports(nil): %v", err)
	}
}

func TestValidateRules(t *testing.T) {
	tests := []struct {
		name  string
		rule  testserver.Rule
		field string // "" when valid
	}{
		{"plain", testserver.Rule{Name: "r", Limit: 10, Window: time.Minute}, ""},
		{"sub-microsecond window", testserver.Rule{Name: "r", Limit: 3, Window: time.Second / 3}, "window"},
		{"soft scaled beyond", testserver.Rule{Name: "r", Algorithm: algorithm.NameSlidingWindow, Limit: 20_000, Window: 24 * time.Hour,
			Mode: testserver.ModeSoft, SoftPercent: 50}, "limit*window"},
		{"elastic ceiling beyond", testserver.Rule{Name: "r", Limit: 20_000, Window: 24 * time.Hour,
			Mode: testserver.ModeElastic, Ceiling: 40_000, Capacity: 10}, "burst*window"},
		{"tier beyond", testserver.Rule{Name: "r", Limit: 10, Window: time.Minute,
			Tiers: map[string]testserver.Tier{"user:1": {Limit: 10, Window: 1500 * time.Nanosecond}}}, "tiers[user:1].window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateRules([]testserver.Rule{tt.rule})
			var ce *CheckError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("invalid: %v", err)
			case tt.field != "" && (!errors.As(err, &ce) || ce.Field != tt.field || ce.Rule != "r"):
				t.Fatalf("error %v, want a *CheckError on rule r field %q", err, tt.field)
			}
		})
	}
	if err := ValidateRules([]testserver.Rule{{Name: "r", Limit: 0, Window: time.Second}}); !errors.Is(err, testserver.ErrInvalidRule) {
		t.Errorf("invalid rule: %v", err)
	}
}

// TestApplyRefuses: checks the store cannot decide are errors before any round trip, and a closed
// store refuses everything.
func TestApplyRefuses(t *testing.T) {
	st, err := Open(unreachable)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustAlg(t, algorithm.NameTokenBucket, 10, time.Second, 0)
	fw := mustAlg(t, algorithm.NameFixedWindow, 10, time.Second, 0)
	ok := testserver.StoreCheck{Rule: "r", Scope: "s", Key: "k", N: 1, Algorithm: tb}
	with := func(f func(*testserver.StoreCheck)) testserver.StoreCheck {
		c := ok
		f(&c)
		return c
	}
	tests := []struct {
		name  string
		check testserver.StoreCheck
		want  error
	}{
		{"n zero", with(func(c *testserver.StoreCheck) { c.N = 0 }), testserver.ErrInvalidCheck},
		{"no algorithm", with(func(c *testserver.StoreCheck) { c.Algorithm = nil }), testserver.ErrInvalidCheck},
		{"n too large", with(func(c *testserver.StoreCheck) { c.N = MaxCount + 1 }), ErrUnsupported},
		{"inexact window", with(func(c *testserver.StoreCheck) {
			c.Algorithm = mustAlg(t, algorithm.NameTokenBucket, 1, time.Second/3, 0)
		}), ErrUnsupported},
		{"publish of another kind", with(func(c *testserver.StoreCheck) { c.Publish = fw }), ErrUnsupported},
		{"count denied", with(func(c *testserver.StoreCheck) { c.Algorithm, c.CountDenied = fw, true }), ErrUnsupported},
	}
	for _, tt := range tests {
		if _, err := st.Apply(context.Background(), time.Now(), []testserver.StoreCheck{ok, tt.check}); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	cc, err := Open(unreachable, WithCallerClock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cc.Apply(context.Background(), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), []testserver.StoreCheck{ok}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("caller time in 2200: %v", err)
	}
	cc.Close()
	if c := st.Counters(); c.Decided+c.RoundTrips+c.Skipped+c.PolicyDecisions() != 0 {
		t.Errorf("refused checks reached Redis or a policy: %+v", c)
	}
	if ds, err := st.Apply(context.Background(), time.Now(), nil); ds != nil || err != nil {
		t.Errorf("no checks: %v, %v", ds, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := st.Apply(context.Background(), time.Now(), []testserver.StoreCheck{ok}); !errors.Is(err, testserver.ErrClosed) {
		t.Errorf("Apply after Close: %v", err)
	}
	if err := st.Ping(context.Background()); !errors.Is(err, testserver.ErrClosed) {
		t.Errorf("Ping after Close: %v", err)
	}
}

// TestDecidesOnOwnClock: by default the script decides at Redis's clock, so the testserver
// middleware must leave its waits as they are (testserver.OwnClockStore); with WithCallerClock it
// decides at the caller's now, and they are aged like the memory store's.
func TestDecidesOnOwnClock(t *testing.T) {
	srv := startRedis(t)
	if s := openStore(t, srv.URL()); !s.DecidesOnOwnClock() {
		t.Error("default: DecidesOnOwnClock = false, want true (Redis's clock)")
	}
	if s := openStore(t, srv.URL(), WithCallerClock()); s.DecidesOnOwnClock() {
		t.Error("WithCallerClock: DecidesOnOwnClock = true, want false")
	}
}
