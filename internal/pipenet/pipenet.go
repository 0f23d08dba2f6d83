// Package pipenet is an in-memory network for tests that run a real net/http client and server
// inside a testing/synctest bubble. Its connections are net.Pipe pairs, whose blocking operations
// are durably blocking, so virtual time advances while an idle keep-alive connection waits (a real
// socket would hold the bubble's clock still).
package pipenet

import (
	"context"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
)

// Listener is a net.Listener whose connections come from its own DialContext. It is safe for
// concurrent use; Close is idempotent, and a dial after Close is refused (ECONNREFUSED).
type Listener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// New returns a Listener with no connections yet.
func New() *Listener {
	return &Listener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return addr{} }

// DialContext connects to the listener; its signature fits http.Transport.DialContext.
func (l *Listener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "pipe", Err: syscall.ECONNREFUSED}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type addr struct{}

func (addr) Network() string { return "pipe" }
func (addr) String() string  { return "pipe" }

// Serve serves h on a new Listener (call it inside the bubble that will use it) and returns a
// client transport dialling it, whatever host a request names. Everything is shut down when the
// test ends.
func Serve(t testing.TB, h http.Handler) *http.Transport {
	t.Helper()
	l := New()
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(l) }()
	tr := &http.Transport{DialContext: l.DialContext}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = srv.Close()
	})
	return tr
}
