package queue

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// memBody is a response body with nothing in it that costs nothing to create.
type memBody struct{}

func (memBody) Read([]byte) (int, error) { return 0, io.EOF }
func (memBody) Close() error             { return nil }

// memTransport answers every request in memory with an empty 200 response.
type memTransport struct{}

func (memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: memBody{}, Request: r}, nil
}

// BenchmarkTransport measures one uncontended request through a bare in-memory RoundTripper and
// through the queue in front of it; the difference is the queue's cost per request.
func BenchmarkTransport(b *testing.B) {
	q, err := New()
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "http://api.example/", nil)
	for _, bc := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"bare", memTransport{}},
		{"queue", NewTransport(memTransport{}, q)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := bc.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				_ = resp.Body.Close()
			}
		})
	}
	if s := q.Stats(); s.InFlight != 0 {
		b.Fatalf("places not given back: %+v", s)
	}
}

// BenchmarkTransportLoopback does the same against a loopback HTTP server.
func BenchmarkTransportLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport
	defer srv.Client().CloseIdleConnections()
	q, err := New()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"bare", base},
		{"queue", NewTransport(base, q)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				resp, err := bc.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		})
	}
}

// BenchmarkAcquire measures Acquire and release without contention: the public API (one allocation
// for the release function) and the internal path the Transport uses.
func BenchmarkAcquire(b *testing.B) {
	q, err := New()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("Acquire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rel, err := q.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			rel()
		}
	})
	b.Run("internal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := q.acquire(ctx); err != nil {
				b.Fatal(err)
			}
			q.release()
		}
	})
}

// BenchmarkAcquireContended has all goroutines compete for one place, so most requests wait in line.
func BenchmarkAcquireContended(b *testing.B) {
	q, err := New(WithMaxInFlight(1))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if err := q.acquire(ctx); err != nil {
				b.Error(err)
				return
			}
			q.release()
		}
	})
}
