package breaker

import (
	"context"
	"net/http"
	"time"

	"github.com/steadyhttp/steady/request"
)

// NewTransport returns an http.RoundTripper that passes each request through b's circuit for its
// key (request.WithKey's key, else b's key function of it) before handing it to next (nil:
// http.DefaultTransport), and records the outcome:
//
//   - a closed circuit lets the request go; a half-open one lets it go as a probe while probe
//     places are free;
//   - otherwise, in Pause mode the request waits until the circuit lets it go (refusing at once
//     with *OpenError when its context's deadline comes before the cool-down ends, and returning
//     the context's error when the context ends while waiting); in FailFast mode it fails at once
//     with *OpenError;
//   - the outcome (b's classifier of the response or error) is recorded when next returns.
//
// It never modifies the request, closes its body when it refuses it without calling next, and
// otherwise returns exactly what next returned. It is safe for concurrent use and starts no
// goroutines.
func NewTransport(next http.RoundTripper, b *Breaker) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{next: next, b: b}
}

type transport struct {
	next http.RoundTripper
	b    *Breaker
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	set := request.From(ctx)
	if err := set.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	key, ok := set.Key()
	if !ok {
		key = tr.b.cfg.keyFunc(req)
	}
	t, err := tr.b.Wait(ctx, key)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := tr.next.RoundTrip(req)
	o := tr.b.cfg.classifier(resp, err)
	if o != Ignored && ctx.Err() != nil {
		o = Ignored // the caller gave up: whatever came back says nothing about the server
	}
	t.Record(time.Now(), o)
	return resp, err
}

// Wait returns a Ticket for a request for key as soon as the circuit lets it go: at once when
// closed, or as a probe when half-open with a place free. When the circuit is open or its probe
// places are taken it fails at once with *OpenError in FailFast mode; in Pause mode it waits,
// refusing with *OpenError at once when ctx's deadline comes before the cool-down ends and
// returning ctx.Err() when ctx ends while waiting. It checks ctx first.
func (b *Breaker) Wait(ctx context.Context, key string) (Ticket, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return Ticket{}, err
		}
		now := time.Now()
		t, changed, err := b.allow(key, now)
		if err == nil || b.cfg.mode == FailFast {
			return t, err
		}
		var due <-chan time.Time
		if oe := err.(*OpenError); oe.State == Open {
			d := oe.Until.Sub(now)
			if deadline, ok := ctx.Deadline(); ok && deadline.Before(oe.Until) {
				return Ticket{}, err
			}
			if timer == nil {
				timer = time.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			due = timer.C
		}
		select {
		case <-ctx.Done():
			return Ticket{}, ctx.Err()
		case <-changed:
		case <-due:
		}
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
