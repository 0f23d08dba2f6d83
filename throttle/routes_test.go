package throttle

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/request"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// send sends one request for method and rawURL with an Authorization header (none when auth is
// "") through rt, and returns the status.
func send(t *testing.T, ctx context.Context, rt http.RoundTripper, method, rawURL, auth string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, rawURL, nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// The default key is the owner of the quota: the host and a hash of the credential. Two tokens on
// one host are two keys, neither carries the secret, and a context key overrides both.
func TestDefaultKeyIsTheCredential(t *testing.T) {
	th, err := New()
	require.NoError(t, err)
	req := func(auth string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, "https://API.example.com/v1/x", nil)
		require.NoError(t, err)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		return r
	}
	a, b, none := th.KeyOf(req("Bearer sk-alpha")), th.KeyOf(req("Bearer sk-beta")), th.KeyOf(req(""))
	assert.Equal(t, "api.example.com", none)
	assert.True(t, strings.HasPrefix(a, "api.example.com#"), a)
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, th.KeyOf(req("Bearer sk-alpha")), "stable")
	for _, k := range []string{a, b} {
		assert.NotContains(t, k, "alpha")
		assert.NotContains(t, k, "beta")
	}
	r := req("Bearer sk-alpha")
	assert.Equal(t, "tenant-7", th.KeyOf(r.WithContext(request.WithKey(r.Context(), "tenant-7"))))

	// The two credentials are paced apart: a pause of one leaves the other alone.
	synctest.Test(t, func(t *testing.T) {
		th, err := New()
		require.NoError(t, err)
		rt := NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Header.Get("Authorization") == "Bearer sk-alpha" {
				return response(429, http.Header{"Retry-After": {"10"}}), nil
			}
			return response(200, nil), nil
		}), th)
		ctx := context.Background()
		assert.Equal(t, 429, send(t, ctx, rt, "GET", "https://api.example.com/v1/x", "Bearer sk-alpha"))
		start := time.Now()
		assert.Equal(t, 200, send(t, ctx, rt, "GET", "https://api.example.com/v1/x", "Bearer sk-beta"))
		assert.Zero(t, time.Since(start), "the other credential is not paused")
		assert.False(t, th.PausedUntil(a).IsZero(), "the throttled credential is paused")
	})
}

// discordServer answers as Discord's per-route buckets do: /a and /b share bucket "shared", /c
// has its own; /c?throttle is a 429 that names its bucket, and /g is the global limit.
func discordServer(r *http.Request) (*http.Response, error) {
	h := http.Header{"X-Ratelimit-Limit": {"5"}, "X-Ratelimit-Remaining": {"4"}, "X-Ratelimit-Reset-After": {"1"}}
	switch r.URL.Path {
	case "/a", "/b":
		h.Set("X-Ratelimit-Bucket", "shared")
	case "/c":
		h.Set("X-Ratelimit-Bucket", "own")
		if r.URL.Query().Has("throttle") {
			h.Set("X-Ratelimit-Remaining", "0")
			h.Set("Retry-After", "3")
			return response(429, h), nil
		}
	case "/g":
		return response(429, http.Header{"X-Ratelimit-Global": {"true"}, "X-Ratelimit-Scope": {"global"}, "Retry-After": {"5"}}), nil
	}
	return response(200, h), nil
}

