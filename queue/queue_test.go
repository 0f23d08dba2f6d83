package queue

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder collects, in order, the names of the requests that were given a place.
type recorder struct {
	mu    sync.Mutex
	order []string
}

func (r *recorder) add(name string) {
	r.mu.Lock()
	r.order = append(r.order, name)
	r.mu.Unlock()
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.order...)
}

// result is what one background Acquire returned.
type result struct {
	release func()
	err     error
}

// acquireAsync calls q.Acquire(ctx) in a new goroutine and delivers the result on the channel.
func acquireAsync(q *Queue, ctx context.Context) <-chan result {
	ch := make(chan result, 1)
	go func() {
		rel, err := q.Acquire(ctx)
		ch <- result{rel, err}
	}()
	return ch
}

func mustNew(t *testing.T, opts ...Option) *Queue {
	t.Helper()
	q, err := New(opts...)
	require.NoError(t, err)
	return q
}

func TestNew(t *testing.T) {
	tests := []struct {
		name       string
		opts       []Option
		wantOption string // "" = valid
	}{
		{name: "defaults"},
		{name: "nil option ignored", opts: []Option{nil}},
		{name: "unlimited in flight", opts: []Option{WithMaxInFlight(0)}},
		{name: "no line", opts: []Option{WithMaxWaiting(0)}},
		{name: "starvation one", opts: []Option{WithStarvationLimit(1)}},
		{name: "negative in flight", opts: []Option{WithMaxInFlight(-1)}, wantOption: "WithMaxInFlight"},
		{name: "negative waiting", opts: []Option{WithMaxWaiting(-5)}, wantOption: "WithMaxWaiting"},
		{name: "zero starvation", opts: []Option{WithStarvationLimit(0)}, wantOption: "WithStarvationLimit"},
		{name: "negative starvation", opts: []Option{WithStarvationLimit(-3)}, wantOption: "WithStarvationLimit"},
		{name: "last value wins", opts: []Option{WithMaxInFlight(-1), WithMaxInFlight(2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := New(tt.opts...)
			if tt.wantOption == "" {
				require.NoError(t, err)
				require.NotNil(t, q)
				return
			}
			require.Error(t, err)
			assert.Nil(t, q)
			assert.ErrorIs(t, err, ErrInvalidOption)
			var oe *OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tt.wantOption, oe.Option)
			assert.Contains(t, err.Error(), tt.wantOption)
		})
	}
}

func TestNewDefaults(t *testing.T) {
	q := mustNew(t)
	assert.Equal(t, DefaultMaxInFlight, q.maxInFlight)
	assert.Equal(t, DefaultMaxWaiting, q.maxWaiting)
	assert.Equal(t, DefaultStarvationLimit, q.starvation)
}

// TestFIFOArrivalOrder sends 1,000 concurrent requests through one place. Each joins the line only
// after the previous one is observed waiting, so arrival order is known; grants must follow it.
func TestFIFOArrivalOrder(t *testing.T) {
	const n = 1000
	synctest.Test(t, func(t *testing.T) {
		q := mustNew(t, WithMaxInFlight(1))
		hold, err := q.Acquire(t.Context())
		require.NoError(t, err)

		var rec recorder
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				rel, err := q.Acquire(t.Context())
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				rec.add(strconv.Itoa(i))
				rel()
			})
			synctest.Wait()
			require.Equal(t, i+1, q.Stats().Waiting, "request %d not waiting", i)
		}
		hold()
		wg.Wait()

		want := make([]string, n)
		for i := range want {
			want[i] = strconv.Itoa(i)
		}
		assert.Equal(t, want, rec.get())
		assert.Equal(t, Stats{Admitted: n + 1}, q.Stats())
	})
}

