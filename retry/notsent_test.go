package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/retry"
)

// noCachedConn is the error an HTTP/2 transport returns when it has no connection to send on.
type noCachedConn struct{}

func (noCachedConn) Error() string             { return "http2: no cached connection was available" }
func (noCachedConn) IsHTTP2NoCachedConnError() {}

var refusedDial = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

func TestNotSent(t *testing.T) {
	wrap := func(err error) error { return &url.Error{Op: "Post", URL: "http://x", Err: err} }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"dial refused", refusedDial, true},
		{"dial refused, wrapped by http.Client", wrap(refusedDial), true},
		{"dial timeout", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutError{}}, true},
		{"network unreachable", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ENETUNREACH}, true},
		{"proxy unreachable", &net.OpError{Op: "proxyconnect", Net: "tcp", Err: refusedDial}, true},
		{"DNS failure", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "server misbehaving", IsTemporary: true}}, true},
		{"bare DNS error", &net.DNSError{Err: "no such host", IsNotFound: true}, true},
		{"HTTP/2 without a connection", fmt.Errorf("h2: %w", noCachedConn{}), true},
		{"skipped alternate protocol", http.ErrSkipAltProtocol, true},
		{"reset on read", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, false},
		{"broken pipe on write", &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}, false},
		{"bare refused errno (unknown stage)", syscall.ECONNREFUSED, false},
		{"EOF before the response", io.EOF, false},
		{"timeout awaiting headers", wrap(timeoutError{}), false},
		{"context canceled", context.Canceled, false},
		{"unknown", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, retry.NotSent(tt.err))
		})
	}
}

// sequenceRT answers the n-th call with errs[n] (a nil entry: 200 OK), repeating the last one. It
// closes request bodies.
type sequenceRT struct {
	errs  []error
	calls int
}

func (s *sequenceRT) RoundTrip(req *http.Request) (*http.Response, error) {
	err := s.errs[min(s.calls, len(s.errs)-1)]
	s.calls++
	if req.Body != nil {
		_ = req.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

// TestPOSTNeverSentIsRetried: a POST without an Idempotency-Key whose attempt failed before anything
// was written is sent again; one that may have reached the server is not.
func TestPOSTNeverSentIsRetried(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantCalls int
		wantCause error // nil: the request succeeded on its second attempt
	}{
		{"dial refused", refusedDial, 2, nil},
		{"dial timeout", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutError{}}, 2, nil},
		{"proxy refused", &net.OpError{Op: "proxyconnect", Net: "tcp", Err: refusedDial}, 2, nil},
		{"temporary DNS failure", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "timeout", IsTemporary: true}}, 2, nil},
		{"HTTP/2 without a connection", noCachedConn{}, 2, nil},
		{"reset on read (may have been processed)", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, 1, retry.ErrNotIdempotent},
		{"EOF (may have been processed)", io.EOF, 1, retry.ErrNotIdempotent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &sequenceRT{errs: []error{tt.err, nil}}
			tr := newTransport(t, base)
			req, err := http.NewRequest("POST", "http://api.test/charges", strings.NewReader(`{"amount":5}`))
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			assert.Equal(t, tt.wantCalls, base.calls)
			switch {
			case tt.wantCalls == 2:
				require.NoError(t, err)
				assert.Equal(t, 200, resp.StatusCode)
			case tt.wantCause != nil:
				assert.Nil(t, resp)
				assert.ErrorIs(t, err, tt.wantCause)
			default:
				assert.Nil(t, resp)
				assert.ErrorIs(t, err, tt.err)
			}
		})
	}
}

// TestPOSTToARefusingPortIsRetried: against a loopback port with no listener, a real
// http.Transport's dial error makes a POST without a key use all its attempts.
func TestPOSTToARefusingPortIsRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := newTransport(t, base, retry.WithMaxAttempts(3))
	req, err := http.NewRequest("POST", "http://"+addr+"/charges", strings.NewReader(`{"amount":5}`))
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	assert.Nil(t, resp)
	var rerr *retry.Error
	require.ErrorAs(t, err, &rerr)
	assert.ErrorIs(t, err, retry.ErrAttemptsExhausted)
	assert.NotErrorIs(t, err, retry.ErrNotIdempotent)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.Len(t, rerr.Attempts, 3)
}

// TestPOSTRetriedAcrossAnOutage: a loopback server that is down for the first attempts (its port
// refuses) and then up gets the POST exactly once.
func TestPOSTRetriedAcrossAnOutage(t *testing.T) {
	srv, s := serve(t, status(201))
	base := &outageRT{down: 2, next: &http.Transport{}}
	defer base.next.CloseIdleConnections()
	tr := newTransport(t, base)
	req, err := http.NewRequest("POST", srv.URL+"/charges", strings.NewReader(`{"amount":5}`))
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, 201, resp.StatusCode)
	require.Len(t, s.arrivals(), 1)
	assert.Equal(t, `{"amount":5}`, string(s.arrivals()[0].body))
}

// outageRT dials a closed loopback port for its first down calls (a real refused dial), then passes
// requests to next.
type outageRT struct {
	down  int
	calls int
	next  *http.Transport
}

func (o *outageRT) RoundTrip(req *http.Request) (*http.Response, error) {
	o.calls++
	if o.calls <= o.down {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		addr := l.Addr().String()
		_ = l.Close()
		_ = req.Body.Close()
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
			return nil, errors.New("outageRT: the closed port accepted")
		}
		return nil, err
	}
	return o.next.RoundTrip(req)
}
