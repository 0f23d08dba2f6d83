package redistest

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Delay starts a TCP proxy on a free loopback port that forwards to addr and holds every chunk of
// bytes for oneWay in each direction, so a Redis on loopback answers with a round trip of about
// 2×oneWay (plus what the machine adds), as a Redis in another zone would. Bytes keep their order;
// a connection's bandwidth is not limited. The proxy and its connections are closed when the test
// ends. It returns the proxy's host:port.
func Delay(t testing.TB, addr string, oneWay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &delayProxy{target: addr, oneWay: oneWay, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return ln.Addr().String()
}

// delayProxy is the proxy behind Delay.
type delayProxy struct {
	target string
	oneWay time.Duration
	ln     net.Listener
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

// track records c to be closed by close; it reports false (and closes c) once the proxy is closed.
func (p *delayProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *delayProxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(in) {
			return
		}
		p.wg.Go(func() {
			out, err := net.Dial("tcp", p.target)
			if err != nil || !p.track(out) {
				_ = in.Close()
				return
			}
			var pair sync.WaitGroup
			pair.Go(func() { p.pipe(out, in) })
			pair.Go(func() { p.pipe(in, out) })
			pair.Wait()
		})
	}
}

// chunk is bytes read at a time, to be written oneWay later.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each chunk oneWay after it was read; when either side ends it closes
// both, so the other direction ends too.
func (p *delayProxy) pipe(dst, src net.Conn) {
	defer func() {
		_ = dst.Close()
		_ = src.Close()
	}()
	// The writer drains the queue at its own pace; the queue holds what one round trip of a busy
	// connection can carry without blocking the reader.
	queue := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range queue {
			if d := time.Until(c.at.Add(p.oneWay)); d > 0 {
				time.Sleep(d)
			}
			if _, err := dst.Write(c.b); err != nil {
				_ = src.Close()
				for range queue { // let the reader finish
				}
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			queue <- chunk{b: append([]byte(nil), buf[:n]...), at: time.Now()}
		}
		if err != nil {
			if err != io.EOF {
				_ = dst.Close()
			}
			break
		}
	}
	close(queue)
	<-done
}

// close stops accepting, closes every connection and waits for the proxy's goroutines.
func (p *delayProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
