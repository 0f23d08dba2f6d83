package redisstore

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// admitsExactly applies requests of one check (a token bucket of limit per hour on key) at
// Redis's time and fails unless the first limit are admitted and the next one is not, every one
// decided by Redis.
func admitsExactly(t *testing.T, st *Store, key string, limit int64, beforeEach func(i int64)) {
	t.Helper()
	tb := mustAlg(t, algorithm.NameTokenBucket, limit, time.Hour, 0)
	before := st.Counters()
	for i := range limit + 1 {
		if beforeEach != nil {
			beforeEach(i)
		}
		d := apply(t, st, time.Now(), testserver.StoreCheck{Rule: "r", Scope: "s", Key: key, N: 1, Algorithm: tb})[0]
		if want := i < limit; d.Decision.Allowed != want {
			t.Fatalf("request %d of a limit of %d: allowed %t, want %t (%+v)", i+1, limit, d.Decision.Allowed, want, d.Decision)
		}
	}
	c := st.Counters()
	if c.Decided-before.Decided != limit+1 || c.Errors != before.Errors || c.Fallback+c.FailOpen+c.FailClosed != 0 {
		t.Fatalf("not every decision from Redis: before %+v, after %+v", before, c)
	}
}

// TestLibraryLost: when Redis loses the library under a store (FUNCTION FLUSH here; a restart
// without its data does the same), the decision that finds its function missing is still made by
// Redis (by EVAL), the next ones run the scripts, and the heartbeat loads the library again, after
// which decisions call its functions. The state is the keys', not the library's: the limit holds
// across the loss.
func TestLibraryLost(t *testing.T) {
	srv := startRedis(t)
	const retry = 20 * time.Millisecond // the heartbeat's period
	st := openStore(t, srv.URL(), WithRetryInterval(retry))
	if !st.fcall.Load() {
		t.Skip("this Redis has no functions (before Redis 7)")
	}
	rdb := newClient(t, srv.URL())
	if err := rdb.ConfigResetStat(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	admitsExactly(t, st, "k", 4, func(i int64) {
		if i == 2 {
			if err := rdb.FunctionFlush(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
		}
	})
	for deadline := time.Now().Add(10 * time.Second); !st.fcall.Load(); time.Sleep(retry) {
		if time.Now().After(deadline) {
			t.Fatal("the library not loaded again 10 s after it was lost")
		}
	}
	// The decision that found its function missing ran by EVAL.
	stats, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil || !strings.Contains(stats, "cmdstat_eval:calls=") {
		t.Fatalf("no EVAL after the library was lost: %v\n%s", err, stats)
	}
	libs, err := rdb.FunctionList(context.Background(), redis.FunctionListQuery{LibraryNamePattern: library.name}).Result()
	if err != nil || len(libs) != 1 {
		t.Fatalf("FUNCTION LIST %s: %v, %v", library.name, libs, err)
	}
	admitsExactly(t, st, "k2", 2, nil)
}

// TestWithoutFunctions: a Redis that refuses the library (here an ACL user without FUNCTION; the
// same as a Redis before 7, which has no functions) gets the scripts: the store decides by
// EVALSHA, exactly as by FCALL.
func TestWithoutFunctions(t *testing.T) {
	srv := startRedis(t)
	rdb := newClient(t, srv.URL())
	if err := rdb.Do(context.Background(), "ACL", "SETUSER", "nofunctions", "on", ">pw", "~*", "&*", "+@all", "-function").Err(); err != nil {
		t.Fatal(err)
	}
	url := strings.Replace(srv.URL(), "redis://", "redis://nofunctions:pw@", 1)
	st := openStore(t, url)
	if st.fcall.Load() {
		t.Fatal("the store calls functions it could not load")
	}
	admitsExactly(t, st, "k", 3, nil)
	if st.fcall.Load() {
		t.Fatal("the store turned to functions it could not load")
	}
}

// TestLibraryNumbers: the library keeps the numbers of the rules' limits, bursts and windows
// between calls (at most NUMS_MAX strings, then it starts again): more distinct rules than it
// keeps, each asked twice, decide as they must, through the kept numbers, after the table started
// again, and without it (the scripts).
func TestLibraryNumbers(t *testing.T) {
	url := startRedis(t).URL()
	for _, scripts := range []bool{false, true} {
		st := openStore(t, url)
		if scripts {
			st.fcall.Store(false)
		} else if !st.fcall.Load() {
			t.Skip("this Redis has no functions (before Redis 7)")
		}
		const rules = 400 // 3 strings each: 1200, beyond NUMS_MAX (1024)
		for pass := range int64(2) {
			for i := range int64(rules) {
				limit := 1000 + i
				// One token per 100 s: no refill between the passes on the slowest machine.
				tb := mustAlg(t, algorithm.NameTokenBucket, limit, time.Duration(limit)*100*time.Second, 0)
				d := apply(t, st, time.Now(), testserver.StoreCheck{Rule: "r", Scope: "s", Key: strconv.FormatInt(i, 10), N: 1, Algorithm: tb})[0].Decision
				if !d.Allowed || d.Limit != limit || d.Remaining != limit-1-pass {
					t.Fatalf("scripts %t, pass %d, limit %d: %+v", scripts, pass, limit, d)
				}
			}
		}
	}
}

// TestLibraryLoadedWhenRedisComesUp: a store opened while Redis is down (the scripts not loaded,
// nor the library) loads the library once Redis answers: the heartbeat does, and decisions then
// call its functions.
func TestLibraryLoadedWhenRedisComesUp(t *testing.T) {
	srv := startRedis(t)
	srv.Stop()
	const retry = 20 * time.Millisecond // the heartbeat's period
	st := openStore(t, srv.URL(), WithRetryInterval(retry))
	srv.Restart()
	for deadline := time.Now().Add(10 * time.Second); !st.fcall.Load(); time.Sleep(retry) {
		if time.Now().After(deadline) {
			t.Fatalf("Redis up for 10 s and the library not loaded (fcall %t, libraryLost %t)", st.fcall.Load(), st.libraryLost.Load())
		}
	}
	admitsExactly(t, st, "k", 2, nil)
}

// TestOutOfMemoryDecidesAsAScript: a Redis over maxmemory (noeviction) refuses to start a function
// that may write, where a script starts and fails only when it writes. A denial, which writes
// nothing, is still Redis's, by function or by script; an admission fails and goes to the policy
// (fail-open here), as it did before the library.
func TestOutOfMemoryDecidesAsAScript(t *testing.T) {
	url := startRedis(t).URL()
	rdb := newClient(t, url)
	ctx := context.Background()
	t.Cleanup(func() { _ = rdb.ConfigSet(ctx, "maxmemory", "0").Err() })
	for _, scripts := range []bool{false, true} {
		st := openStore(t, url, WithPolicy(FailOpen))
		if scripts {
			st.fcall.Store(false)
		} else if !st.fcall.Load() {
			t.Skip("this Redis has no functions (before Redis 7)")
		}
		require := func(ok bool, format string, args ...any) {
			t.Helper()
			if !ok {
				t.Fatalf("scripts %t: "+format, append([]any{scripts}, args...)...)
			}
		}
		require(rdb.ConfigSet(ctx, "maxmemory", "0").Err() == nil, "maxmemory 0")
		key := "oom" + strconv.FormatBool(scripts)
		tb := mustAlg(t, algorithm.NameTokenBucket, 1, time.Hour, 0)
		check := testserver.StoreCheck{Rule: "r", Scope: "s", Key: key, N: 1, Algorithm: tb}
		d := apply(t, st, time.Now(), check)[0].Decision
		require(d.Allowed, "the first request of a limit of 1: %+v", d)
		require(rdb.ConfigSet(ctx, "maxmemory", "1").Err() == nil, "maxmemory 1")
		before := st.Counters()
		d = apply(t, st, time.Now(), check)[0].Decision
		after := st.Counters()
		require(!d.Allowed, "over the limit with Redis out of memory: allowed (%+v; counters %+v)", d, after)
		require(after.Decided-before.Decided == 1 && after.FailOpen == before.FailOpen, "the denial not Redis's: before %+v, after %+v", before, after)
		require(rdb.ConfigSet(ctx, "maxmemory", "0").Err() == nil, "maxmemory 0")
	}
}

// TestFunctionsForbidden: an ACL that lets the library load but forbids calling it gets the
// scripts: the first decision that is refused runs by EVAL, the next ones by EVALSHA, every one
// Redis's.
func TestFunctionsForbidden(t *testing.T) {
	srv := startRedis(t)
	rdb := newClient(t, srv.URL())
	if err := rdb.Do(context.Background(), "ACL", "SETUSER", "nofcall", "on", ">pw", "~*", "&*", "+@all", "-fcall", "-fcall_ro").Err(); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, strings.Replace(srv.URL(), "redis://", "redis://nofcall:pw@", 1))
	if !st.fcall.Load() {
		t.Skip("this Redis has no functions (before Redis 7)")
	}
	admitsExactly(t, st, "k", 3, nil)
	if st.fcall.Load() {
		t.Fatal("the store goes on calling functions it may not call")
	}
}
