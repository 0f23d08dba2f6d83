package otelsteady

import (
	"context"
	"errors"
	"net"

	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/queue"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/throttle"
)

// ErrInvalidOption is matched (errors.Is) by New's error for an unusable Option; the text names it.
var ErrInvalidOption = errors.New("otelsteady: invalid option")

// errorType is the error.type attribute value of an attempt's error: a short name for the stack's
// own refusals and the common network failures, else the error's Go type (semconv.ErrorType).
// Its values are bounded by the code, never by the data.
func errorType(err error) string {
	switch {
	case errors.Is(err, retry.ErrAttemptTimeout):
		return "attempt_timeout"
	case errors.Is(err, breaker.ErrCircuitOpen):
		return "circuit_open"
	case errors.Is(err, throttle.ErrWaitTooLong):
		return "wait_too_long"
	case errors.Is(err, throttle.ErrBacklogFull):
		return "backlog_full"
	case errors.Is(err, throttle.ErrTooManyKeys):
		return "too_many_keys"
	case errors.Is(err, queue.ErrQueueFull):
		return "queue_full"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return "dial"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return semconv.ErrorType(err).Value.AsString()
}

// causeName is the steady.cause attribute value of a give-up: which rule of the retry layer ended
// the retries.
func causeName(cause error) string {
	switch {
	case errors.Is(cause, retry.ErrAttemptsExhausted):
		return "attempts_exhausted"
	case errors.Is(cause, retry.ErrBudgetExhausted):
		return "budget_exhausted"
	case errors.Is(cause, retry.ErrNotReplayable):
		return "not_replayable"
	case errors.Is(cause, retry.ErrNotIdempotent):
		return "not_idempotent"
	case errors.Is(cause, retry.ErrRetryAfterTooLong):
		return "retry_after_too_long"
	case errors.Is(cause, retry.ErrWouldExceedDeadline):
		return "would_exceed_deadline"
	case errors.Is(cause, retry.ErrMaxElapsed):
		return "max_elapsed"
	case errors.Is(cause, context.Canceled):
		return "canceled"
	case errors.Is(cause, context.DeadlineExceeded):
		return "deadline_exceeded"
	}
	return "other"
}
