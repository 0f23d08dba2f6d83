package retry_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/retry"
)

func TestIdempotentMethod(t *testing.T) {
	tests := []struct {
		method string
		want   bool
	}{
		{"", true}, {"GET", true}, {"HEAD", true}, {"OPTIONS", true}, {"TRACE", true},
		{"PUT", true}, {"DELETE", true}, {"POST", false}, {"PATCH", false}, {"CONNECT", false},
		{"get", false}, {"PURGE", false},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			assert.Equal(t, tt.want, retry.IdempotentMethod(tt.method))
		})
	}
}

func TestMaySendAgain(t *testing.T) {
	withKey := http.Header{"Idempotency-Key": {"k"}}
	withXKey := http.Header{"X-Idempotency-Key": {"k"}}
	tests := []struct {
		name   string
		method string
		header http.Header
		status int // 0: no response
		ra     bool
		want   bool
	}{
		{"GET after error", "GET", nil, 0, false, true},
		{"DELETE after 502", "DELETE", nil, 502, false, true},
		{"POST after error", "POST", nil, 0, false, false},
		{"POST after 502", "POST", nil, 502, false, false},
		{"POST after 503 without Retry-After", "POST", nil, 503, false, false},
		{"POST after 503 with Retry-After", "POST", nil, 503, true, true},
		{"POST after 429", "POST", nil, 429, false, true},
		{"PATCH after 429", "PATCH", nil, 429, true, true},
		{"POST with key after error", "POST", withKey, 0, false, true},
		{"PATCH with X-Idempotency-Key after 502", "PATCH", withXKey, 502, false, true},
		{"POST after 504 with Retry-After", "POST", nil, 504, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &http.Request{Method: tt.method, Header: tt.header}
			var resp *http.Response
			if tt.status != 0 {
				resp = &http.Response{StatusCode: tt.status}
			}
			assert.Equal(t, tt.want, retry.MaySendAgain(req, resp, tt.ra))
		})
	}
}

func TestReplayable(t *testing.T) {
	withGetBody, err := http.NewRequest("PUT", "http://x/", strings.NewReader("abc"))
	require.NoError(t, err)
	empty, err := http.NewRequest("POST", "http://x/", strings.NewReader(""))
	require.NoError(t, err)
	noBody, err := http.NewRequest("GET", "http://x/", nil)
	require.NoError(t, err)
	opaque, err := http.NewRequest("PUT", "http://x/", io.NopCloser(strings.NewReader("abc")))
	require.NoError(t, err)
	tests := []struct {
		name string
		req  *http.Request
		want bool
	}{
		{"GetBody", withGetBody, true},
		{"empty body", empty, true},
		{"no body", noBody, true},
		{"opaque body", opaque, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, retry.Replayable(tt.req))
		})
	}
}
