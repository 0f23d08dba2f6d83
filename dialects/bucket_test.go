package dialects

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Bucket names the bucket Read reads, from the vendors' documented header sets, and nothing for
// responses that name none.
func TestBucketAgreesWithRead(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name string
		hdrs []string
		want string
	}{
		{"discord docs", []string{"X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1470173023",
			"X-RateLimit-Reset-After", "1", "X-RateLimit-Bucket", "abcd1234"}, "abcd1234"},
		{"github core", []string{"x-ratelimit-limit", "5000", "x-ratelimit-remaining", "4999", "x-ratelimit-used", "1",
			"x-ratelimit-reset", "1691591363", "x-ratelimit-resource", "core"}, "core"},
		{"github search, padded", []string{"x-ratelimit-limit", "30", "x-ratelimit-resource", " search "}, "search"},
		{"github without resource", []string{"X-GitHub-Request-Id", "CB4E:1F0A:2C3C7A:5B3C2B:64D3A1B0", "X-RateLimit-Bucket", "x"}, ""},
		{"x-ratelimit", []string{"X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "3"}, ""},
		{"nothing", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := response(200, "", tt.hdrs...)
			assert.Equal(t, tt.want, Bucket(resp))
			assert.Equal(t, Read(resp, now).Bucket, Bucket(resp))
		})
	}
	assert.Equal(t, "", Bucket(nil))
}

// PrimaryBucket names GitHub's core on any GitHub response, whichever resource it answers for, and
// nothing for APIs whose buckets are per route (Discord) or that name none.
func TestPrimaryBucket(t *testing.T) {
	tests := []struct {
		name string
		hdrs []string
		want string
	}{
		{"github search (docs)", []string{"x-ratelimit-limit", "30", "x-ratelimit-remaining", "29", "x-ratelimit-used", "1",
			"x-ratelimit-reset", "1691591363", "x-ratelimit-resource", "search"}, "core"},
		{"github core", []string{"x-ratelimit-limit", "5000", "x-ratelimit-resource", "core"}, "core"},
		{"github without resource", []string{"X-GitHub-Request-Id", "CB4E:1F0A:2C3C7A:5B3C2B:64D3A1B0"}, "core"},
		{"discord docs", []string{"X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1470173023",
			"X-RateLimit-Reset-After", "1", "X-RateLimit-Bucket", "abcd1234"}, ""},
		{"nothing", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, PrimaryBucket(response(200, "", tt.hdrs...)))
		})
	}
	assert.Equal(t, "", PrimaryBucket(nil))
}