// Routes map to the buckets their responses name: unseen routes use the key, seen ones their
// bucket's key; a bucket's pause holds its routes only; a global throttle pauses every route.
func TestRoutesFollowBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th, err := New()
		require.NoError(t, err)
		rt := NewTransport(roundTripFunc(discordServer), th)
		ctx := context.Background()
		const host = "https://discord.test"
		key := func(method, path string) string {
			r, err := http.NewRequest(method, host+path, nil)
			require.NoError(t, err)
			return th.KeyOf(r)
		}
		assert.Equal(t, "discord.test", key("GET", "/a"), "an unseen route uses the host's key")
		send(t, ctx, rt, "GET", host+"/a", "")
		send(t, ctx, rt, "GET", host+"/b?x=1", "")
		send(t, ctx, rt, "GET", host+"/c", "")
		assert.Equal(t, BucketKey("discord.test", "shared"), key("GET", "/a"))
		assert.Equal(t, BucketKey("discord.test", "shared"), key("GET", "/b"), "routes share a bucket")
		assert.Equal(t, BucketKey("discord.test", "own"), key("GET", "/c"))
		assert.Equal(t, "discord.test", key("DELETE", "/a"), "a method is a route of its own")

		// A throttle on bucket "own" holds its route, not the other bucket's nor an unseen route.
		start := time.Now()
		assert.Equal(t, 429, send(t, ctx, rt, "GET", host+"/c?throttle", ""))
		assert.Equal(t, 200, send(t, ctx, rt, "GET", host+"/a", ""))
		assert.Equal(t, 200, send(t, ctx, rt, "GET", host+"/new", ""))
		assert.Zero(t, time.Since(start))
		assert.Equal(t, 200, send(t, ctx, rt, "GET", host+"/c", ""))
		assert.Equal(t, 3*time.Second, time.Since(start), "the bucket sat out its Retry-After")

		// A global throttle pauses every route of the host, buckets and unseen routes
		// alike.
		start = time.Now()
		assert.Equal(t, 429, send(t, ctx, rt, "GET", host+"/g", ""))
		for _, p := range []string{"/a", "/c", "/other"} {
			assert.Equal(t, 200, send(t, ctx, rt, "GET", host+p, ""))
			assert.Equal(t, 5*time.Second, time.Since(start), p)
		}
	})
}

// A bucket first named by a throttle: the bucket holds (the route is paced by it from now on), and
// so does the key that paced the request.
func TestRouteLearnedFromAThrottle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th, err := New()
		require.NoError(t, err)
		rt := NewTransport(roundTripFunc(discordServer), th)
		ctx := context.Background()
		start := time.Now()
		assert.Equal(t, 429, send(t, ctx, rt, "GET", "https://discord.test/c?throttle", ""))
		assert.False(t, th.PausedUntil(BucketKey("discord.test", "own")).IsZero())
		assert.False(t, th.PausedUntil("discord.test").IsZero())
		assert.Equal(t, 200, send(t, ctx, rt, "GET", "https://discord.test/c", ""))
		assert.Equal(t, 3*time.Second, time.Since(start))
	})
}

// GitHub's resources are separate quotas: search and core routes get their own keys.
func TestGitHubResourcesAreBuckets(t *testing.T) {
	th, err := New()
	require.NoError(t, err)
	rt := NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		res := "core"
		if strings.HasPrefix(r.URL.Path, "/search/") {
			res = "search"
		}
		return response(200, http.Header{"X-Ratelimit-Limit": {"30"}, "X-Ratelimit-Resource": {res}, "X-Github-Request-Id": {"1"}}), nil
	}), th)
	ctx := context.Background()
	send(t, ctx, rt, "GET", "https://api.github.test/search/code?q=x", "token ghp_secret")
	send(t, ctx, rt, "GET", "https://api.github.test/repos/o/r", "token ghp_secret")
	r1, _ := http.NewRequest("GET", "https://api.github.test/search/code?q=y", nil)
	r1.Header.Set("Authorization", "token ghp_secret")
	r2, _ := http.NewRequest("GET", "https://api.github.test/repos/o/r", nil)
	r2.Header.Set("Authorization", "token ghp_secret")
	base := th.keyFunc(r1)
	assert.Equal(t, BucketKey(base, "search"), th.KeyOf(r1))
	assert.Equal(t, BucketKey(base, "core"), th.KeyOf(r2))
	assert.NotContains(t, th.KeyOf(r1), "ghp_secret")
}

// The route map is bounded, least recently used first out, and 0 remembers none.
func TestRoutesBounded(t *testing.T) {
	th, err := New(WithMaxRoutes(2))
	require.NoError(t, err)
	rt := NewTransport(roundTripFunc(discordServer), th)
	ctx := context.Background()
	key := func(path string) string {
		r, _ := http.NewRequest("GET", "https://discord.test"+path, nil)
		return th.KeyOf(r)
	}
	send(t, ctx, rt, "GET", "https://discord.test/a", "")
	send(t, ctx, rt, "GET", "https://discord.test/b", "")
	assert.Equal(t, BucketKey("discord.test", "shared"), key("/a")) // /a is now the newest
	send(t, ctx, rt, "GET", "https://discord.test/c", "")
	assert.Equal(t, 2, len(th.routes.m))
	assert.Equal(t, "discord.test", key("/b"), "the least recently used route is forgotten")
	assert.Equal(t, BucketKey("discord.test", "shared"), key("/a"))
	assert.Equal(t, BucketKey("discord.test", "own"), key("/c"))

	none, err := New(WithMaxRoutes(0))
	require.NoError(t, err)
	send(t, ctx, NewTransport(roundTripFunc(discordServer), none), "GET", "https://discord.test/a", "")
	r, _ := http.NewRequest("GET", "https://discord.test/a", nil)
	assert.Equal(t, "discord.test", none.KeyOf(r))

	_, err = New(WithMaxRoutes(-1))
	assert.ErrorIs(t, err, ErrInvalidOption)
}

