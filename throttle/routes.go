package throttle

import (
	"container/list"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/request"
)

// Routes and buckets.
//
// A host's quota is not always one quota. Discord gives each route a bucket that several routes
// share (X-RateLimit-Bucket); GitHub counts core, search and graphql requests against separate
// quotas (x-ratelimit-resource). The Transport learns which bucket a route belongs to from the
// responses (dialects.Bucket) and from then on paces that route's requests by the bucket's own key,
// BucketKey(key, bucket), with its own limiter and pause:
//
//   - a route is a request's method and URL path under its key (the key function's: host and
//     credential by default); the query is not part of it;
//   - a route not yet seen is paced by its key itself;
//   - the key's home bucket is the quota its own limiter learns: the API's primary quota when it
//     documents one (dialects.PrimaryBucket: GitHub's core), else the first bucket the key's
//     answers name. That bucket's partition shares the key's limiter (its pause is its own), so a
//     route moving to it starts from what was learned rather than from nothing (a limiter of its
//     own spent, in the first seconds, a quota the key's had spent already);
//   - an answer of another quota than the one a limiter learns is observed as ErrOtherBucket: by a
//     bucket's limiter, any other bucket's; by the key's, a side quota's when the API has a
//     primary one (GitHub's search answers are no evidence of core's);
//   - a key set in the request's context (request.WithKey) is used as it is, without routes;
//   - a throttle that says its scope is global (Discord's X-RateLimit-Global or
//     X-RateLimit-Scope: global) pauses the key and every bucket of it, not only the route.
//
// The route map is bounded (WithMaxRoutes), forgetting the least recently used route: a forgotten
// route is paced by its key again until its next response names its bucket.

// DefaultMaxRoutes is the number of routes a Throttle remembers the bucket of when WithMaxRoutes is
// not given: as many as the keys it holds (DefaultMaxKeys), so that every bucket it can hold state
// for can have a route mapped to it, at about 150 bytes a route (1.5 MB). A forgotten route costs
// one request paced by its key.
const DefaultMaxRoutes = DefaultMaxKeys

// BucketKey returns the key a Throttle paces the requests of bucket under key by: key, "|" and
// bucket (for example "discord.com#1f2e3d4c5b6a7988|abcd1234", or "api.github.com|search").
func BucketKey(key, bucket string) string { return key + "|" + bucket }

// routeKey is one route under a key.
type routeKey struct{ key, method, path string }

// route is one remembered route: the bucket key its requests are paced by.
type route struct {
	k         routeKey
	bucketKey string
}

// routes maps routes to bucket keys, least recently used first out. It is safe for concurrent use.
type routes struct {
	max int
	n   atomic.Int64 // len(m), read without the lock: no route learned costs no lock

	mu  sync.Mutex
	m   map[routeKey]*list.Element // of order, whose values are *route
	lru list.List                  // most recently used at the front
}

func routeOf(key string, req *http.Request) routeKey {
	m := req.Method
	if m == "" {
		m = http.MethodGet
	}
	return routeKey{key: key, method: m, path: req.URL.Path}
}

// lookup returns the bucket key of req's route under key, or key when the route has none.
func (r *routes) lookup(key string, req *http.Request) string {
	if r.n.Load() == 0 {
		return key
	}
	k := routeOf(key, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.m[k]
	if e == nil {
		return key
	}
	r.lru.MoveToFront(e)
	return e.Value.(*route).bucketKey
}

// learn records that req's route under key belongs to bucket, and returns the bucket's key.
func (r *routes) learn(key string, req *http.Request, bucket string) string {
	if r.max <= 0 {
		return BucketKey(key, bucket)
	}
	k := routeOf(key, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.m[k]; e != nil {
		rt := e.Value.(*route)
		if rt.bucketKey[len(key)+1:] != bucket {
			rt.bucketKey = BucketKey(key, bucket)
		}
		r.lru.MoveToFront(e)
		return rt.bucketKey
	}
	if r.m == nil {
		r.m = make(map[routeKey]*list.Element)
	}
	if len(r.m) >= r.max {
		if old := r.lru.Back(); old != nil {
			delete(r.m, r.lru.Remove(old).(*route).k)
		}
	}
	rt := &route{k: k, bucketKey: BucketKey(key, bucket)}
	r.m[k] = r.lru.PushFront(rt)
	r.n.Store(int64(len(r.m)))
	return rt.bucketKey
}

// KeyOf returns the key t paces req by, as its Transport does: the key request.WithKey set in
// req's context; else the bucket key of req's route (BucketKey) when a response named the route's
// bucket; else the key function's key (the host and a hash of the credential by default). It is
// safe for concurrent use.
func (t *Throttle) KeyOf(req *http.Request) string {
	key, _ := t.keys(req, request.From(req.Context()))
	return key
}

// keys returns the key req is paced by and the key function's key its route is mapped under; base
// is "" when the context named the key (no routes apply).
func (t *Throttle) keys(req *http.Request, set request.Settings) (key, base string) {
	if k, ok := set.Key(); ok {
		return k, ""
	}
	base = t.keyFunc(req)
	return t.routes.lookup(base, req), base
}

// pauseAll pauses base and every partition of a bucket of base until until (nanoseconds since the
// epoch): a throttle whose scope is the whole host. It marks base's partition, so that a bucket
// partition made afterwards (a route learned during the pause) sits the pause out too.
func (t *Throttle) pauseAll(base string, until int64) {
	t.mu.Lock()
	bp := t.lookup(base, "")
	var ps []*partition
	for _, p := range t.parts {
		if p.base == base {
			ps = append(ps, p)
		}
	}
	t.mu.Unlock()
	if bp != nil {
		bp.pause(until)
		bp.globalUntil.Store(max(bp.globalUntil.Load(), until))
	}
	for _, p := range ps {
		p.pause(until)
	}
}

// inheritGlobal pauses p, a partition of a bucket of base, for what remains of a global pause of
// base.
func (t *Throttle) inheritGlobal(p *partition, base string) {
	t.mu.RLock()
	bp := t.parts[base]
	t.mu.RUnlock()
	if bp == nil {
		return
	}
	if u := bp.globalUntil.Load(); u > t.since(time.Now()) {
		p.pause(u)
	}
}
