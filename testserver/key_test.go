package testserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyDerive(t *testing.T) {
	long := strings.Repeat("k", 500)
	tests := []struct {
		name string
		spec KeySpec
		r    *http.Request
		want string
	}{
		{"empty is global", "", req("GET", "/", "1.2.3.4:5"), "global"},
		{"global", KeyGlobal, req("GET", "/", "1.2.3.4:5"), "global"},
		{"ipv4", KeyIP, req("GET", "/", "203.0.113.7:4242"), "ip:203.0.113.7"},
		{"ipv4 without port", KeyIP, req("GET", "/", "203.0.113.7"), "ip:203.0.113.7"},
		{"ipv4-mapped ipv6", KeyIP, req("GET", "/", "[::ffff:203.0.113.7]:1"), "ip:203.0.113.7"},
		{"ipv6 grouped by /64", KeyIP, req("GET", "/", "[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:443"), "ip:2001:db8:1:2::/64"},
		{"ipv6 zone dropped", KeyIP, req("GET", "/", "[fe80::1%eth0]:80"), "ip:fe80::/64"},
		{"not an address", KeyIP, req("GET", "/", "pipe"), "ip:pipe"},
		{"header", KeyHeader("X-API-Key"), req("GET", "/", "1.2.3.4:5", "X-Api-Key", "abc"), "x-api-key:abc"},
		{"header missing", KeyHeader("X-API-Key"), req("GET", "/", "1.2.3.4:5"), "x-api-key:"},
		{"labelled header", "uid=header:X-User", req("GET", "/", "1.2.3.4:5", "X-User", "7"), "uid:7"},
		{"query", "query:api_key", req("GET", "/x?api_key=q1", "1.2.3.4:5"), "api_key:q1"},
		{"route", KeyRoute, req("POST", "/v1/items?x=1", "1.2.3.4:5"), "route:POST /v1/items"},
		{"user", KeyUser, req("GET", "/", "1.2.3.4:5", "X-User-ID", "241531"), "user:241531"},
		{"user+route", "user+route", req("GET", "/v1/a", "1.2.3.4:5", "X-User-ID", "241531"), "user:241531+route:GET /v1/a"},
		{"ip+header", "ip + header:X-Tenant", req("GET", "/", "10.1.1.1:5", "X-Tenant", "t"), "ip:10.1.1.1+x-tenant:t"},
	}
	ips := &ipResolver{v4Bits: 32, v6Bits: 64}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := parseKeySpec(tt.spec)
			require.NoError(t, err)
			key, parts := d.derive(tt.r, ips, true)
			assert.Equal(t, tt.want, key)
			if key != "global" {
				assert.Equal(t, tt.want, strings.Join(parts, "+"), "the parts make up the key")
				assert.Len(t, parts, strings.Count(string(tt.spec), "+")+1)
			}
			noParts, none := d.derive(tt.r, ips, false)
			assert.Equal(t, key, noParts)
			assert.Nil(t, none)
		})
	}
	t.Run("long values are bounded and distinct", func(t *testing.T) {
		d, err := parseKeySpec(KeyHeader("K"))
		require.NoError(t, err)
		a, _ := d.derive(req("GET", "/", "1.2.3.4:5", "K", long+"a"), ips, true)
		b, _ := d.derive(req("GET", "/", "1.2.3.4:5", "K", long+"b"), ips, true)
		assert.LessOrEqual(t, len(a), len("k:")+maxKeyValue)
		assert.NotEqual(t, a, b)
		assert.Equal(t, "k:"+long[:maxKeyValue-17]+"#", a[:len("k:")+maxKeyValue-16], "a prefix, then the hash")
		c, _ := d.derive(req("GET", "/", "1.2.3.4:5", "K", long[:250], "K", long[:249]+"a"), ips, false)
		assert.NotEqual(t, a, c, "several values are joined before shortening")
	})
}

