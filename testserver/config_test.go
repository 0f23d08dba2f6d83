package testserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeConfig(t *testing.T) {
	doc := `{
	  "trusted_proxies": ["10.0.0.0/8"],
	  "status": 503,
	  "headers": false,
	  "rules": [
	    {"name": "per-ip", "key": "ip", "algorithm": "sliding-window", "limit": 100, "window": "1m"},
	    {"name": "per-user", "key": "user+route", "limit": 10, "window": "1s", "burst": 20,
	     "methods": ["get"], "path_prefix": "/v1/",
	     "tiers": {"user:241531": {"limit": 50, "window": "2s"}}}
	  ]
	}`
	cfg, err := DecodeConfig(strings.NewReader(doc))
	require.NoError(t, err)
	require.Len(t, cfg.Rules, 2)
	assert.Equal(t, time.Minute, cfg.Rules[0].Window)
	assert.Equal(t, KeyIP, cfg.Rules[0].Key)
	assert.Equal(t, Tier{Limit: 50, Window: 2 * time.Second}, cfg.Rules[1].Tiers["user:241531"])
	assert.Equal(t, []string{"10.0.0.0/8"}, cfg.TrustedProxies)
	assert.Equal(t, 503, cfg.Status)
	require.NotNil(t, cfg.Headers)
	assert.False(t, *cfg.Headers)
	assert.Len(t, cfg.Options(), 3)

	// A bare array is a rule list.
	rules, err := DecodeRules(strings.NewReader(`[{"limit": 5, "window": "10s", "mode": "shadow"}]`))
	require.NoError(t, err)
	assert.Equal(t, ModeShadow, rules[0].Mode)
}

func TestDecodeConfigErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		is        error
		field     string
		index     int
	}{
		{"syntax", `{"rules": [`, ErrInvalidConfig, "", 0},
		{"no rules", `{}`, ErrInvalidConfig, "", 0},
		{"unknown top-level", `{"rulez": []}`, ErrInvalidConfig, "", 0},
		{"unknown rule field", `[{"limit": 1, "window": "1s"}, {"limt": 1, "window": "1s"}]`, ErrUnknownField, "limt", 1},
		{"numeric window", `[{"limit": 1, "window": 60}]`, ErrInvalidRule, "window", 0},
		{"bad window", `[{"limit": 1, "window": "1 minute"}]`, ErrInvalidRule, "window", 0},
		{"string limit", `[{"limit": "10", "window": "1s"}]`, ErrInvalidRule, "limit", 0},
		{"bad tier window", `[{"name": "x", "limit": 1, "window": "1s", "tiers": {"ip:1.2.3.4": {"window": "soon"}}}]`, ErrInvalidRule, "tiers[ip:1.2.3.4].window", 0},
		{"unknown tier field", `[{"limit": 1, "window": "1s", "tiers": {"k": {"rate": 3}}}]`, ErrUnknownField, "tiers[k].rate", 0},
		{"invalid value", `[{"limit": 0, "window": "1s"}]`, algorithm.ErrInvalidLimit, "limit", 0},
		{"bad proxy", `{"trusted_proxies": ["nope"], "rules": []}`, ErrInvalidOption, "", 0},
		{"trailing data", `[] []`, ErrInvalidConfig, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeConfig(strings.NewReader(tt.doc))
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.is)
			if tt.field != "" {
				var re *RuleError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, tt.field, re.Field)
				assert.Equal(t, tt.index, re.Index)
			}
		})
	}
}

func TestRuleJSONRoundTrip(t *testing.T) {
	in := Rule{
		Name: "r", Methods: []string{"GET"}, PathPrefix: "/a", Key: "ip+route", Algorithm: "leaky-bucket",
		Limit: 7, Window: 1500 * time.Millisecond, Burst: 3, Mode: ModeSoft, SoftPercent: 20, Shape: true,
		Tiers: map[string]Tier{"ip:1.2.3.4": {Limit: 9, Window: time.Hour, Burst: 2}},
	}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"window":"1.5s"`)
	var out Rule
	require.NoError(t, json.Unmarshal(b, &out))
	assert.Equal(t, in, out)
}
