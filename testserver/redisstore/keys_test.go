package redisstore

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestKeyNames: the name scheme puts the tag in braces, cuts it at '}' as Redis does, writes an
// empty tag as "_", and stays injective where naive concatenation would collide.
func TestKeyNames(t *testing.T) {
	c, err := newConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tag, scope, key, want string
	}{
		{"ip:1.2.3.4", "per-ip|token-bucket|5|1000000000|0", "ip:1.2.3.4", "steady:{ip:1.2.3.4}34:per-ip|token-bucket|5|1000000000|0:ip:1.2.3.4:s"},
		{"", "s", "", "steady:{_}1:s::s"},
		{"a}b", "s", "a}b", "steady:{a}1:s:a}b:s"},
	}
	for _, tt := range tests {
		if got := c.keyName(c.tagOf("r", tt.tag), tt.scope, tt.key, suffixState); got != tt.want {
			t.Errorf("keyName(%q, %q, %q) = %q, want %q", tt.tag, tt.scope, tt.key, got, tt.want)
		}
	}
	// Pairs a plain "scope:key" join would confuse.
	pairs := [][2]string{{"a:b", "c"}, {"a", "b:c"}, {"a}:1", "x"}, {"a", "}:1:x"}, {"s", "k:s"}, {"s:k", "s"}}
	seen := map[string]bool{}
	for _, p := range pairs {
		for _, suffix := range []string{suffixState, suffixLog} {
			n := c.keyName(c.tagOf("r", p[1]), p[0], p[1], suffix)
			if seen[n] {
				t.Errorf("name %q given twice", n)
			}
			seen[n] = true
		}
	}
	ct, _ := newConfig([]Option{WithHashTag(func(rule, key string) string { return rule + "-shared" })})
	if got := ct.tagOf("limits", "ip:1.2.3.4"); got != "limits-shared" {
		t.Errorf("custom tag %q", got)
	}
}

// TestKeysExpireWhenIdle: after a commit every key of the state expires exactly when the state is
// back at its initial state (ResetAfter of the decision: full bucket, window over, log empty) —
// no sooner, and no later than that plus the time the test took to look; a denied request writes
// nothing; and a state that expired starts afresh.
func TestKeysExpireWhenIdle(t *testing.T) {
	url := startRedis(t).URL()
	rdb := newClient(t, url)
	ctx := context.Background()
	for _, name := range algorithm.Names() {
		t.Run(name, func(t *testing.T) {
			prefix := uniquePrefix(t)
			st := openStore(t, url, WithKeyPrefix(prefix))
			alg := mustAlg(t, name, 10, time.Hour, 0)
			c := testserver.StoreCheck{Rule: "r", Scope: "scope", Key: "k", N: 3, Algorithm: alg}
			names := []string{st.cfg.keyName("k", "scope", "k", suffixState)}
			if name == algorithm.NameSlidingLog {
				names = append(names, st.cfg.keyName("k", "scope", "k", suffixLog))
			}
			// A denial of a fresh key writes nothing.
			big := c
			big.N = 11
			if d := apply(t, st, time.Now(), big)[0]; d.Decision.Allowed {
				t.Fatalf("n above the limit admitted: %+v", d)
			}
			if n := rdb.Exists(ctx, names...).Val(); n != 0 {
				t.Fatalf("a denied request wrote %d keys", n)
			}

			start := time.Now()
			d := apply(t, st, time.Now(), c)[0]
			var pttls []time.Duration
			for _, k := range names {
				pttls = append(pttls, rdb.PTTL(ctx, k).Val())
			}
			looked := time.Since(start)
			if got := scanKeys(t, rdb, prefix); !slices.Equal(got, sorted(names)) {
				t.Fatalf("keys %q, want %q", got, names)
			}
			want := (d.Decision.ResetAfter + time.Millisecond - 1).Truncate(time.Millisecond) // PEXPIRE rounds up
			for i, p := range pttls {
				if p > want || p < want-looked-time.Millisecond {
					t.Errorf("%s: PTTL %v, want %v minus at most the %v the test took", names[i], p, want, looked)
				}
			}
			// A denial leaves the state and its expiry alone.
			before := rdb.Get(ctx, names[0]).Val()
			if d := apply(t, st, time.Now(), big)[0]; d.Decision.Allowed {
				t.Fatal("n above the limit admitted")
			}
			if after := rdb.Get(ctx, names[0]).Val(); before != after || before == "" {
				t.Fatalf("a denial changed the state: %v -> %v", before, after)
			}
		})
	}
	t.Run("expired-state-starts-afresh", func(t *testing.T) {
		st := openStore(t, url)
		alg := mustAlg(t, algorithm.NameTokenBucket, 1, 20*time.Millisecond, 0)
		c := testserver.StoreCheck{Rule: "r", Scope: "short", Key: "k", N: 1, Algorithm: alg}
		if d := apply(t, st, time.Now(), c)[0]; !d.Decision.Allowed {
			t.Fatalf("first request: %+v", d)
		}
		name := st.cfg.keyName("k", "short", "k", suffixState)
		for rdb.Exists(ctx, name).Val() == 1 { // Redis expires it 20 ms after the write
			time.Sleep(5 * time.Millisecond)
		}
		if d := apply(t, st, time.Now(), c)[0]; !d.Decision.Allowed || d.Decision.Remaining != 0 {
			t.Fatalf("after expiry: %+v", d)
		}
	})
}

// scanKeys returns the sorted keys of rdb's database that start with prefix.
func scanKeys(t *testing.T, rdb *redis.Client, prefix string) []string {
	t.Helper()
	var keys []string
	it := rdb.Scan(context.Background(), 0, "*", 1000).Iterator()
	for it.Next(context.Background()) {
		if strings.HasPrefix(it.Val(), prefix) && it.Val() != prefix+registryKey { // the stores' registrations
			keys = append(keys, it.Val())
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return sorted(keys)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