// Routes are learned and looked up from many goroutines at once (run with -race), and the map
// never holds more than its bound.
func TestRoutesConcurrent(t *testing.T) {
	th, err := New(WithMaxRoutes(16))
	require.NoError(t, err)
	rt := NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return response(200, http.Header{"X-Ratelimit-Bucket": {"b" + r.URL.Path[len(r.URL.Path)-1:]}}), nil
	}), th)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				send(t, context.Background(), rt, "GET", fmt.Sprintf("https://d.test/r%d/%d", (g*200+i)%40, i%10), "")
			}
		})
	}
	wg.Wait()
	th.routes.mu.Lock()
	defer th.routes.mu.Unlock()
	assert.LessOrEqual(t, len(th.routes.m), 16)
	assert.Equal(t, len(th.routes.m), th.routes.lru.Len(), "the list and the map agree")
	for e := th.routes.lru.Front(); e != nil; e = e.Next() {
		assert.Same(t, e, th.routes.m[e.Value.(*route).k], "every listed route is mapped to its element")
	}
}

// recordingLimiters returns a limiter factory whose limiters record what they observe, each
// appended to made as it is made.
func recordingLimiters(t *testing.T, made *[]*learningLimiter) func(string) (Limiter, error) {
	return func(string) (Limiter, error) {
		tb, err := NewTokenBucket(1000, 10)
		require.NoError(t, err)
		l := &learningLimiter{Limiter: tb}
		*made = append(*made, l)
		return l, nil
	}
}

// Without a primary quota (Discord's buckets are per route), the first bucket a key's own answers
// name is its home: that bucket's routes share the key's limiter (one made, not two), the key's
// limiter goes on learning from every route it paces (those not seen yet), and another bucket gets
// a limiter of its own that learns from its own answers.
func TestHomeBucketSharesTheKeysLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var made []*learningLimiter
		th := newThrottle(t, WithLimiter(recordingLimiters(t, &made)))
		rt := NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := discordServer(r)
			resp.Status = "200 OK"
			return resp, err
		}), th)
		ctx := context.Background()
		const host = "https://discord.test"
		send(t, ctx, rt, "GET", host+"/a", "") // paced by the host's key; names "shared": its home
		require.Len(t, made, 1)
		send(t, ctx, rt, "GET", host+"/a", "") // paced by the bucket's key, with the host's limiter
		send(t, ctx, rt, "GET", host+"/c", "") // an unseen route, paced by the host's key; names "own"
		send(t, ctx, rt, "GET", host+"/c", "") // paced by "own"'s key: a limiter of its own
		require.Len(t, made, 2, "the home bucket made no limiter of its own")
		assert.Same(t, th.Limiter("discord.test"), th.Limiter(BucketKey("discord.test", "shared")))
		assert.Same(t, made[1], th.Limiter(BucketKey("discord.test", "own")))
		assert.Equal(t, []string{"200 OK", "200 OK", "200 OK"}, made[0].seen)
		assert.Equal(t, []string{"200 OK"}, made[1].seen)
	})
}

