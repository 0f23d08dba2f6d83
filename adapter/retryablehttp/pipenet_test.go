package retryablehttp_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
)

// pipeNet is an in-memory network for tests inside a testing/synctest bubble: connections are
// net.Pipe pairs, whose blocking operations are durably blocking, so virtual time advances while
// an idle keep-alive connection waits (a real socket would hold the bubble's clock still).
type pipeNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeNet() *pipeNet {
	return &pipeNet{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept implements net.Listener.
func (p *pipeNet) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (p *pipeNet) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

// Addr implements net.Listener.
func (p *pipeNet) Addr() net.Addr { return pipeAddr{} }

// DialContext connects to the listener.
func (p *pipeNet) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case p.conns <- server:
		return client, nil
	case <-p.done:
		return nil, &net.OpError{Op: "dial", Net: "pipe", Err: syscall.ECONNREFUSED}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// servePipe serves h on a new pipeNet inside the calling bubble and returns a client transport
// dialling it. Everything is shut down when the bubble's test function returns.
func servePipe(t *testing.T, h http.Handler) *http.Transport {
	t.Helper()
	pn := newPipeNet()
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(pn) }()
	tr := &http.Transport{DialContext: pn.DialContext}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = srv.Close()
	})
	return tr
}
