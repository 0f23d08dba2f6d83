package testserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOperations: a POST starts an operation (202, the status URL in the configured header,
// Retry-After rounded up to whole seconds); its status is Running until Duration has passed, then
// Succeeded or Failed; unknown ids are 404, other methods 405.
func TestOperations(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	for _, fail := range []bool{false, true} {
		h, err := NewOperations(Operations{Duration: 3 * time.Second, RetryAfter: 1500 * time.Millisecond,
			Header: HeaderAzureAsyncOperation, Fail: fail, Now: clock})
		require.NoError(t, err)
		serve := func(method, target string) (*httptest.ResponseRecorder, OperationStatus) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
			var st OperationStatus
			if rec.Header().Get("Content-Type") == "application/json" {
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st))
			}
			return rec, st
		}
		start := now
		rec, st := serve(http.MethodPost, "http://api.test/jobs")
		assert.Equal(t, http.StatusAccepted, rec.Code)
		assert.Equal(t, "http://api.test/operations/1", rec.Header().Get(HeaderAzureAsyncOperation))
		assert.Equal(t, "2", rec.Header().Get("Retry-After"))
		assert.Equal(t, OperationStatus{ID: "1", Status: OperationRunning}, st)

		now = start.Add(3*time.Second - 1)
		rec, st = serve(http.MethodGet, "http://api.test/operations/1")
		assert.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, OperationRunning, st.Status)
		assert.Equal(t, "2", rec.Header().Get("Retry-After"))

		now = start.Add(3 * time.Second)
		rec, st = serve(http.MethodGet, "http://api.test/operations/1")
		assert.Empty(t, rec.Header().Get("Retry-After"))
		if fail {
			assert.Equal(t, OperationFailed, st.Status)
			assert.NotEmpty(t, st.Error)
		} else {
			assert.Equal(t, OperationStatus{ID: "1", Status: OperationSucceeded, Result: "operation 1 done"}, st)
		}
		rec, _ = serve(http.MethodGet, "http://api.test/operations/2")
		assert.Equal(t, http.StatusNotFound, rec.Code)
		rec, _ = serve(http.MethodGet, "http://api.test/jobs")
		assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
		assert.Equal(t, int64(1), h.Started())
		assert.Equal(t, int64(3), h.Polls())
	}
}

// TestOperationsInvalid: bad configurations are *OptionError matching ErrInvalidOption.
func TestOperationsInvalid(t *testing.T) {
	for name, o := range map[string]Operations{
		"negative duration":    {Duration: -1},
		"negative retry-after": {RetryAfter: -1},
		"unknown header":       {Header: "X-Status"},
	} {
		_, err := NewOperations(o)
		var oe *OptionError
		assert.True(t, errors.As(err, &oe), name)
		assert.ErrorIs(t, err, ErrInvalidOption, name)
	}
	h, err := NewOperations(Operations{})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPut, "http://api.test/x", nil))
	assert.Equal(t, "http://api.test/operations/1", rec.Header().Get(HeaderOperationLocation), "Operation-Location by default")
	assert.Empty(t, rec.Header().Get("Retry-After"), "no Retry-After by default")
}
