package dialects

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Header sets from the IETF draft's examples (revision -07: "RateLimit-Policy: default;l=100;w=10"
// with "RateLimit: default;r=50;t=5"; revisions up to -06: "RateLimit-Limit: 10, 10;w=1, 50;w=60",
// and Bazaarvoice's docs: "RateLimit-Policy: 10;w=1, 50;w=60"), and from Atlassian's Beta fields
// as logged on the Atlassian developer community ("tenant-app-quota";q=100100;w=3600).
func TestIETFFixtures(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name    string
		headers []string
		want    Reading
	}{
		{
			name:    "draft -07 example",
			headers: []string{"RateLimit-Policy", "default;l=100;w=10", "RateLimit", "default;r=50;t=5"},
			want: Reading{Dialect: "ietf", Quotas: []Quota{{Name: "default", Limit: 100, Window: 10 * time.Second,
				Remaining: 50, HasRemaining: true, Reset: 5 * time.Second, HasReset: true, ResetGrain: time.Second}}},
		},
		{
			name: "Atlassian Beta fields with q, and the X-RateLimit pair they come with",
			headers: []string{"Beta-Ratelimit-Policy", `"tenant-app-quota";q=100100;w=3600`, "Beta-Ratelimit", `"tenant-app-quota";r=17842;t=2107`,
				"X-Beta-Ratelimit-Reason", "jira-quota-tenant-based", "X-Ratelimit-Limit", "350", "X-Ratelimit-Remaining", "349"},
			want: Reading{Dialect: "ietf", Quotas: []Quota{{Name: "tenant-app-quota", Limit: 100100, Window: time.Hour,
				Remaining: 17842, HasRemaining: true, Reset: 2107 * time.Second, HasReset: true, ResetGrain: time.Second}}},
		},
		{
			name:    "Atlassian quota reached: RateLimit without its policy",
			headers: []string{"Beta-Ratelimit", `"tenant-app-quota";r=0;t=2788`, "X-Beta-Ratelimit-Reset", "2026-03-26T16:00Z"},
			want: Reading{Dialect: "ietf", Quotas: []Quota{{Name: "tenant-app-quota", Remaining: 0, HasRemaining: true,
				Reset: 2788 * time.Second, HasReset: true, ResetGrain: time.Second}}},
		},
		{
			name:    "draft -06 three fields with policies in the limit",
			headers: []string{"RateLimit-Limit", "10, 10;w=1, 50;w=60", "RateLimit-Remaining", "9", "RateLimit-Reset", "1"},
			want: Reading{Dialect: "ietf", Quotas: []Quota{{Limit: 10, Window: time.Second, Remaining: 9, HasRemaining: true,
				Reset: time.Second, HasReset: true, ResetGrain: time.Second}}},
		},
		{
			name:    "draft -06 three fields with RateLimit-Policy beside them (Bazaarvoice)",
			headers: []string{"RateLimit-Policy", "10;w=1, 50;w=60", "RateLimit-Limit", "50", "RateLimit-Remaining", "3", "RateLimit-Reset", "20"},
			want: Reading{Dialect: "ietf", Quotas: []Quota{{Limit: 50, Window: time.Minute, Remaining: 3, HasRemaining: true,
				Reset: 20 * time.Second, HasReset: true, ResetGrain: time.Second}}},
		},
		{
			name: "several policies, units, RateLimit order first",
			headers: []string{"RateLimit-Policy", `"burst";q=100;w=60, "daily";q=1000;w=86400, "bytes";q=1000000;w=60;qu="content-bytes"`,
				"RateLimit", `"daily";r=1;t=36000`},
			want: Reading{Dialect: "ietf", Quotas: []Quota{
				{Name: "daily", Limit: 1000, Window: 24 * time.Hour, Remaining: 1, HasRemaining: true, Reset: 10 * time.Hour, HasReset: true, ResetGrain: time.Second},
				{Name: "burst", Limit: 100, Window: time.Minute},
				{Name: "bytes", Unit: UnitBytes, Limit: 1000000, Window: time.Minute},
			}},
		},
		{
			name:    "earlier dictionary form",
			headers: []string{"RateLimit", "limit=100, remaining=42, reset=17"},
			want: Reading{Dialect: "ietf", Quotas: []Quota{{Limit: 100, Remaining: 42, HasRemaining: true,
				Reset: 17 * time.Second, HasReset: true, ResetGrain: time.Second}}},
		},
		{
			name:    "malformed parameters are ignored one by one",
			headers: []string{"RateLimit-Policy", `"p";q=-5;w=60`, "RateLimit", `"p";r=abc;t=9`},
			want:    Reading{Dialect: "ietf", Quotas: []Quota{{Name: "p", Window: time.Minute, Reset: 9 * time.Second, HasReset: true, ResetGrain: time.Second}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Read(response(200, "", tt.headers...), now))
		})
	}
}
