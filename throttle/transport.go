package throttle

import (
	"net/http"
	"time"

	"github.com/steadyhttp/steady/dialects"
	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/request"
)

// NewTransport returns an http.RoundTripper that passes every request (every attempt, when a retry
// layer sits above it) through t before handing it to next, and feeds every outcome back:
//
//  1. the request's key is the one request.WithKey set in its context, or else the key of the
//     bucket its route belongs to (see BucketKey), or else t's key function of it (the URL's host
//     and a hash of its credential by default); Throttle.KeyOf tells it;
//  2. it waits for the key (Throttle.Wait semantics, under the request's context): its pause, then
//     its limiter; request.WithMaxWait replaces WithMaxWait's maximum for the request, and
//     request.WithCost books that many units with a limiter that weighs requests (CostReserver);
//  3. it calls next.RoundTrip;
//  4. a response that names its quota's bucket (dialects.Bucket: Discord's X-RateLimit-Bucket,
//     GitHub's x-ratelimit-resource) maps the request's route to that bucket;
//  5. a refusal carrying Retry-After (of any status; typically 429 or 503) pauses the whole key for
//     that long (delay-seconds or an HTTP-date, measured against the response's Date header), so
//     the requests waiting behind it hold back too (at most WithMaxPause's maximum); the bucket
//     it named too (and that bucket alone when it is another quota than the one the key's limiter
//     learns: a spent GitHub search quota does not hold core's calls), and, when its scope is
//     global (Discord's X-RateLimit-Global), every bucket of the key;
//  6. if the key's Limiter implements Learner, it observes the outcome; an answer of another
//     quota than the one the limiter learns is observed as ErrOtherBucket (see routes.go).
//
// It never modifies the request. When it refuses a request without calling next (the context
// ended, the wait would pass the deadline, a full backlog, ErrTooManyKeys, per-request settings
// that match request.ErrInvalid) it closes the request
// body and returns the error with a nil response; otherwise it returns exactly what next
// returned. A nil next means http.DefaultTransport; a nil t means a Throttle from New() with no
// options (no pace, Retry-After pauses per host). The RoundTripper is safe for concurrent use and
// starts no goroutines.
func NewTransport(next http.RoundTripper, t *Throttle) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if t == nil {
		t, _ = New() // cannot fail without options
	}
	return &transport{next: next, t: t}
}

type transport struct {
	next http.RoundTripper
	t    *Throttle
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, _, err := tr.RoundTripStartedAt(req)
	return resp, err
}

// RoundTripStartedAt is RoundTrip that also returns when it began the attempt, before its wait
// (startedat.RoundTripper): the retry layer above takes a request's start from it rather than read
// the clock again.
func (tr *transport) RoundTripStartedAt(req *http.Request) (*http.Response, time.Time, error) {
	if req.URL == nil {
		closeBody(req)
		return nil, time.Time{}, ErrNilRequestURL
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, time.Time{}, err
	}
	set := request.From(ctx)
	if err := set.Err(); err != nil {
		closeBody(req)
		return nil, time.Time{}, err
	}
	key, base := tr.t.keys(req, set)
	maxWait, ok := set.MaxWait()
	if !ok {
		maxWait = tr.t.maxWait
	}
	p, err := tr.t.acquire(key, base)
	if err != nil {
		closeBody(req)
		return nil, time.Time{}, err
	}
	defer p.refs.Add(-1)
	if p.base != "" {
		tr.t.inheritGlobal(p, base)
	}
	var began time.Time // the wait's first reading of the clock, when it read one
	if tr.t.onWait != nil {
		began = tr.t.clock.Now()
	}
	blocked, sent, err := tr.t.waitBlocked(ctx, p, maxWait, costOf(set), &began)
	if err != nil {
		closeBody(req)
		return nil, began, err
	}
	if blocked && tr.t.onWait != nil {
		tr.t.onWait(req, key, time.Since(began))
	}
	// sent: when the attempt leaves, the instant the wait let it go, read once.
	if p.attempts == nil {
		sent = time.Time{}
	} else if sent.IsZero() {
		sent = tr.t.clock.Now()
	}
	if began.IsZero() { // no wait read the clock: the attempt begins now
		if began = sent; began.IsZero() {
			// The request path's clock, as the wait's: time.Now reads the wall clock too.
			began = tr.t.clock.Now()
		}
	}
	resp, err := tr.next.RoundTrip(req)
	tr.t.observe(p, base, req, sent, resp, err)
	return resp, began, err
}

