package queue

import (
	"context"
	"fmt"
)

// Priority is a request's class in the waiting line. Its zero value is Normal. More important classes
// compare greater: Low < Normal < High.
type Priority int

// The priority classes.
const (
	// Low requests wait behind Normal and High ones, but are not starved (see the package documentation).
	Low Priority = -1
	// Normal is the priority of a request whose context carries none.
	Normal Priority = 0
	// High requests are served before Normal and Low ones.
	High Priority = 1
)

// numClasses is the number of priority classes; class indexes run from 0 (High) to numClasses-1 (Low).
const numClasses = 3

// valid reports whether p is one of High, Normal and Low.
func (p Priority) valid() bool { return p >= Low && p <= High }

// class returns the index of p's line: 0 for High, 1 for Normal, 2 for Low. p must be valid.
func (p Priority) class() int { return int(High - p) }

// String returns "high", "normal", "low", or "Priority(n)" for other values.
func (p Priority) String() string {
	switch p {
	case High:
		return "high"
	case Normal:
		return "normal"
	case Low:
		return "low"
	}
	return fmt.Sprintf("Priority(%d)", int(p))
}

type priorityKey struct{}

// WithPriority returns a copy of ctx that carries priority p for the queue. A value other than High,
// Normal or Low is stored as given, and Acquire (or Transport.RoundTrip) then fails with
// ErrInvalidPriority. A nil ctx is treated as context.Background().
func WithPriority(ctx context.Context, p Priority) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityFromContext returns the priority that WithPriority stored in ctx, or Normal when there is
// none (or ctx is nil).
func PriorityFromContext(ctx context.Context) Priority {
	if ctx == nil {
		return Normal
	}
	if p, ok := ctx.Value(priorityKey{}).(Priority); ok {
		return p
	}
	return Normal
}
