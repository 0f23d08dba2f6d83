package redisthrottle

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/redistest"
)

// TestFallbackWhenRedisStops: with Redis gone, reservations come from the local fallback at the
// process's share of the rate, Redis is tried again only after the recheck period, and when it is
// back the limiter uses it again.
func TestFallbackWhenRedisStops(t *testing.T) {
	srv := redistest.Start(t)
	var ls []*Limiter
	for range 3 {
		ls = append(ls, mustNew(t, newClient(t, srv.URL()), "fallback", WithRate(90, 1), WithRecheck(time.Second)))
	}
	now := epoch
	for _, l := range ls {
		if _, err := l.Reserve(now); err != nil {
			t.Fatal(err)
		}
	}
	l := ls[2]
	if s := l.Stats(); s.Processes != 3 || s.PeakProcesses != 3 {
		t.Fatalf("processes %d (peak %d), want 3", s.Processes, s.PeakProcesses)
	}
	srv.Stop()

	now = now.Add(time.Second)
	var delays []time.Duration
	for range 3 {
		r, err := l.Reserve(now)
		if err != nil {
			t.Fatalf("Reserve failed with Redis down: %v", err)
		}
		delays = append(delays, r.Delay(now))
	}
	// 90/s shared by 3 processes: 30/s locally, one every 33.333334 ms (rounded up to the ns)
	want := []time.Duration{0, 33333334, 66666668}
	for i := range want {
		if delays[i] != want[i] {
			t.Errorf("fallback delay %d: %v, want %v", i, delays[i], want[i])
		}
	}
	s := l.Stats()
	if s.Errors != 1 || s.Fallback != 3 || s.LastError == nil {
		t.Errorf("stats %+v: want one failed call, three fallback reservations", s)
	}

	srv.Restart()
	l.Reserve(now.Add(time.Second - time.Nanosecond))
	if s := l.Stats(); s.Redis != 1 || s.Fallback != 4 {
		t.Errorf("inside the recheck period Redis was tried: %+v", l.Stats())
	}
	later := now.Add(time.Second)
	if _, err := l.Reserve(later); err != nil {
		t.Fatal(err)
	}
	if s := l.Stats(); s.Redis != 2 || s.Errors != 1 {
		t.Errorf("after the recheck period with Redis back: %+v, want a second Redis reservation", s)
	}
}

// TestFallbackShareOption: a configured share is used even before Redis was ever reached (a
// learning limiter's fallback: TestFallbackLearnsAlone).
func TestFallbackShareOption(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want time.Duration // second delay
	}{
		{"known rate, share 1/4", []Option{WithRate(100, 1), WithFallbackShare(0.25)}, 40 * time.Millisecond},
		{"known rate, no share known", []Option{WithRate(100, 1)}, 10 * time.Millisecond},
		{"learning, share 1/2", []Option{WithInitialRate(40), WithFallbackShare(0.5)}, 50 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := redistest.Start(t)
			l := mustNew(t, newClient(t, srv.URL()), "share", tt.opts...)
			srv.Stop()
			l.Reserve(epoch)
			r, _ := l.Reserve(epoch)
			if got := r.Delay(epoch); got != tt.want {
				t.Errorf("second delay %v, want %v", got, tt.want)
			}
		})
	}
}

// hungRedis is a TCP server that accepts connections and never answers, like a Redis that hangs.
type hungRedis struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func startHungRedis(t *testing.T) *hungRedis {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungRedis{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-h.done
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, c := range h.conns {
			_ = c.Close()
		}
	})
	return h
}

// TestDeadlineOnHungRedis: a Redis that never answers costs each call its deadline and no more:
// the reservation comes from the fallback, the failure is a deadline.
func TestDeadlineOnHungRedis(t *testing.T) {
	h := startHungRedis(t)
	c := newClient(t, "redis://"+h.ln.Addr().String()+"/0")
	l, err := New(c, "hung", WithRate(100, 1), WithTimeout(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, err := l.Reserve(time.Now())
		if err != nil || r == nil {
			t.Errorf("Reserve: %v, %v", r, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a hang, not a timing assertion
		t.Fatal("Reserve did not return on a hung Redis")
	}
	s := l.Stats()
	if s.Fallback != 1 || !errors.Is(s.LastError, context.DeadlineExceeded) {
		t.Errorf("stats %+v: want one fallback reservation after a deadline", s)
	}
}
