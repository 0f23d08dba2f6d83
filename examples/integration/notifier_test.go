package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/throttle"
)

// inbox is the webhook behind the rate limiter: it records the IDs of the messages it receives, in
// order. testserver passes it only the requests it admits (WithHandler).
type inbox struct {
	mu  sync.Mutex
	ids []string
}

func (in *inbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m Message
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	in.mu.Lock()
	in.ids = append(in.ids, m.ID)
	in.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

func (in *inbox) received() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.ids...)
}

// messages returns n messages with IDs m0, m1, ...
func messages(n int) ([]Message, []string) {
	msgs := make([]Message, n)
	ids := make([]string, n)
	for i := range msgs {
		ids[i] = fmt.Sprintf("m%d", i)
		msgs[i] = Message{ID: ids[i], Text: fmt.Sprintf("message %d", i)}
	}
	return msgs, ids
}

// newClient returns a steady client for the test and closes its idle connections when the test
// ends (goleak would see them otherwise).
func newClient(t *testing.T, opts ...client.Option) *http.Client {
	c := client.New(opts...)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// The server allows a burst of 3 messages, then 20 per second, and says so: every 429 carries
// Retry-After and the RateLimit headers. The notifier sends 6 messages back to back, so it is
// throttled, and the steady client must wait exactly as long as it is told.
func TestDeliversEveryMessageOnceWhenThrottled(t *testing.T) {
	in := &inbox{}
	srv := testserver.NewT(t,
		testserver.WithRules(testserver.Rule{Algorithm: "token-bucket", Limit: 20, Window: time.Second, Burst: 3}),
		testserver.WithHandler(in),
	)
	msgs, ids := messages(6)

	n, err := NewNotifier(newClient(t), srv.URL()+"/hooks/alerts").Send(t.Context(), msgs)

	require.NoError(t, err)
	assert.Equal(t, len(msgs), n)
	// Exactly once, in order: no message lost, none duplicated by a retry.
	assert.Equal(t, ids, in.received())

	// Never before Retry-After. The Notifier sends one message at a time, so the arrival after a
	// throttled one is its retry; the server's own timestamps show how long the client waited.
	arrivals := srv.Arrivals()
	throttled := 0
	for i, a := range arrivals {
		if a.Allowed {
			continue
		}
		throttled++
		require.Less(t, i+1, len(arrivals), "a throttled message was never retried")
		waited := arrivals[i+1].Time.Sub(a.Time)
		assert.GreaterOrEqual(t, waited, a.RetryAfter, "arrival %d came %v after a 429 that asked for %v", i+1, waited, a.RetryAfter)
	}
	assert.Equal(t, len(msgs)+throttled, len(arrivals))
	t.Logf("%d messages, %d requests throttled and retried", len(msgs), throttled)
}

// retries records what the client saw on each retry, as a client.Observer.
type retries struct {
	client.NopObserver
	mu      sync.Mutex
	reasons []retry.Reason
}

func (r *retries) Retry(_ *http.Request, _ int, reason retry.Reason, _ time.Duration) {
	r.mu.Lock()
	r.reasons = append(r.reasons, reason)
	r.mu.Unlock()
}

// Many servers answer a bare 429: no Retry-After, no RateLimit headers. The client cannot know when
// to come back, so it backs off exponentially with jitter. The test gives it a short base delay (to
// keep the test fast) and more attempts than the default (to be sure a message is not given up on
// while the bucket refills); the guarantee is the same: every message once, in order.
func TestDeliversEveryMessageOnceWithoutHeaders(t *testing.T) {
	in := &inbox{}
	srv := testserver.NewT(t,
		testserver.WithRules(testserver.Rule{Algorithm: "token-bucket", Limit: 20, Window: time.Second, Burst: 3}),
		testserver.WithHeaders(false),
		testserver.WithHandler(in),
	)
	obs := &retries{}
	hc := newClient(t,
		client.WithRetry(retry.WithBaseDelay(20*time.Millisecond), retry.WithMaxAttempts(10)),
		client.WithObserver(obs),
	)
	msgs, ids := messages(8)

	n, err := NewNotifier(hc, srv.URL()+"/hooks/alerts").Send(t.Context(), msgs)

	require.NoError(t, err)
	assert.Equal(t, len(msgs), n)
	assert.Equal(t, ids, in.received())

	// The client saw only bare 429s, and retried each one.
	st := srv.Stats().Server
	require.NotNil(t, st)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Len(t, obs.reasons, int(st.Throttled))
	for _, r := range obs.reasons {
		assert.Equal(t, http.StatusTooManyRequests, r.Status)
		assert.False(t, r.HasRetryAfter, "the server sent no Retry-After")
	}
	assert.Equal(t, int64(len(msgs)), st.Admitted)
	t.Logf("%d messages, %d bare 429s retried", len(msgs), st.Throttled)
}

// A server that allows 2 messages and then one an hour says so in its rate-limit headers. The
// client sends the first two at once (the headers say the quota is there), and then knows that
// nothing is left for an hour: rather than send the third message only to draw a 429, or sleep for
// an hour, it fails at once with an error matching throttle.ErrWaitTooLong (client.WithMaxWait,
// 60 s by default). The Notifier stops there and reports which message it could not deliver; the
// ones before it were delivered and the ones after it were not sent.
func TestReportsTheMessageItCouldNotDeliver(t *testing.T) {
	in := &inbox{}
	srv := testserver.NewT(t,
		// 2 messages, then one per hour.
		testserver.WithRules(testserver.Rule{Algorithm: "token-bucket", Limit: 1, Window: time.Hour, Burst: 2}),
		testserver.WithHandler(in),
	)
	msgs, ids := messages(5)

	n, err := NewNotifier(newClient(t), srv.URL()+"/hooks/alerts").Send(t.Context(), msgs)

	assert.Equal(t, 2, n)
	var de *DeliveryError
	require.True(t, errors.As(err, &de), "error %v", err)
	assert.Equal(t, 2, de.Index)
	assert.Equal(t, "m2", de.ID)
	assert.Zero(t, de.Status, "no response: the message was not sent")
	assert.ErrorIs(t, err, throttle.ErrWaitTooLong)
	var wait *throttle.WaitTooLongError
	require.ErrorAs(t, err, &wait)
	assert.Greater(t, wait.Wait, time.Minute, "the quota comes back in about an hour")
	assert.Equal(t, ids[:2], in.received())
	st := srv.Stats().Server
	require.NotNil(t, st)
	assert.Equal(t, int64(2), st.Requests, "the third message and the rest were not sent at all")
	assert.Zero(t, st.Throttled, "no 429 drawn")
}
