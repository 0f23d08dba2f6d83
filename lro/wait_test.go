package lro

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/testserver"
)

// handlerTransport serves requests in memory with an http.Handler, so that a client stack and a
// testserver run inside one testing/synctest bubble on virtual time.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	if req.Body != nil {
		req.Body.Close()
	}
	res := rec.Result()
	res.Request = req
	return res, nil
}

var errOperationFailed = errors.New("operation failed")

// doneStatus is the Done of testserver's operations: the result once Succeeded,
// errOperationFailed once Failed.
func doneStatus(resp *http.Response) (string, bool, error) {
	var st testserver.OperationStatus
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return "", false, err
	}
	switch st.Status {
	case testserver.OperationSucceeded:
		return st.Result, true, nil
	case testserver.OperationFailed:
		return "", true, errOperationFailed
	}
	return "", false, nil
}

// fixture is a steady client in front of testserver's operations (behind a limiter when rules are
// given), served in memory.
type fixture struct {
	ops    *testserver.OperationsHandler
	lim    *testserver.Limiter
	client *http.Client
}

func newFixture(t *testing.T, o testserver.Operations, rules []testserver.Rule, copts ...client.Option) *fixture {
	t.Helper()
	ops, err := testserver.NewOperations(o)
	require.NoError(t, err)
	f := &fixture{ops: ops}
	var h http.Handler = ops
	if len(rules) > 0 {
		f.lim, err = testserver.NewLimiter(rules)
		require.NoError(t, err)
		h = f.lim.Middleware(ops)
	}
	f.client = client.New(append([]client.Option{client.WithBase(handlerTransport{h})}, copts...)...)
	return f
}

// start starts an operation and returns the 202.
func (f *fixture) start(t *testing.T) *http.Response {
	t.Helper()
	resp, err := f.client.Post("http://api.test/jobs", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	return resp
}

// TestWaitRetryAfter: with each status header, Wait polls every Retry-After and returns the
// result at the first poll after the operation's end: an operation of 10 s polled every 2 s is
// seen done by the fifth poll, at 10 s.
func TestWaitRetryAfter(t *testing.T) {
	for _, header := range []string{testserver.HeaderOperationLocation, testserver.HeaderAzureAsyncOperation, testserver.HeaderLocation} {
		t.Run(header, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, testserver.Operations{Duration: 10 * time.Second, RetryAfter: 2 * time.Second, Header: header}, nil)
				start := time.Now()
				got, err := Wait(context.Background(), f.client, f.start(t), doneStatus)
				require.NoError(t, err)
				assert.Equal(t, "operation 1 done", got)
				assert.Equal(t, int64(5), f.ops.Polls())
				assert.Equal(t, 10*time.Second, time.Since(start))
			})
		})
	}
}

// TestWaitInterval: without Retry-After the wait doubles from WithInterval up to WithMaxInterval:
// polls at 1, 3, 7 and 11 s for an operation of 10 s.
func TestWaitInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, testserver.Operations{Duration: 10 * time.Second}, nil)
		start := time.Now()
		got, err := Wait(context.Background(), f.client, f.start(t), doneStatus,
			WithInterval(time.Second), WithMaxInterval(4*time.Second))
		require.NoError(t, err)
		assert.Equal(t, "operation 1 done", got)
		assert.Equal(t, int64(4), f.ops.Polls())
		assert.Equal(t, 11*time.Second, time.Since(start))
	})
}

// TestWaitThroughThrottle: polls refused by the server's limiter are retried by the client's stack
// (after their Retry-After); Done never sees a 429, and the result comes back.
func TestWaitThroughThrottle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, testserver.Operations{Duration: 5 * time.Second},
			[]testserver.Rule{{Limit: 2, Window: time.Second}}, client.WithoutPace())
		var seen []int
		done := func(resp *http.Response) (string, bool, error) {
			seen = append(seen, resp.StatusCode)
			return doneStatus(resp)
		}
		got, err := Wait(context.Background(), f.client, f.start(t), done,
			WithInterval(100*time.Millisecond), WithMaxInterval(100*time.Millisecond))
		require.NoError(t, err)
		assert.Equal(t, "operation 1 done", got)
		var denied int64
		for _, c := range f.lim.Stats().Rules {
			denied += c.Denied
		}
		assert.Positive(t, denied, "the limiter refused some polls")
		for _, s := range seen {
			assert.Equal(t, http.StatusOK, s)
		}
	})
}

// TestWaitFailedOperation: Done's error comes back wrapped in *Error, with the URL and the polls.
func TestWaitFailedOperation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, testserver.Operations{Duration: 3 * time.Second, RetryAfter: time.Second, Fail: true}, nil)
		_, err := Wait(context.Background(), f.client, f.start(t), doneStatus)
		require.ErrorIs(t, err, errOperationFailed)
		var e *Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, "http://api.test/operations/1", e.URL)
		assert.Equal(t, 3, e.Polls)
		assert.Equal(t, http.StatusOK, e.StatusCode)
	})
}

// TestWaitDeadline: Wait never waits past the context's deadline: it gives up before the wait that
// would pass it, with an error matching ErrWouldExceedDeadline and context.DeadlineExceeded.
func TestWaitDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, testserver.Operations{Duration: time.Minute, RetryAfter: 2 * time.Second}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, err := Wait(ctx, f.client, f.start(t), doneStatus)
		assert.ErrorIs(t, err, ErrWouldExceedDeadline)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 4*time.Second, time.Since(start), "gave up after the poll at 4 s, not at the deadline")
		assert.Equal(t, int64(2), f.ops.Polls())
	})
}

