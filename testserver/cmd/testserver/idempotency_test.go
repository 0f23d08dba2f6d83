package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdempotencyFlag: with -idempotency, a POST repeated with the same Idempotency-Key gets its
// first answer replayed (Idempotent-Replayed: true); without it, the header is passed on and each
// request is answered anew. A negative value is a usage error.
func TestIdempotencyFlag(t *testing.T) {
	post := func(t *testing.T, in *instance, key string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, in.url+"/orders", strings.NewReader("order 7"))
		require.NoError(t, err)
		req.Header.Set("Idempotency-Key", key)
		resp, err := in.client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	t.Run("on", func(t *testing.T) {
		in := start(t, "-limit", "100", "-idempotency", "10")
		first := post(t, in, "job-1")
		assert.Equal(t, http.StatusOK, first.StatusCode)
		assert.Empty(t, first.Header.Get("Idempotent-Replayed"))
		again := post(t, in, "job-1")
		assert.Equal(t, http.StatusOK, again.StatusCode)
		assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	})
	t.Run("off", func(t *testing.T) {
		in := start(t, "-limit", "100")
		post(t, in, "job-1")
		assert.Empty(t, post(t, in, "job-1").Header.Get("Idempotent-Replayed"))
	})
	t.Run("negative", func(t *testing.T) {
		_, err := parseArgs([]string{"-idempotency", "-1"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "idempotency")
	})
}
