package retryablehttp_test

import (
	"context"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	steadyretry "github.com/steadyhttp/steady/adapter/retryablehttp"
)

func response(method string, status int, kv ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	var req *http.Request
	if method != "" {
		req = &http.Request{Method: method, Header: http.Header{}}
	}
	return &http.Response{StatusCode: status, Header: h, Request: req}
}

func withKey(resp *http.Response) *http.Response {
	resp.Request.Header.Set("Idempotency-Key", "k")
	return resp
}

func urlErr(op string, err error) error { return &url.Error{Op: op, URL: "http://x/", Err: err} }

func TestCheckRetry(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name    string
		resp    *http.Response
		err     error
		timeout time.Duration
		want    bool
	}{
		{"GET 200", response("GET", 200), nil, 0, false},
		{"GET 503", response("GET", 503), nil, 0, true},
		{"GET 502", response("GET", 502), nil, 0, true},
		{"GET 504", response("GET", 504), nil, 0, true},
		{"GET 429", response("GET", 429), nil, 0, true},
		{"GET 501", response("GET", 501), nil, 0, false},
		{"GET 500", response("GET", 500), nil, 0, false},
		{"GET 404", response("GET", 404), nil, 0, false},
		{"PUT 503", response("PUT", 503), nil, 0, true},
		{"POST 502", response("POST", 502), nil, 0, false},
		{"POST 503 without Retry-After", response("POST", 503), nil, 0, false},
		{"POST 503 with Retry-After", response("POST", 503, "Retry-After", "1"), nil, 0, true},
		{"POST 429", response("POST", 429), nil, 0, true},
		{"PATCH 429", response("PATCH", 429), nil, 0, true},
		{"POST 502 with Idempotency-Key", withKey(response("POST", 502)), nil, 0, true},
		{"unknown request, 502", response("", 502), nil, 0, false},
		{"unknown request, 429", response("", 429), nil, 0, true},
		{"Retry-After 60s", response("GET", 429, "Retry-After", "60"), nil, 0, true},
		{"Retry-After above 60s", response("GET", 429, "Retry-After", "61"), nil, 0, false},
		{"Retry-After past the deadline", response("GET", 429, "Retry-After", "10"), nil, 5 * time.Second, false},
		{"Retry-After within the deadline", response("GET", 429, "Retry-After", "1"), nil, time.Hour, true},
		{"GET refused", nil, urlErr("Get", refused), 0, true},
		{"GET EOF", nil, urlErr("Get", io.EOF), 0, true},
		{"DELETE reset", nil, urlErr("Delete", &net.OpError{Op: "read", Err: syscall.ECONNRESET}), 0, true},
		{"POST EOF", nil, urlErr("Post", io.EOF), 0, false},
		{"PATCH refused (never sent)", nil, urlErr("Patch", refused), 0, true},
		{"POST reset on read", nil, urlErr("Post", &net.OpError{Op: "read", Err: syscall.ECONNRESET}), 0, false},
		{"GET bad certificate", nil, urlErr("Get", x509.UnknownAuthorityError{}), 0, false},
		{"EOF without a method", nil, io.EOF, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			got, err := steadyretry.CheckRetry(ctx, tt.resp, tt.err)
			assert.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCheckRetryStopsWhenTheContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := steadyretry.CheckRetry(ctx, response("GET", 503), nil)
	assert.False(t, got)
	assert.ErrorIs(t, err, context.Canceled)
}
