package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/internal/redistest"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// answerDecisions is a go-redis hook that answers every EVALSHA of the decision script with reply
// (a copy) without sending it; every other command goes to Redis.
type answerDecisions struct{ reply []any }

func (answerDecisions) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h answerDecisions) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if c, ok := cmd.(*redis.Cmd); ok && (cmd.Name() == "evalsha" || cmd.Name() == "fcall") &&
			(c.Args()[1] == scriptOne.sha || c.Args()[1] == scriptMany.sha || c.Args()[1] == scriptOne.fn || c.Args()[1] == scriptMany.fn) {
			c.SetVal(append([]any(nil), h.reply...))
			return nil
		}
		return next(ctx, cmd)
	}
}

func (answerDecisions) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// BenchmarkClientPath measures what a lone caller's decision costs on the client, without the
// network and Redis: Apply of one token-bucket check whose script reply a hook gives at once
// ("apply"), beside go-redis alone running the same EVALSHA under a deadline
// (context.WithTimeout, which costs more than the store's own: see deadline.go) ("evalsha"); the
// difference is the store's own work (validation, encoding, the round trip's
// bookkeeping, decoding). Run with
//
//	go test -run '^$' -bench BenchmarkClientPath -count 10 . | tee new.txt
func BenchmarkClientPath(b *testing.B) {
	o, err := redis.ParseURL(redistest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	o.ContextTimeoutEnabled = true
	rdb := redis.NewClient(o)
	defer rdb.Close()
	// Admitted, 99,999 remaining, reset in 600 µs, no retry, no delay, committed.
	rdb.AddHook(answerDecisions{reply: []any{int64(1), int64(99_999), int64(600), int64(0), int64(0), int64(1)}})
	st, err := New(rdb, WithKeyPrefix(uniquePrefix(b)), WithTimeout(10*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	tb := mustAlg(b, algorithm.NameTokenBucket, 100_000, time.Minute, 0)
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("user:%d", i)
	}
	ctx := context.Background()
	b.Run("apply", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ds, err := st.Apply(ctx, time.Now(), []testserver.StoreCheck{{Rule: "bench", Scope: "bench", Key: keys[i%len(keys)], N: 1, Algorithm: tb}})
			if err != nil || !ds[0].Decision.Allowed {
				b.Fatalf("Apply: %v %+v", err, ds)
			}
		}
	})
	b.Run("evalsha", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := rdb.EvalSha(ctx, scriptOne.Hash(), []string{keys[i%len(keys)]}, "", 0, 1, 1, 1, 0, 100_000, 100_000, 60_000_000).Result()
			cancel()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	if c := st.Counters(); c.Decided == 0 || c.Errors+c.Timeouts+c.Skipped != 0 {
		b.Fatalf("counters %+v: every decision should be Redis's (the hook's)", c)
	}
}