// TestCancelWhileWaiting cancels one of three waiters: it leaves at once, the others keep their
// order, and the place is not lost.
func TestCancelWhileWaiting(t *testing.T) {
	tests := []struct {
		name   string
		cancel int
		want   []string
	}{
		{name: "first", cancel: 0, want: []string{"1", "2"}},
		{name: "middle", cancel: 1, want: []string{"0", "2"}},
		{name: "last", cancel: 2, want: []string{"0", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := mustNew(t, WithMaxInFlight(1))
				hold, err := q.Acquire(t.Context())
				require.NoError(t, err)

				var rec recorder
				results := make([]<-chan error, 3)
				cancels := make([]context.CancelFunc, 3)
				for i := range 3 {
					ctx, cancel := context.WithCancel(t.Context())
					cancels[i] = cancel
					ch := make(chan error, 1)
					results[i] = ch
					go func() {
						rel, err := q.Acquire(ctx)
						if err == nil {
							rec.add(strconv.Itoa(i))
							rel()
						}
						ch <- err
					}()
					synctest.Wait()
				}
				cancels[tt.cancel]()
				synctest.Wait()
				select {
				case err := <-results[tt.cancel]:
					assert.ErrorIs(t, err, context.Canceled)
				default:
					t.Fatal("cancelled waiter did not return at once")
				}
				assert.Equal(t, Stats{Waiting: 2, InFlight: 1, Admitted: 1, Cancelled: 1}, q.Stats())

				hold()
				for i, ch := range results {
					if i != tt.cancel {
						assert.NoError(t, <-ch)
					}
				}
				assert.Equal(t, tt.want, rec.get())
				assert.Equal(t, Stats{Admitted: 3, Cancelled: 1}, q.Stats())
				for _, c := range cancels {
					c()
				}
			})
		})
	}
}

// TestDeadlineWhileWaiting checks that a waiter whose deadline passes returns exactly at the
// deadline (virtual time) and gives up its spot in line.
func TestDeadlineWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := mustNew(t, WithMaxInFlight(1))
		hold, err := q.Acquire(t.Context())
		require.NoError(t, err)
		defer hold()

		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err = q.Acquire(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 3*time.Second, time.Since(start))
		assert.Equal(t, Stats{InFlight: 1, Admitted: 1, Cancelled: 1}, q.Stats())
	})
}

// TestGrantedWhileCancelled grants a place to a waiter whose context was cancelled just before it
// could run: it must pass the place on to the next waiter and report the cancellation.
func TestGrantedWhileCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := mustNew(t, WithMaxInFlight(1))
		hold, err := q.Acquire(t.Context())
		require.NoError(t, err)

		ctxA, cancelA := context.WithCancel(t.Context())
		a := acquireAsync(q, ctxA)
		synctest.Wait()
		b := acquireAsync(q, t.Context())
		synctest.Wait()

		// Both happen before A runs again: A is granted the place and its context is done.
		cancelA()
		hold()
		synctest.Wait()

		ra := <-a
		assert.ErrorIs(t, ra.err, context.Canceled)
		rb := <-b
		require.NoError(t, rb.err)
		assert.Equal(t, Stats{InFlight: 1, Admitted: 2, Cancelled: 1}, q.Stats())
		rb.release()
		assert.Equal(t, Stats{Admitted: 2, Cancelled: 1}, q.Stats())
	})
}

func TestQueueFull(t *testing.T) {
	tests := []struct {
		name        string
		maxInFlight int
		maxWaiting  int
	}{
		{name: "no line", maxInFlight: 1, maxWaiting: 0},
		{name: "line of two", maxInFlight: 1, maxWaiting: 2},
		{name: "three places, line of one", maxInFlight: 3, maxWaiting: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := mustNew(t, WithMaxInFlight(tt.maxInFlight), WithMaxWaiting(tt.maxWaiting))
				var holds []func()
				for range tt.maxInFlight {
					rel, err := q.Acquire(t.Context())
					require.NoError(t, err)
					holds = append(holds, rel)
				}
				var waiters []<-chan result
				for range tt.maxWaiting {
					waiters = append(waiters, acquireAsync(q, t.Context()))
					synctest.Wait()
				}
				for _, p := range []Priority{Low, Normal, High} {
					_, err := q.Acquire(WithPriority(t.Context(), p))
					assert.ErrorIs(t, err, ErrQueueFull, "priority %v", p)
				}
				assert.Equal(t, Stats{Waiting: tt.maxWaiting, InFlight: tt.maxInFlight,
					Admitted: uint64(tt.maxInFlight), Refused: 3}, q.Stats())
				for _, h := range holds {
					h()
				}
				for _, w := range waiters {
					r := <-w
					require.NoError(t, r.err)
					r.release()
				}
				assert.Equal(t, 0, q.Stats().InFlight)
			})
		})
	}
}

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := mustNew(t, WithMaxInFlight(1))
		hold, err := q.Acquire(t.Context())
		require.NoError(t, err)
		var waiters []<-chan result
		for _, p := range []Priority{Low, Normal, High} {
			waiters = append(waiters, acquireAsync(q, WithPriority(t.Context(), p)))
		}
		synctest.Wait()
		require.Equal(t, 3, q.Stats().Waiting)

		require.NoError(t, q.Close())
		synctest.Wait()
		for _, w := range waiters {
			select {
			case r := <-w:
				assert.ErrorIs(t, r.err, ErrClosed)
			default:
				t.Fatal("waiter not woken by Close")
			}
		}
		_, err = q.Acquire(t.Context())
		assert.ErrorIs(t, err, ErrClosed)
		assert.NoError(t, q.Close(), "second Close")
		assert.Equal(t, Stats{InFlight: 1, Admitted: 1, Refused: 4}, q.Stats())

		hold()
		assert.Equal(t, Stats{Admitted: 1, Refused: 4}, q.Stats())
	})
}