// GitHub's core is its primary quota: it is the key's home whichever resource answers first, the
// key's limiter learns only core's answers (a search answer to a route it paced is ErrOtherBucket:
// 30 a minute is no evidence of 5,000 an hour), and search gets a limiter of its own.
func TestGitHubCoreIsTheKeysHome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var made []*learningLimiter
		th := newThrottle(t, WithLimiter(recordingLimiters(t, &made)))
		rt := NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			res := "core"
			if strings.HasPrefix(r.URL.Path, "/search/") {
				res = "search"
			}
			resp := response(200, http.Header{"X-Ratelimit-Limit": {"30"}, "X-Ratelimit-Resource": {res}, "X-Github-Request-Id": {"1"}})
			resp.Status = "200 " + res
			return resp, nil
		}), th)
		ctx := context.Background()
		const host = "https://api.github.test"
		send(t, ctx, rt, "GET", host+"/search/code", "") // first: a search, paced by the key
		send(t, ctx, rt, "GET", host+"/repos/o/r/issues/1", "")
		send(t, ctx, rt, "GET", host+"/repos/o/r/issues/1", "") // its route now maps to core: the key's limiter
		send(t, ctx, rt, "GET", host+"/search/code", "")        // maps to search: a limiter of its own
		send(t, ctx, rt, "GET", host+"/search/issues", "")      // an unseen search route, paced by the key
		require.Len(t, made, 2)
		base := "api.github.test"
		assert.Same(t, th.Limiter(base), th.Limiter(BucketKey(base, "core")))
		assert.Same(t, made[1], th.Limiter(BucketKey(base, "search")))
		other := "error: " + ErrOtherBucket.Error()
		assert.Equal(t, []string{other, "200 core", "200 core", other}, made[0].seen)
		assert.Equal(t, []string{"200 search"}, made[1].seen)
	})
}

// A throttle on the home bucket pauses its key too: the routes not seen yet, paced by the key,
// count against the same quota (GitHub's primary limit, a 403 with nothing remaining until its
// reset).
func TestHomeBucketPauseHoldsTheKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t, WithLimiter(func(string) (Limiter, error) { return NewTokenBucket(1000, 10) }))
		throttled := false
		rt := NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{"X-Github-Request-Id": {"1"}, "X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Resource": {"core"}}
			if throttled {
				h.Set("X-Ratelimit-Remaining", "0")
				h.Set("X-Ratelimit-Reset", strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
				return response(http.StatusForbidden, h), nil
			}
			h.Set("X-Ratelimit-Remaining", "59")
			return response(http.StatusOK, h), nil
		}), th)
		ctx := context.Background()
		const host = "https://api.github.test"
		send(t, ctx, rt, "GET", host+"/repos/o/r", "") // names core: the home, its route mapped
		throttled = true
		assert.Equal(t, http.StatusForbidden, send(t, ctx, rt, "GET", host+"/repos/o/r", "")) // paced by the home bucket
		assert.False(t, th.PausedUntil(BucketKey("api.github.test", "core")).IsZero())
		assert.False(t, th.PausedUntil("api.github.test").IsZero(), "the key's unseen routes count against the same quota")
	})
}

// A throttle of GitHub's search quota, answering a search route the key paced (one not seen yet),
// holds the search bucket and not the key: core's calls go on.
func TestOtherQuotasPauseIsNotTheKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t, WithLimiter(func(string) (Limiter, error) { return NewTokenBucket(1000, 10) }))
		rt := NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{"X-Github-Request-Id": {"1"}, "X-Ratelimit-Limit": {"30"}}
			if strings.HasPrefix(r.URL.Path, "/search/") {
				h.Set("X-Ratelimit-Resource", "search")
				h.Set("X-Ratelimit-Remaining", "0")
				h.Set("X-Ratelimit-Reset", strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
				return response(http.StatusForbidden, h), nil
			}
			h.Set("X-Ratelimit-Resource", "core")
			h.Set("X-Ratelimit-Remaining", "29")
			return response(http.StatusOK, h), nil
		}), th)
		ctx := context.Background()
		const host = "https://api.github.test"
		send(t, ctx, rt, "GET", host+"/repos/o/r", "") // core: the key's home
		assert.Equal(t, http.StatusForbidden, send(t, ctx, rt, "GET", host+"/search/code", ""))
		assert.False(t, th.PausedUntil(BucketKey("api.github.test", "search")).IsZero(), "the search bucket holds")
		assert.True(t, th.PausedUntil("api.github.test").IsZero(), "the key, core's, does not")
		start := time.Now()
		assert.Equal(t, http.StatusOK, send(t, ctx, rt, "GET", host+"/repos/o/r/issues/1", ""))
		assert.Zero(t, time.Since(start), "a core call on a route not seen yet goes at once")
	})
}
