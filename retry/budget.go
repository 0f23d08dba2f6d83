package retry

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the retry budget a Transport creates when WithBudget is not given.
const (
	// DefaultBudgetTokens is the default token capacity per host.
	DefaultBudgetTokens = 100
	// DefaultBudgetRatio is the default number of tokens a successful attempt refills.
	DefaultBudgetRatio = 0.1
	// BudgetMaxKeys is how many hosts a Budget tracks at once; see Budget.
	BudgetMaxKeys = 10000
)

// milli is the fixed-point scale of token counts: all budget arithmetic is exact integers.
const milli = 1000

// Budget is a retry budget per key (the Transport uses the request's host), in the spirit of gRPC
// retry throttling: each key holds a token count, starting full at maxTokens. A retry is allowed
// only while the count is above half of maxTokens, and each allowed retry spends one token; each
// successful attempt (a response not classified as a failure) refills ratio tokens, up to
// maxTokens. So from full, maxTokens/2 retries can be made back to back, and in the long run at most
// about one retry per 1/ratio successes: with the defaults (100 tokens, ratio 0.1) a burst of 50
// retries, then one retry per 10 successful requests. When a host fails entirely, retries stop
// after the burst and only first attempts reach it — an outage cannot become a retry storm — until
// successes refill the count.
//
// Time is explicit: every method takes now, used only to evict the least recently used key when
// more than BudgetMaxKeys keys are depleted at once (a full key takes no memory). A Budget may be
// shared by several Transports. It is safe for concurrent use.
type Budget struct {
	max   int64 // capacity, milli-tokens
	ratio int64 // refill per success, milli-tokens

	mu   sync.Mutex
	keys map[string]*budgetKey // keys below full; absent means full
	n    atomic.Int64          // len(keys), readable without mu
}

type budgetKey struct {
	tokens int64 // milli-tokens, 0..max
	used   time.Time
}

// NewBudget returns a Budget holding maxTokens tokens per key, refilling ratio tokens per success.
// maxTokens must be at least 2 (so that half of it allows at least one retry) and ratio must be a
// finite number above 0 and at most maxTokens; otherwise the error wraps ErrInvalidOption.
// Token counts are kept with a precision of 0.001 token.
func NewBudget(maxTokens int, ratio float64) (*Budget, error) {
	if maxTokens < 2 || maxTokens > math.MaxInt32 {
		return nil, fmt.Errorf("%w: NewBudget: maxTokens %d must be between 2 and %d",
			ErrInvalidOption, maxTokens, math.MaxInt32)
	}
	if math.IsNaN(ratio) || ratio <= 0 || ratio > float64(maxTokens) {
		return nil, fmt.Errorf("%w: NewBudget: ratio %v must be above 0 and at most maxTokens %d",
			ErrInvalidOption, ratio, maxTokens)
	}
	r := int64(math.Round(ratio * milli))
	if r < 1 {
		r = 1
	}
	return &Budget{max: int64(maxTokens) * milli, ratio: r, keys: make(map[string]*budgetKey)}, nil
}

// AllowRetry reports whether key may retry at now, and if so spends one token.
func (b *Budget) AllowRetry(key string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.keys[key]
	tokens := b.max
	if k != nil {
		tokens = k.tokens
	}
	if tokens <= b.max/2 {
		if k != nil {
			k.used = now
		}
		return false
	}
	if k == nil {
		b.evictIfFull()
		k = &budgetKey{tokens: b.max}
		b.keys[key] = k
		b.n.Store(int64(len(b.keys)))
	}
	k.tokens -= milli
	k.used = now
	return true
}

// Succeeded records a successful attempt for key at now, refilling ratio tokens. It costs no lock
// and no allocation while no key is below full.
func (b *Budget) Succeeded(key string, now time.Time) {
	if b.n.Load() == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.keys[key]
	if k == nil {
		return
	}
	k.tokens += b.ratio
	k.used = now
	if k.tokens >= b.max {
		delete(b.keys, key)
		b.n.Store(int64(len(b.keys)))
	}
}

// Tokens returns key's current token count.
func (b *Budget) Tokens(key string) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if k := b.keys[key]; k != nil {
		return float64(k.tokens) / milli
	}
	return float64(b.max) / milli
}

// evictIfFull drops the least recently used key when BudgetMaxKeys keys are tracked. b.mu is held.
func (b *Budget) evictIfFull() {
	if len(b.keys) < BudgetMaxKeys {
		return
	}
	var oldest string
	var oldestUsed time.Time
	first := true
	for key, k := range b.keys {
		if first || k.used.Before(oldestUsed) {
			oldest, oldestUsed, first = key, k.used, false
		}
	}
	delete(b.keys, oldest)
}
