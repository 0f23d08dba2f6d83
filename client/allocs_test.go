package client

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultStackAllocatesNothing checks that the default stack adds no allocation to a request
// over its base, once the key's state is made: on an answer without rate-limit headers, on one
// that declares an ample quota, which the learner reads on every answer, and on a request with a
// credential, which the default key hashes (the default client must not make requests dearer;
// BenchmarkTransportOverhead measures the time).
func TestDefaultStackAllocatesNothing(t *testing.T) {
	for _, c := range []struct {
		name        string
		quota, auth bool
	}{{"plain", false, false}, {"quota", true, false}, {"auth", false, true}} {
		req, err := http.NewRequest(http.MethodGet, "http://api.test/items", nil)
		require.NoError(t, err)
		if c.auth {
			req.Header.Set("Authorization", "Bearer sk-test")
		}
		send := func(rt http.RoundTripper) func() {
			return func() {
				resp, err := rt.RoundTrip(req)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		base := memoryTransport{quota: c.quota}
		stack := NewTransport(base)
		for range 1000 { // the key's state, and the learner past its start
			send(stack)()
		}
		bare := testing.AllocsPerRun(200, send(base))
		assert.Equal(t, bare, testing.AllocsPerRun(200, send(stack)), c.name)
	}
}