// TestWaitCancel: a context cancelled during a wait ends Wait at once with its error.
func TestWaitCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, testserver.Operations{Duration: time.Minute, RetryAfter: 10 * time.Second}, nil)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(3*time.Second, cancel)
		start := time.Now()
		_, err := Wait(ctx, f.client, f.start(t), doneStatus)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 3*time.Second, time.Since(start))
		assert.Equal(t, int64(0), f.ops.Polls())
	})
}

// response is a hand-made response to a request for url.
func response(t *testing.T, code int, url string, header http.Header, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, nil)
	require.NoError(t, err)
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{StatusCode: code, Header: header, Body: &closeRecorder{Reader: strings.NewReader(body)}, Request: req}
}

type closeRecorder struct {
	*strings.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// TestWaitWithoutStatusURL: a response naming no status resource is given to Done: a finished one
// is the result, an unfinished one is ErrNoStatusURL. Its body is closed either way.
func TestWaitWithoutStatusURL(t *testing.T) {
	resp := response(t, http.StatusCreated, "http://api.test/jobs", nil, `{"status":"Succeeded","result":"at once"}`)
	got, err := Wait(context.Background(), http.DefaultClient, resp, doneStatus)
	require.NoError(t, err)
	assert.Equal(t, "at once", got)
	assert.True(t, resp.Body.(*closeRecorder).closed)

	// A Location on a 201 is the created resource, not a status resource.
	resp = response(t, http.StatusCreated, "http://api.test/jobs", http.Header{"Location": {"/jobs/1"}}, `{"status":"Running"}`)
	_, err = Wait(context.Background(), http.DefaultClient, resp, doneStatus)
	require.ErrorIs(t, err, ErrNoStatusURL)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusCreated, e.StatusCode)
	assert.True(t, resp.Body.(*closeRecorder).closed)
}

// TestWaitErrorStatus: an error status, on the response that started the operation or on a poll,
// is ErrStatus with that status; a relative status URL is resolved against the request's.
func TestWaitErrorStatus(t *testing.T) {
	resp := response(t, http.StatusBadRequest, "http://api.test/jobs", nil, "bad")
	_, err := Wait(context.Background(), http.DefaultClient, resp, doneStatus)
	require.ErrorIs(t, err, ErrStatus)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusBadRequest, e.StatusCode)
	assert.True(t, resp.Body.(*closeRecorder).closed)

	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, testserver.Operations{}, nil)
		resp := response(t, http.StatusAccepted, "http://api.test/jobs", http.Header{"Location": {"/operations/99"}}, "")
		_, err := Wait(context.Background(), f.client, resp, doneStatus, WithInterval(time.Millisecond))
		require.ErrorIs(t, err, ErrStatus)
		var e *Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, http.StatusNotFound, e.StatusCode)
		assert.Equal(t, "http://api.test/operations/99", e.URL)
		assert.Equal(t, 1, e.Polls)
	})
}

// TestWaitHeader: WithHeader's fields are on every poll.
func TestWaitHeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ops, err := testserver.NewOperations(testserver.Operations{Duration: 2 * time.Second})
		require.NoError(t, err)
		var auth []string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				auth = append(auth, r.Header.Get("Authorization"))
			}
			ops.ServeHTTP(w, r)
		})
		c := client.New(client.WithBase(handlerTransport{h}))
		resp, err := c.Post("http://api.test/jobs", "", nil)
		require.NoError(t, err)
		_, err = Wait(context.Background(), c, resp, doneStatus, WithHeader(http.Header{"Authorization": {"Bearer t"}}))
		require.NoError(t, err)
		require.NotEmpty(t, auth)
		for _, a := range auth {
			assert.Equal(t, "Bearer t", a)
		}
	})
}

// TestWaitInvalid: nil arguments and invalid options are errors, and the body is closed.
func TestWaitInvalid(t *testing.T) {
	for name, opts := range map[string][]Option{
		"nil option":      {nil},
		"zero interval":   {WithInterval(0)},
		"negative max":    {WithMaxInterval(-time.Second)},
		"max below first": {WithInterval(time.Minute), WithMaxInterval(time.Second)},
	} {
		resp := response(t, http.StatusAccepted, "http://api.test/jobs", nil, "")
		_, err := Wait(context.Background(), http.DefaultClient, resp, doneStatus, opts...)
		assert.ErrorIs(t, err, ErrInvalidOption, name)
		assert.True(t, resp.Body.(*closeRecorder).closed, name)
	}
	resp := response(t, http.StatusAccepted, "http://api.test/jobs", nil, "")
	_, err := Wait[string](context.Background(), nil, resp, doneStatus)
	assert.ErrorIs(t, err, ErrNilArgument)
	assert.True(t, resp.Body.(*closeRecorder).closed)
	_, err = Wait[string](context.Background(), http.DefaultClient, nil, doneStatus)
	assert.ErrorIs(t, err, ErrNilArgument)
	_, err = Wait[string](context.Background(), http.DefaultClient, response(t, 202, "http://api.test/", nil, ""), nil)
	assert.ErrorIs(t, err, ErrNilArgument)
}