func TestAcquireBadInput(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	var nilCtx context.Context
	var nilQueue *Queue
	tests := []struct {
		name string
		q    *Queue
		ctx  context.Context
		want error
	}{
		{name: "nil queue", q: nilQueue, ctx: context.Background(), want: ErrNilQueue},
		{name: "nil context", q: mustNew(t), ctx: nilCtx, want: ErrNilContext},
		{name: "cancelled context", q: mustNew(t), ctx: cancelled, want: context.Canceled},
		{name: "priority too high", q: mustNew(t), ctx: WithPriority(context.Background(), High+1), want: ErrInvalidPriority},
		{name: "priority too low", q: mustNew(t), ctx: WithPriority(context.Background(), Low-1), want: ErrInvalidPriority},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, err := tt.q.Acquire(tt.ctx)
			assert.ErrorIs(t, err, tt.want)
			require.NotNil(t, rel)
			rel() // a no-op, not a panic
			assert.Equal(t, Stats{}, tt.q.Stats())
		})
	}
	assert.NoError(t, nilQueue.Close())
}

// TestReleaseIdempotent releases one place twice: only one waiter may be served.
func TestReleaseIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := mustNew(t, WithMaxInFlight(1))
		hold, err := q.Acquire(t.Context())
		require.NoError(t, err)
		b := acquireAsync(q, t.Context())
		synctest.Wait()
		c := acquireAsync(q, t.Context())
		synctest.Wait()

		hold()
		hold()
		synctest.Wait()
		assert.Equal(t, Stats{Waiting: 1, InFlight: 1, Admitted: 2}, q.Stats())
		rb := <-b
		require.NoError(t, rb.err)
		rb.release()
		rc := <-c
		require.NoError(t, rc.err)
		rc.release()
		rc.release()
		assert.Equal(t, Stats{Admitted: 3}, q.Stats())
	})
}

func TestUnlimitedInFlight(t *testing.T) {
	q := mustNew(t, WithMaxInFlight(0), WithMaxWaiting(0))
	var rels []func()
	for range 500 {
		rel, err := q.Acquire(context.Background())
		require.NoError(t, err)
		rels = append(rels, rel)
	}
	assert.Equal(t, Stats{InFlight: 500, Admitted: 500}, q.Stats())
	for _, r := range rels {
		r()
	}
	assert.Equal(t, Stats{Admitted: 500}, q.Stats())
}

// TestConcurrentStress mixes acquisitions, cancellations and priorities under the race detector and
// checks the books balance: no place lost, none handed out twice.
func TestConcurrentStress(t *testing.T) {
	const workers, rounds, places = 32, 50, 3
	q := mustNew(t, WithMaxInFlight(places), WithMaxWaiting(workers), WithStarvationLimit(2))
	var mu sync.Mutex
	active, maxActive := 0, 0
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				ctx, cancel := context.WithCancel(WithPriority(context.Background(), Priority(w%3-1)))
				if r%5 == 0 {
					cancel() // sometimes already cancelled, sometimes racing below
				}
				go cancelSoon(cancel, r%7 == 0)
				rel, err := q.Acquire(ctx)
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						t.Errorf("unexpected error: %v", err)
					}
					cancel()
					continue
				}
				mu.Lock()
				active++
				maxActive = max(maxActive, active)
				mu.Unlock()
				mu.Lock()
				active--
				mu.Unlock()
				rel()
				cancel()
			}
		})
	}
	wg.Wait()
	s := q.Stats()
	assert.Equal(t, 0, s.InFlight)
	assert.Equal(t, 0, s.Waiting)
	assert.LessOrEqual(t, maxActive, places)
	assert.Equal(t, uint64(0), s.Refused)
}

// cancelSoon cancels at once when now is set; otherwise it leaves cancellation to the caller.
func cancelSoon(cancel context.CancelFunc, now bool) {
	if now {
		cancel()
	}
}
