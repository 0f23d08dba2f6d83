package retry_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/steadyhttp/steady/retry"
)

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestRetryableError(t *testing.T) {
	wrap := func(err error) error { return &url.Error{Op: "Get", URL: "http://x", Err: err} }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"EOF", io.EOF, true},
		{"unexpected EOF wrapped", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{"reset on read", wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), true},
		{"broken pipe on write", &net.OpError{Op: "write", Err: syscall.EPIPE}, true},
		{"bare reset errno", syscall.ECONNRESET, true},
		{"transport timeout", wrap(timeoutError{}), true},
		{"temporary DNS failure", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "server misbehaving", IsTemporary: true}}, true},
		{"host not found", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", IsNotFound: true}}, false},
		{"context canceled", context.Canceled, false},
		{"deadline exceeded wrapped", wrap(context.DeadlineExceeded), false},
		{"dial aborted by context", &net.OpError{Op: "dial", Err: context.Canceled}, false},
		{"unknown authority", wrap(x509.UnknownAuthorityError{}), false},
		{"certificate verification", &tls.CertificateVerificationError{Err: errors.New("bad")}, false},
		{"hostname mismatch", x509.HostnameError{Host: "x"}, false},
		{"not TLS", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, false},
		{"remote TLS alert", &net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}, false},
		{"unknown error", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, retry.RetryableError(tt.err))
		})
	}
}

func TestDefaultClassifier(t *testing.T) {
	tests := []struct {
		status int
		want   bool
	}{
		{200, false}, {204, false}, {301, false}, {400, false}, {401, false}, {404, false},
		{409, false}, {429, true}, {500, false}, {501, false}, {502, true}, {503, true},
		{504, true}, {505, false}, {599, false}, {0, false}, {1000, false}, {-1, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			assert.Equal(t, tt.want, retry.DefaultClassifier(&http.Response{StatusCode: tt.status}, nil))
		})
	}
	assert.True(t, retry.DefaultClassifier(nil, io.EOF))
	assert.False(t, retry.DefaultClassifier(nil, context.Canceled))
	assert.False(t, retry.DefaultClassifier(nil, nil))
}
