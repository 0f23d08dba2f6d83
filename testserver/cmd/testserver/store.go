package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/redisstore"
)

// storeMemory is the -store value of the default in-process store.
const storeMemory = "memory"

// storeFlags are the flags that only mean something with -store redis://.
var storeFlags = []string{"store-policy", "store-fallback-share", "store-instances", "store-timeout"}

// storeFlagValues holds the raw values of the store flags.
type storeFlagValues struct {
	store     string
	policy    string
	share     float64
	instances int
	timeout   time.Duration
}

// declareStoreFlags declares the store flags into fs.
func declareStoreFlags(fs *flag.FlagSet, v *storeFlagValues) {
	fs.StringVar(&v.store, "store", storeMemory, "where per-key state lives: `memory`, or redis://HOST:PORT/DB (rediss:// for TLS) to share limits with every testserver on that Redis")
	fs.StringVar(&v.policy, "store-policy", redisstore.Fallback.String(), "with -store redis: what decides while Redis is down or slower than -store-timeout: `fallback` (a local limiter), fail-open or fail-closed")
	fs.Float64Var(&v.share, "store-fallback-share", 0, "with -store redis and the fallback policy: the `share` of every limit this instance enforces alone; 0 means 1/N for the N instances registered in Redis (or -store-instances)")
	fs.IntVar(&v.instances, "store-instances", 0, "with -store redis: the `number` of instances sharing the limits, for the fallback's share; 0 counts the instances registered in Redis")
	fs.DurationVar(&v.timeout, "store-timeout", redisstore.DefaultTimeout, "with -store redis: the deadline of each decision's round trip to Redis")
}

// storeOptions are the parsed store flags.
type storeOptions struct {
	// url is the Redis URL; "" for the memory store.
	url       string
	policy    redisstore.Policy
	share     float64 // 0: the store's default (1/instances)
	instances int
	timeout   time.Duration
}

// parseStoreFlags checks the store flags. Errors are *usageError naming the flag.
func parseStoreFlags(v *storeFlagValues, set map[string]bool) (storeOptions, error) {
	if v.store == storeMemory {
		for _, name := range storeFlags {
			if set[name] {
				return storeOptions{}, badFlag(name, flagValue(v, name), "needs -store redis://HOST:PORT/DB")
			}
		}
		return storeOptions{}, nil
	}
	shown := redact(v.store)
	if !strings.HasPrefix(v.store, "redis://") && !strings.HasPrefix(v.store, "rediss://") {
		return storeOptions{}, badFlag("store", shown, "want memory, or a redis:// or rediss:// URL such as redis://127.0.0.1:6379/0")
	}
	if _, err := redis.ParseURL(v.store); err != nil {
		return storeOptions{}, badFlag("store", shown, "%v", err)
	}
	p, err := redisstore.ParsePolicy(v.policy)
	if err != nil {
		return storeOptions{}, badFlag("store-policy", v.policy, "want fallback, fail-open or fail-closed")
	}
	if !(v.share >= 0 && v.share <= 1) {
		return storeOptions{}, badFlag("store-fallback-share", fmt.Sprint(v.share), "must be 0 (1/N) or more than 0 and at most 1")
	}
	if v.instances < 0 {
		return storeOptions{}, badFlag("store-instances", fmt.Sprint(v.instances), "must not be negative")
	}
	if v.timeout <= 0 {
		return storeOptions{}, badFlag("store-timeout", v.timeout.String(), "must be positive")
	}
	return storeOptions{url: v.store, policy: p, share: v.share, instances: v.instances, timeout: v.timeout}, nil
}

// flagValue returns the raw value of a store flag, for messages.
func flagValue(v *storeFlagValues, name string) string {
	switch name {
	case "store-policy":
		return v.policy
	case "store-fallback-share":
		return fmt.Sprint(v.share)
	case "store-instances":
		return fmt.Sprint(v.instances)
	case "store-timeout":
		return v.timeout.String()
	}
	return ""
}

// redact returns a URL with its password hidden (or s unchanged when it is not a URL).
func redact(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return s
}

// openStore opens the Redis store of -store (nil for memory) after checking that it decides the
// rules exactly, and reports on stderr whether Redis answers: a server starts while Redis is
// down and decides by -store-policy until it comes up. Failed round trips to Redis are reported
// on stderr as they happen (one line per round trip, which concurrent decisions share; while
// the circuit is open, at most one per retry interval).
func (o *options) openStore(cfg *testserver.Config, stderr io.Writer) (*redisstore.Store, error) {
	s := o.store
	if s.url == "" {
		return nil, nil
	}
	rules := []testserver.Rule{o.rule}
	if cfg != nil {
		rules = cfg.Rules
	}
	if err := o.checkStoreRules(rules); err != nil {
		return nil, err
	}
	opts := []redisstore.Option{redisstore.WithPolicy(s.policy), redisstore.WithTimeout(s.timeout), redisstore.WithInstances(s.instances)}
	if s.share > 0 {
		opts = append(opts, redisstore.WithFallbackShare(s.share))
	}
	st, err := redisstore.Open(s.url, append(opts,
		redisstore.WithErrorHook(func(err error) {
			fmt.Fprintf(stderr, "testserver: redis: %v; its decisions made by -store-policy %s\n", err, s.policy)
		}))...)
	if err != nil {
		return nil, usage(fmt.Errorf("-store: %w", err))
	}
	state := "answers"
	if err := st.Ping(context.Background()); err != nil {
		state = fmt.Sprintf("does not answer (%v): deciding by policy until it does", err)
	}
	c := st.Counters()
	fmt.Fprintf(stderr, "testserver: store %s (policy %s, %d instance(s), fallback share %.3g, timeout %v): Redis %s\n",
		redact(s.url), s.policy, c.Instances, c.FallbackShare, s.timeout, state)
	return st, nil
}

// checkStoreRules checks that the Redis store (if any) decides rules exactly; a *usageError
// otherwise. The memory store decides any valid rule.
func (o *options) checkStoreRules(rules []testserver.Rule) error {
	if o.store.url == "" {
		return nil
	}
	if err := redisstore.ValidateRules(rules); err != nil {
		return usage(fmt.Errorf("-store %s cannot decide these rules exactly: %w", redact(o.store.url), err))
	}
	return nil
}
