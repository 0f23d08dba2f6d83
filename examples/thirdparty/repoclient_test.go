package main

import (
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListIssuesRidesThroughThrottling(t *testing.T) {
	srv, err := startAPI()
	require.NoError(t, err)
	defer srv.Close()
	obs := &throttleCounter{}
	hc := newAPIClient(obs)
	defer hc.CloseIdleConnections()
	rc, err := NewRepoClient(hc, srv.URL(), "token")
	require.NoError(t, err)

	// Every known repository at once: more calls than the burst allows.
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	calls := 0
	for repo := range issues {
		calls++
		wg.Go(func() {
			list, err := rc.ListIssues(t.Context(), repo)
			assert.NoError(t, err, repo)
			assert.Equal(t, issues[repo], list, repo)
			mu.Lock()
			got[repo]++
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Greater(t, calls, apiBurst)
	for repo := range issues {
		assert.Equal(t, 1, got[repo], repo)
	}
	st := srv.Stats().Server
	require.NotNil(t, st)
	// Every call was admitted exactly once; every 429 was retried by the client.
	assert.Equal(t, int64(calls), st.Admitted)
	assert.Equal(t, st.Throttled, obs.n.Load())
	assert.Equal(t, int64(calls)+st.Throttled, st.Requests)
}

func TestRepoClientErrors(t *testing.T) {
	srv, err := startAPI()
	require.NoError(t, err)
	defer srv.Close()
	hc := newAPIClient(nil)
	defer hc.CloseIdleConnections()
	rc, err := NewRepoClient(hc, srv.URL(), "token")
	require.NoError(t, err)

	tests := []struct {
		repo       string
		wantBad    bool
		wantStatus int
	}{
		{"acme", true, 0},
		{"/widgets", true, 0},
		{"acme/", true, 0},
		{"acme/widgets/extra", true, 0},
		{"acme/nothing-here", false, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.repo, func(t *testing.T) {
			_, err := rc.ListIssues(t.Context(), tt.repo)
			require.Error(t, err)
			assert.Equal(t, tt.wantBad, errors.Is(err, ErrBadRepo), err)
			var apiErr *APIError
			if tt.wantStatus != 0 {
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, tt.wantStatus, apiErr.Status)
				assert.Equal(t, "Not Found", apiErr.Message)
			}
		})
	}

	for _, base := range []string{"", "not a url", "ftp://x/", "http://"} {
		_, err := NewRepoClient(hc, base, "t")
		assert.Error(t, err, base)
	}
	_, err = NewRepoClient(nil, srv.URL(), "t")
	assert.Error(t, err)
}
