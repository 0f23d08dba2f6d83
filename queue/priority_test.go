package queue

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// arrival is one request joining the line: its name and priority.
type arrival struct {
	name string
	p    Priority
}

func arrivals(p Priority, prefix string, n int) []arrival {
	var a []arrival
	for i := 1; i <= n; i++ {
		a = append(a, arrival{prefix + strconv.Itoa(i), p})
	}
	return a
}

func concat(parts ...[]arrival) []arrival {
	var a []arrival
	for _, p := range parts {
		a = append(a, p...)
	}
	return a
}

// serveInOrder queues the arrivals one by one behind a held place on a one-place queue with
// starvation limit k, then frees the place and returns the order in which the arrivals were served.
func serveInOrder(t *testing.T, k int, in []arrival) []string {
	t.Helper()
	var order []string
	synctest.Test(t, func(t *testing.T) {
		q := mustNew(t, WithMaxInFlight(1), WithStarvationLimit(k))
		hold, err := q.Acquire(t.Context())
		require.NoError(t, err)
		var rec recorder
		var wg sync.WaitGroup
		for _, a := range in {
			wg.Go(func() {
				rel, err := q.Acquire(WithPriority(t.Context(), a.p))
				if err != nil {
					t.Errorf("%s: %v", a.name, err)
					return
				}
				rec.add(a.name)
				rel()
			})
			synctest.Wait()
		}
		require.Equal(t, len(in), q.Stats().Waiting)
		hold()
		wg.Wait()
		order = rec.get()
	})
	return order
}

func names(a []arrival) []string {
	var n []string
	for _, x := range a {
		n = append(n, x.name)
	}
	return n
}

func TestPriorityOrder(t *testing.T) {
	tests := []struct {
		name string
		k    int
		in   []arrival
		want []string
	}{
		{
			name: "FIFO within one class",
			k:    10,
			in:   arrivals(Normal, "N", 5),
			want: []string{"N1", "N2", "N3", "N4", "N5"},
		},
		{
			name: "high overtakes normal and low",
			k:    10,
			in:   []arrival{{"L1", Low}, {"N1", Normal}, {"H1", High}, {"N2", Normal}, {"H2", High}, {"L2", Low}},
			want: []string{"H1", "H2", "N1", "N2", "L1", "L2"},
		},
		{
			name: "default priority is normal",
			k:    10,
			in:   []arrival{{"L1", Low}, {"N1", Normal}},
			want: []string{"N1", "L1"},
		},
		{
			name: "low served after k highs",
			k:    2,
			in:   concat([]arrival{{"L1", Low}}, arrivals(High, "H", 5)),
			want: []string{"H1", "H2", "L1", "H3", "H4", "H5"},
		},
		{
			name: "k of every k+1 go to high while both wait",
			k:    2,
			in:   concat(arrivals(Low, "L", 3), arrivals(High, "H", 6)),
			want: []string{"H1", "H2", "L1", "H3", "H4", "L2", "H5", "H6", "L3"},
		},
		{
			name: "k=1 alternates",
			k:    1,
			in:   concat(arrivals(Normal, "N", 3), arrivals(High, "H", 3)),
			want: []string{"H1", "N1", "H2", "N2", "H3", "N3"},
		},
		{
			name: "two starved classes: least important first",
			k:    1,
			in:   []arrival{{"L1", Low}, {"N1", Normal}, {"H1", High}, {"H2", High}},
			want: []string{"H1", "L1", "N1", "H2"},
		},
		{
			name: "grants to normal count against low",
			k:    3,
			in:   concat(arrivals(Low, "L", 2), arrivals(Normal, "N", 4), arrivals(High, "H", 2)),
			want: []string{"H1", "H2", "N1", "L1", "N2", "N3", "N4", "L2"},
		},
		{
			name: "high grants do not count against an empty class",
			k:    2,
			in:   concat(arrivals(High, "H", 3), arrivals(Normal, "N", 1)),
			want: []string{"H1", "H2", "N1", "H3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, serveInOrder(t, tt.k, tt.in))
		})
	}
}

// TestStarvationBound checks the documented guarantee for several K: a Low request waiting among
// many High ones is served after exactly K High grants.
func TestStarvationBound(t *testing.T) {
	for _, k := range []int{1, 2, 5, 10, 20} {
		t.Run("k="+strconv.Itoa(k), func(t *testing.T) {
			in := concat(arrivals(High, "H", 2*k), []arrival{{"L1", Low}})
			order := serveInOrder(t, k, in)
			require.Len(t, order, len(in))
			// L1 arrived last, yet exactly k High requests are served before it.
			assert.Equal(t, "L1", order[k], "order %v", order)
			assert.ElementsMatch(t, names(in), order)
		})
	}
}

// TestStarvationCountResetsWhenLineEmpties: a class whose line empties (here by cancellation) starts
// counting afresh, so a newcomer does not inherit an earlier waiter's passed-over count.
func TestStarvationCountResetsWhenLineEmpties(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := mustNew(t, WithMaxInFlight(1), WithStarvationLimit(2))
		hold, err := q.Acquire(t.Context())
		require.NoError(t, err)

		// L1 waits and is passed over once by H1.
		ctxL1, cancelL1 := context.WithCancel(WithPriority(t.Context(), Low))
		l1 := acquireAsync(q, ctxL1)
		synctest.Wait()
		h1 := acquireAsync(q, WithPriority(t.Context(), High))
		synctest.Wait()
		hold()
		synctest.Wait()
		rh1 := <-h1
		require.NoError(t, rh1.err)
		require.Equal(t, 1, q.passed[Low.class()])

		// L1 leaves; Low's count starts afresh for L2.
		cancelL1()
		synctest.Wait()
		assert.ErrorIs(t, (<-l1).err, context.Canceled)
		assert.Equal(t, 0, q.passed[Low.class()])

		var rec recorder
		var wg sync.WaitGroup
		for _, a := range []arrival{{"L2", Low}, {"H2", High}, {"H3", High}, {"H4", High}} {
			wg.Go(func() {
				rel, err := q.Acquire(WithPriority(t.Context(), a.p))
				if err != nil {
					t.Errorf("%s: %v", a.name, err)
					return
				}
				rec.add(a.name)
				rel()
			})
			synctest.Wait()
		}
		rh1.release()
		wg.Wait()
		assert.Equal(t, []string{"H2", "H3", "L2", "H4"}, rec.get())
	})
}

func TestPriorityContext(t *testing.T) {
	var nilCtx context.Context
	tests := []struct {
		name string
		ctx  context.Context
		want Priority
	}{
		{name: "none", ctx: context.Background(), want: Normal},
		{name: "nil", ctx: nilCtx, want: Normal},
		{name: "high", ctx: WithPriority(context.Background(), High), want: High},
		{name: "low", ctx: WithPriority(context.Background(), Low), want: Low},
		{name: "innermost wins", ctx: WithPriority(WithPriority(context.Background(), High), Low), want: Low},
		{name: "nil parent", ctx: WithPriority(nilCtx, High), want: High},
		{name: "invalid kept as given", ctx: WithPriority(context.Background(), 7), want: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, PriorityFromContext(tt.ctx))
		})
	}
}

func TestPriorityString(t *testing.T) {
	tests := []struct {
		p    Priority
		want string
	}{
		{High, "high"}, {Normal, "normal"}, {Low, "low"}, {Priority(5), "Priority(5)"}, {Priority(-2), "Priority(-2)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.p.String())
	}
	assert.Equal(t, Normal, Priority(0), "zero value is Normal")
	assert.True(t, Low < Normal && Normal < High)
}
