package testserver

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRuleValidate(t *testing.T) {
	ok := Rule{Name: "api", Algorithm: "token-bucket", Limit: 10, Window: time.Second}
	with := func(f func(*Rule)) Rule {
		r := ok
		f(&r)
		return r
	}
	tests := []struct {
		name  string
		rule  Rule
		field string
		is    error
	}{
		{"valid", ok, "", nil},
		{"defaults", Rule{Limit: 1, Window: time.Minute}, "", nil},
		{"bad name", with(func(r *Rule) { r.Name = "a\"b" }), "name", nil},
		{"long name", with(func(r *Rule) { r.Name = strings.Repeat("x", 65) }), "name", nil},
		{"bad method", with(func(r *Rule) { r.Methods = []string{"GE T"} }), "methods[0]", nil},
		{"bad prefix", with(func(r *Rule) { r.PathPrefix = "v1" }), "path_prefix", nil},
		{"bad key", with(func(r *Rule) { r.Key = "cookie:x" }), "key", ErrInvalidKey},
		{"global combined", with(func(r *Rule) { r.Key = "global+ip" }), "key", ErrInvalidKey},
		{"empty key part", with(func(r *Rule) { r.Key = "ip+" }), "key", ErrInvalidKey},
		{"duplicate label", with(func(r *Rule) { r.Key = "ip+ip" }), "key", ErrInvalidKey},
		{"bad header", with(func(r *Rule) { r.Key = "header:a b" }), "key", ErrInvalidKey},
		{"unknown algorithm", with(func(r *Rule) { r.Algorithm = "magic" }), "algorithm", algorithm.ErrUnknownAlgorithm},
		{"zero limit", with(func(r *Rule) { r.Limit = 0 }), "limit", algorithm.ErrInvalidLimit},
		{"zero window", with(func(r *Rule) { r.Window = 0 }), "window", algorithm.ErrInvalidWindow},
		{"negative burst", with(func(r *Rule) { r.Burst = -1 }), "burst", algorithm.ErrInvalidBurst},
		{"window burst", with(func(r *Rule) { r.Algorithm = "fixed-window"; r.Burst = 3 }), "burst", algorithm.ErrInvalidBurst},
		{"bad mode", with(func(r *Rule) { r.Mode = "strict" }), "mode", ErrInvalidMode},
		{"soft percent in hard", with(func(r *Rule) { r.SoftPercent = 10 }), "soft_percent", nil},
		{"soft percent negative", with(func(r *Rule) { r.Mode = ModeSoft; r.SoftPercent = -1 }), "soft_percent", nil},
		{"soft overflow", with(func(r *Rule) { r.Mode = ModeSoft; r.SoftPercent = 10000; r.Limit = 1 << 60 }), "limit", nil},
		{"elastic no ceiling", with(func(r *Rule) { r.Mode = ModeElastic; r.Capacity = 1 }), "ceiling", nil},
		{"elastic no capacity", with(func(r *Rule) { r.Mode = ModeElastic; r.Ceiling = 20 }), "capacity", nil},
		{"ceiling in hard", with(func(r *Rule) { r.Ceiling = 20 }), "ceiling", nil},
		{"capacity in soft", with(func(r *Rule) { r.Mode = ModeSoft; r.Capacity = 2 }), "capacity", nil},
		{"shape token bucket", with(func(r *Rule) { r.Shape = true }), "shape", nil},
		{"shape leaky", with(func(r *Rule) { r.Shape = true; r.Algorithm = "leaky-bucket" }), "", nil},
		{"count denied token bucket", with(func(r *Rule) { r.CountDenied = true }), "count_denied", nil},
		{"count denied sliding log", with(func(r *Rule) { r.CountDenied = true; r.Algorithm = "sliding-log" }), "count_denied", nil},
		{"count denied fixed window", with(func(r *Rule) { r.CountDenied = true; r.Algorithm = "fixed-window" }), "count_denied", nil},
		{"count denied sliding window", with(func(r *Rule) { r.CountDenied = true; r.Algorithm = "sliding-window" }), "", nil},
		{"tier bad window", with(func(r *Rule) { r.Tiers = map[string]Tier{"user:1": {Window: -time.Second}} }), "tiers[user:1].window", algorithm.ErrInvalidWindow},
		{"tier empty key", with(func(r *Rule) { r.Tiers = map[string]Tier{"": {Limit: 5}} }), "tiers[]", nil},
		{"tier ceiling in hard", with(func(r *Rule) { r.Tiers = map[string]Tier{"k": {Ceiling: 5}} }), "tiers[k].ceiling", nil},
		{"tier ceiling too low", with(func(r *Rule) {
			r.Mode, r.Ceiling, r.Capacity = ModeElastic, 20, 1
			r.Tiers = map[string]Tier{"k": {Limit: 50, Ceiling: 40}}
		}), "tiers[k].ceiling", nil},
		{"key func", with(func(r *Rule) { r.Key = ""; r.KeyFunc = func(*http.Request) string { return "x" } }), "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rule.Validate()
			if tt.field == "" {
				assert.NoError(t, err)
				return
			}
			var re *RuleError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tt.field, re.Field)
			assert.ErrorIs(t, err, ErrInvalidRule)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.Contains(t, err.Error(), tt.field)
		})
	}
}

func TestValidateRulesDuplicate(t *testing.T) {
	r := Rule{Name: "a", Limit: 1, Window: time.Second}
	err := ValidateRules([]Rule{r, {Name: "b", Limit: 1, Window: time.Second}, r})
	var re *RuleError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 2, re.Index)
	assert.ErrorIs(t, err, ErrDuplicateRule)
	// Two unnamed rules are both "default".
	assert.ErrorIs(t, ValidateRules([]Rule{{Limit: 1, Window: time.Second}, {Limit: 2, Window: time.Second}}), ErrDuplicateRule)
}

func TestNewLimiterErrors(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		is   error
	}{
		{"server option", []Option{WithAddr(":0")}, ErrServerOption},
		{"bad prefix", []Option{WithIPv6Prefix(129)}, ErrInvalidOption},
		{"bad v4 prefix", []Option{WithIPv4Prefix(0)}, ErrInvalidOption},
		{"bad proxy", []Option{WithTrustedProxies("10.0.0.0/33")}, ErrInvalidOption},
		{"bad status", []Option{WithStatus(200)}, ErrInvalidOption},
		{"nil clock", []Option{WithClock(nil)}, ErrInvalidOption},
		{"nil store", []Option{WithStore(nil)}, ErrInvalidOption},
		{"nil in-flight", []Option{WithInFlight(nil)}, ErrInvalidOption},
		{"bad max keys", []Option{WithMaxKeys(0)}, ErrInvalidOption},
		{"bad stats keys", []Option{WithStatsKeys(-1)}, ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewLimiter(nil, tt.opts...)
			assert.ErrorIs(t, err, tt.is)
			var oe *OptionError
			assert.True(t, errors.As(err, &oe), "want *OptionError, got %T", err)
		})
	}
	_, err := NewLimiter([]Rule{{Limit: 0, Window: time.Second}})
	assert.ErrorIs(t, err, algorithm.ErrInvalidLimit)
	_, err = Middleware(http.NotFoundHandler(), []Rule{{Limit: 1}})
	assert.ErrorIs(t, err, ErrInvalidRule)
}
