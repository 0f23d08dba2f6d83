package redisthrottle

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestNewErrors: bad input gets a matchable error, never a panic, and no Redis call.
func TestNewErrors(t *testing.T) {
	good := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer good.Close()
	noCtx := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer noCtx.Close()
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cluster.Close()
	tests := []struct {
		name   string
		client redis.UniversalClient
		key    string
		opts   []Option
		want   error
	}{
		{"ok", good, "k", nil, nil},
		{"ok known", good, "k", []Option{WithRate(100, 5)}, nil},
		{"nil client", nil, "k", nil, ErrNilClient},
		{"typed nil client", (*redis.Client)(nil), "k", nil, ErrNilClient},
		{"typed nil cluster client", (*redis.ClusterClient)(nil), "k", nil, ErrNilClient},
		{"empty key", good, "", nil, ErrInvalidKey},
		{"no context timeouts", noCtx, "k", nil, ErrContextTimeoutDisabled},
		{"cluster without context timeouts", cluster, "k", nil, ErrContextTimeoutDisabled},
		{"nil option", good, "k", []Option{nil}, ErrInvalidOption},
		{"zero rate", good, "k", []Option{WithRate(0, 1)}, ErrInvalidOption},
		{"NaN rate", good, "k", []Option{WithRate(math.NaN(), 1)}, ErrInvalidOption},
		{"Inf rate", good, "k", []Option{WithRate(math.Inf(1), 1)}, ErrInvalidOption},
		{"rate above a µs", good, "k", []Option{WithRate(2e6, 1)}, ErrInvalidOption},
		{"burst 0", good, "k", []Option{WithRate(10, 0)}, ErrInvalidOption},
		{"span too long", good, "k", []Option{WithRate(MinRate, 2000)}, ErrInvalidOption},
		{"timeout 0", good, "k", []Option{WithTimeout(0)}, ErrInvalidOption},
		{"recheck negative", good, "k", []Option{WithRecheck(-time.Second)}, ErrInvalidOption},
		{"share 0", good, "k", []Option{WithFallbackShare(0)}, ErrInvalidOption},
		{"share above 1", good, "k", []Option{WithFallbackShare(1.5)}, ErrInvalidOption},
		{"initial NaN", good, "k", []Option{WithInitialRate(math.NaN())}, ErrInvalidOption},
		{"initial outside bounds", good, "k", []Option{WithInitialRate(5), WithRateBounds(10, 100)}, ErrInvalidOption},
		{"bounds reversed", good, "k", []Option{WithRateBounds(10, 1)}, ErrInvalidOption},
		{"headroom", good, "k", []Option{WithHeadroom(0.6)}, ErrInvalidOption},
		{"no statuses", good, "k", []Option{WithThrottleStatuses()}, ErrInvalidOption},
		{"bad status", good, "k", []Option{WithThrottleStatuses(429, 99)}, ErrInvalidOption},
		{"forget below 1ms", good, "k", []Option{WithForget(time.Microsecond)}, ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New(tt.client, tt.key, tt.opts...)
			if !errors.Is(err, tt.want) || (err == nil) != (l != nil) {
				t.Fatalf("New: %v, %v; want error %v", l, err, tt.want)
			}
			f := Factory(tt.client, "p:", tt.opts...)
			fl, ferr := f("host")
			if tt.key != "" && !errors.Is(ferr, tt.want) || (ferr == nil) != (fl != nil) {
				t.Errorf("Factory: %v, %v; want error %v", fl, ferr, tt.want)
			}
		})
	}
}

// TestFactory: one limiter per key, named prefix+key; an empty key is refused.
func TestFactory(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer c.Close()
	f := Factory(c, "steady:", WithRate(10, 1))
	l, err := f("api.example.com:443")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.(*Limiter).Key(); got != "{steady:api.example.com:443}" {
		t.Errorf("key %q", got)
	}
	if _, err := f(""); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("empty key: %v", err)
	}
}

// TestClientOptions: the URL's settings are kept and context deadlines switched on.
func TestClientOptions(t *testing.T) {
	o, err := ClientOptions("redis://127.0.0.1:6390/3")
	if err != nil {
		t.Fatal(err)
	}
	if o.Addr != "127.0.0.1:6390" || o.DB != 3 || !o.ContextTimeoutEnabled || o.DialerRetries != 1 || o.MaxRetries != 1 {
		t.Errorf("options %+v", o)
	}
	if _, err := ClientOptions("http://nope"); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("bad URL: %v", err)
	}
}

// TestRefusedRedisSaysSo: a Redis that refuses connections is reported as such, at once, not as
// a deadline after go-redis dialled again and again.
func TestRefusedRedisSaysSo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now: dials are refused
	c := newClient(t, "redis://"+addr+"/0")
	// go-redis's default dials five times, 100 ms apart: 400 ms, past this timeout. One dial of a
	// loopback port that refuses takes well under it.
	l, err := New(c, "refused", WithTimeout(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	l.Reserve(time.Now())
	s := l.Stats()
	if s.Fallback != 1 || s.LastError == nil || errors.Is(s.LastError, context.DeadlineExceeded) || !strings.Contains(s.LastError.Error(), "refused") {
		t.Fatalf("stats %+v: want a fallback reservation and the refused dial as the error", s)
	}
}

// TestObserveIgnores: transport errors and nil responses teach nothing and make no call.
func TestObserveIgnores(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer c.Close()
	l, err := New(c, "k", WithThrottleStatuses(503))
	if err != nil {
		t.Fatal(err)
	}
	l.Observe(time.Now(), nil, errors.New("reset"))
	l.Observe(time.Now(), nil, nil)
	l.Observe(time.Now(), throttled, nil) // 429 is not a throttle status here: a success
	if s := l.Stats(); s.Throttles != 0 || s.Errors != 0 || l.successes.Load() != 1 {
		t.Errorf("stats %+v, successes %d", s, l.successes.Load())
	}
	l.Observe(time.Now(), &http.Response{StatusCode: 503, Header: http.Header{}}, nil)
	if s := l.Stats(); s.Throttles != 1 || s.Errors != 1 || s.Cuts != 1 {
		t.Errorf("a 503 with Redis unreachable: %+v, want a throttle, a failed call, a local cut", s)
	}
}