// observe applies an attempt's outcome to its partition: the bucket its response names (the route
// is mapped to it, see routes.go), then Retry-After, then the Learner (sent is when the attempt
// left, read only for an AttemptLearner). base is the key function's key of req, "" when its
// context named the key.
func (t *Throttle) observe(p *partition, base string, req *http.Request, sent time.Time, resp *http.Response, err error) {
	var now time.Time
	lresp, lerr := resp, err // what the learner observes
	if resp != nil {
		bucketKey := p.key
		if base != "" {
			if b := dialects.Bucket(resp); b != "" {
				primary := dialects.PrimaryBucket(resp)
				if p.key == base && !p.homeSet.Load() && (primary == "" || b == primary) {
					t.setHome(p, b) // before the route maps to it: see acquire
				}
				bucketKey = t.routes.learn(base, req, b)
				if !learnsBucket(p, base, bucketKey, b, primary) {
					lresp, lerr = nil, ErrOtherBucket
				}
			}
		}
		var d time.Duration
		global := false
		if resp.StatusCode >= 400 {
			// A refusal is read as its API means it (package dialects): a throttle that says
			// when to come back (Retry-After, retry-after-ms, GitHub's reset of a used-up
			// quota) pauses the key, and so does a Retry-After on any other refusal (a 503).
			// A Retry-After on a success is no refusal: a 202's says when to poll its
			// operation, and pauses nothing.
			_, has := resp.Header[ratelimitheader.HeaderRetryAfter]
			now = time.Now()
			if r := dialects.Read(resp, now); r.HasRetryAfter && (r.Throttled || has) {
				d = r.RetryAfter
				global = r.Scope == dialects.ScopeGlobal && base != ""
			}
		}
		if d > 0 && t.hasMaxPause {
			d = min(d, t.maxPause)
		}
		if d > 0 {
			until := t.since(now.Add(d))
			if lerr != ErrOtherBucket {
				// Not when the answer is another quota's: GitHub's search limit spent says
				// nothing of core's, whose calls the key paces (the bucket holds, below).
				p.pause(until)
			}
			switch {
			case global:
				t.pauseAll(base, until)
			case p.sharesBase && bucketKey == p.key:
				// The home bucket: its key paces the routes not seen yet, which count against
				// the same quota (GitHub's core calls on paths never seen before).
				t.mu.Lock()
				bp := t.lookup(p.base, "")
				t.mu.Unlock()
				if bp != nil {
					bp.pause(until)
				}
			case bucketKey != p.key:
				// A route paced by its key until now: the bucket its response named holds back
				// too (the route's next requests are paced by it).
				t.mu.Lock()
				bp := t.lookup(bucketKey, base)
				t.mu.Unlock()
				if bp != nil {
					bp.pause(until)
				}
			}
		}
	}
	if p.learner != nil {
		switch {
		case !now.IsZero():
		case !sent.IsZero():
			// The answer's time as the send's plus the round trip on the monotonic clock: half
			// the cost of a full reading (time.Since reads the monotonic clock alone), and the
			// same instant but for a step of the wall clock during the round trip.
			now = sent.Add(time.Since(sent))
		default:
			now = time.Now()
		}
		if p.attempts != nil {
			p.attempts.ObserveAttempt(sent, now, lresp, lerr)
			return
		}
		p.learner.Observe(now, lresp, lerr)
	}
}

// learnsBucket reports whether p's limiter learns the quota of bucket b under base, whose key is
// bucketKey (primary: the API's primary bucket, "" when it has none). A bucket's partition learns
// its own bucket's. The key's own partition learns every answer of an API without a primary quota
// (the routes it paces are those not seen yet, whatever their buckets), and of one with a primary
// quota only that quota's: GitHub's search answers are no evidence of core's.
func learnsBucket(p *partition, base, bucketKey, b, primary string) bool {
	if p.key != base {
		return p.key == bucketKey
	}
	return primary == "" || b == primary
}

// setHome makes b the home of p, a key's own partition, unless it has one.
func (t *Throttle) setHome(p *partition, b string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p.home == "" {
		p.home = b
		p.homeSet.Store(true)
	}
}

// CloseIdleConnections closes the idle connections of the next RoundTripper, if it can, so that
// http.Client.CloseIdleConnections reaches through the throttle.
func (tr *transport) CloseIdleConnections() {
	if c, ok := tr.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