func TestClientIP(t *testing.T) {
	tests := []struct {
		name    string
		trusted []string
		v6, v4  int
		r       *http.Request
		want    string
	}{
		{"forwarded ignored by default", nil, 64, 32,
			req("GET", "/", "10.0.0.1:5", "X-Forwarded-For", "198.51.100.9"), "10.0.0.1"},
		{"real ip ignored by default", nil, 64, 32,
			req("GET", "/", "10.0.0.1:5", "X-Real-IP", "198.51.100.9"), "10.0.0.1"},
		{"forwarded ignored from untrusted", []string{"10.0.0.0/8"}, 64, 32,
			req("GET", "/", "192.0.2.1:5", "X-Forwarded-For", "198.51.100.9"), "192.0.2.1"},
		{"trusted proxy", []string{"10.0.0.0/8"}, 64, 32,
			req("GET", "/", "10.0.0.1:5", "X-Forwarded-For", "198.51.100.9"), "198.51.100.9"},
		{"rightmost untrusted hop wins", []string{"10.0.0.0/8"}, 64, 32,
			req("GET", "/", "10.0.0.1:5", "X-Forwarded-For", "6.6.6.6, 198.51.100.9, 10.2.2.2"), "198.51.100.9"},
		{"several headers", []string{"10.0.0.0/8"}, 64, 32,
			req("GET", "/", "10.0.0.1:5", "X-Forwarded-For", "6.6.6.6", "X-Forwarded-For", "198.51.100.9"), "198.51.100.9"},
		{"all trusted: leftmost", []string{"10.0.0.0/8"}, 64, 32,
			req("GET", "/", "10.0.0.1:5", "X-Forwarded-For", "10.9.9.9, 10.2.2.2"), "10.9.9.9"},
		{"malformed hop stops the walk", []string{"10.0.0.0/8"}, 64, 32,
			req("GET", "/", "10.0.0.1:5", "X-Forwarded-For", "198.51.100.9, garbage, 10.2.2.2"), "10.2.2.2"},
		{"only malformed: remote addr", []string{"10.0.0.0/8"}, 64, 32,
			req("GET", "/", "10.0.0.1:5", "X-Forwarded-For", "garbage"), "10.0.0.1"},
		{"real ip from trusted", []string{"10.0.0.1"}, 64, 32,
			req("GET", "/", "10.0.0.1:5", "X-Real-IP", "198.51.100.9"), "198.51.100.9"},
		{"forwarded ipv6 grouped", []string{"::1"}, 64, 32,
			req("GET", "/", "[::1]:5", "X-Forwarded-For", "2001:db8:0:7::1"), "2001:db8:0:7::/64"},
		{"forwarded with port", []string{"10.0.0.0/8"}, 64, 32,
			req("GET", "/", "10.0.0.1:5", "X-Forwarded-For", "198.51.100.9:1234"), "198.51.100.9"},
		{"ipv6 /48", nil, 48, 32, req("GET", "/", "[2001:db8:1:2::9]:1"), "2001:db8:1::/48"},
		{"ipv6 /128", nil, 128, 32, req("GET", "/", "[2001:db8:1:2::9]:1"), "2001:db8:1:2::9"},
		{"ipv4 /24", nil, 64, 24, req("GET", "/", "203.0.113.7:1"), "203.0.113.0/24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := newConfig([]Option{WithTrustedProxies(tt.trusted...), WithIPv6Prefix(tt.v6), WithIPv4Prefix(tt.v4)})
			require.NoError(t, cfg.limiterErr())
			assert.Equal(t, tt.want, cfg.ips.clientKey(tt.r))
		})
	}
}

// TestIPv6HostsShareAKey checks through the limiter that one IPv6 /64 cannot mint fresh quotas.
func TestIPv6HostsShareAKey(t *testing.T) {
	clock := newFakeClock()
	l := mustLimiter([]Rule{{Name: "ip", Key: KeyIP, Limit: 3, Window: 1e9 * 3600}}, WithClock(clock.Now))
	defer l.Close()
	admitted := 0
	for i := range 10 {
		res, err := l.Decide(req("GET", "/", fmt.Sprintf("[2001:db8:5:5::%x]:1", i+1)))
		require.NoError(t, err)
		if res.Allowed {
			admitted++
		}
	}
	assert.Equal(t, 3, admitted)
	res, err := l.Decide(req("GET", "/", "[2001:db8:5:6::1]:1")) // another /64
	require.NoError(t, err)
	assert.True(t, res.Allowed)
}
