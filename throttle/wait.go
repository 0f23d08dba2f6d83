package throttle

import (
	"context"
	"time"
)

// Wait blocks until l lets one request go. It is the blocking shorthand for l.Reserve(time.Now())
// followed by waiting until the reservation is due:
//   - it checks ctx first and returns ctx.Err() without reserving when ctx has already ended;
//   - it returns the limiter's refusal (such as *BacklogFullError) when Reserve fails;
//   - when the predicted wait ends after ctx's deadline it gives the reservation back and returns
//     *WouldExceedDeadlineError at once, instead of sleeping towards a certain failure;
//   - when ctx ends while waiting it gives the reservation back (later waiters move up) and
//     returns ctx.Err() at once.
//
// It follows the reservation when its time moves (Reservation.Changed). A nil l never waits.
// Wait starts no goroutine and is safe for concurrent use when l is.
func Wait(ctx context.Context, l Limiter) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if l == nil {
		return nil
	}
	now := time.Now()
	r, err := l.Reserve(now)
	if err != nil || r.Delay(now) == 0 {
		return err
	}
	_, late, err := await(ctx, r, nil, nil)
	if err == nil && late >= 0 {
		observeLateness(l, time.Now(), late)
	}
	return err
}

// observeLateness tells l that its reservation's waiter woke at now, late after the reservation's
// time, when l wants to know (LatenessLearner) and the waiter slept on a timer (late >= 0).
func observeLateness(l Limiter, now time.Time, late time.Duration) {
	if ll, ok := l.(LatenessLearner); ok && late >= 0 {
		ll.ObserveLateness(now, late)
	}
}

// pauseWatch reports a key's pause for await: a channel closed by the pause's next change (taken
// before the end is read, so that no change is missed) and the instant the pause ends (the zero
// time when the key is not paused).
type pauseWatch func() (changed <-chan struct{}, until time.Time)

// await waits until r is due. When the key is paused (pause, nil for none) and r would come due
// before the pause ends, it gives r back and reports paused: the caller waits the pause out and
// books again behind the requests already in line. A reservation that comes due when the pause is
// over keeps its place and is waited for, so that a pause costs the limiter only the slots inside
// it (a shared limiter can give back only its last slot: giving back every waiting one would lose
// them all and leave that much of the schedule idle after the pause). A positive maxWait() refuses
// a wait longer than it with *WaitTooLongError (Key unset); it is asked again whenever the
// reservation moves (a limiter that learns can start holding meanwhile). A nil maxWait bounds
// nothing. On any error r has been given back. late is how long after the reservation's time the
// waiter woke, when it slept on a timer until then, and -1 when it did not sleep (due at once, or
// woken by a move or a pause).
func await(ctx context.Context, r Reservation, pause pauseWatch, maxWait func() time.Duration) (paused bool, late time.Duration, err error) {
	late = -1
	var target time.Time
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		changed := r.Changed() // before Delay, so that no move is missed
		var pauseChanged <-chan struct{}
		var until time.Time
		if pause != nil {
			pauseChanged, until = pause()
		}
		now := time.Now()
		d := r.Delay(now)
		if until.After(now) && now.Add(d).Before(until) {
			r.Cancel(now)
			return true, -1, nil
		}
		if d <= 0 {
			if !target.IsZero() {
				late = max(now.Sub(target), 0)
			}
			return false, late, nil
		}
		if deadline, ok := ctx.Deadline(); ok && d > deadline.Sub(now) {
			r.Cancel(now)
			return false, -1, &WouldExceedDeadlineError{Wait: d}
		}
		if maxWait != nil {
			if m := maxWait(); m > 0 && d > m {
				r.Cancel(now)
				return false, -1, &WaitTooLongError{Wait: d, Max: m}
			}
		}
		target = now.Add(d)
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			r.Cancel(time.Now())
			return false, -1, ctx.Err()
		case <-pauseChanged: // look again: the reservation may now fall inside the pause
			target = time.Time{}
		case <-changed:
			target = time.Time{} // moved: the next sleep has a target of its own
		case <-timer.C:
		}
	}
}
