package dialects

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The recognition order: vendors over IETF over X's spelling over the generic triple.
func TestRecognitionOrder(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name string
		hdrs []string
		want string
	}{
		{"IETF wins over X-RateLimit", []string{"RateLimit", `"d";r=1;t=2`, "X-RateLimit-Limit", "10"}, "ietf"},
		{"Discord wins over its X-RateLimit triple", []string{"X-RateLimit-Bucket", "b", "X-RateLimit-Limit", "10"}, "discord"},
		{"GitHub wins over its X-RateLimit triple", []string{"X-GitHub-Request-Id", "1", "X-RateLimit-Limit", "10"}, "github"},
		{"OpenAI families", []string{"X-RateLimit-Limit-Requests", "10", "X-RateLimit-Limit", "10"}, "openai"},
		{"Azure OpenAI sends OpenAI's families and retry-after-ms", []string{"X-RateLimit-Remaining-Tokens", "0", "Retry-After-Ms", "10"}, "openai"},
		{"dashed spelling is X's", []string{"X-Rate-Limit-Limit", "10"}, "twitter"},
		{"generic", []string{"X-RateLimit-Limit", "10"}, "x-ratelimit"},
		{"nothing", []string{"Retry-After", "3"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Read(response(200, "", tt.hdrs...), now).Dialect)
		})
	}
}

// A response no dialect recognises is still a throttle when it is a 429, with its Retry-After.
func TestUnrecognisedThrottle(t *testing.T) {
	got := Read(response(429, "", "Retry-After", "1.5"), time.Now())
	assert.Equal(t, Reading{Throttled: true, RetryAfter: 1500 * time.Millisecond, HasRetryAfter: true}, got)
	assert.Equal(t, Reading{}, Read(nil, time.Now()))
	assert.Equal(t, Reading{}, Read(&http.Response{StatusCode: 200}, time.Now()), "nil Header")
}

// upper is a user dialect: it recognises X-Upper-Remaining.
type upper struct{}

func (upper) Name() string { return "upper" }
func (upper) Read(resp *http.Response, _ time.Time) (Reading, bool) {
	n, ok := parseCount(resp.Header.Get("X-Upper-Remaining"))
	if !ok {
		return Reading{}, false
	}
	return Reading{Quotas: []Quota{{Remaining: n, HasRemaining: true}}}, true
}

func TestReaderOptions(t *testing.T) {
	r, err := NewReader(WithDialect(upper{}), WithThrottleStatus(429, 503), ForHost("api.example.com", "x-ratelimit"))
	require.NoError(t, err)
	now := time.Now()

	got := r.Read(response(503, "", "X-Upper-Remaining", "3", "X-RateLimit-Limit", "9"), now)
	assert.Equal(t, Reading{Dialect: "upper", Throttled: true, Quotas: []Quota{{Remaining: 3, HasRemaining: true}}}, got,
		"a user dialect is tried first and gets its Dialect name; 503 is a configured throttle")

	resp := response(200, "", "X-Rate-Limit-Limit", "7", "X-Upper-Remaining", "3")
	resp.Request, _ = http.NewRequest(http.MethodGet, "https://API.example.com/v1", nil)
	assert.Equal(t, "x-ratelimit", r.Read(resp, now).Dialect, "a forced host is read by its dialect alone")

	for _, tt := range []struct {
		opts []Option
		err  error
	}{
		{[]Option{ForHost("h", "klingon")}, ErrUnknownDialect},
		{[]Option{ForHost("", "github")}, ErrInvalidOption},
		{[]Option{WithDialect(nil)}, ErrInvalidOption},
		{[]Option{WithThrottleStatus(200)}, ErrInvalidOption},
	} {
		_, err := NewReader(tt.opts...)
		assert.True(t, errors.Is(err, tt.err), "%v", err)
	}
}

func TestNamesAndLookup(t *testing.T) {
	assert.Equal(t, []string{"github", "anthropic", "openai", "shopify", "discord", "salesforce", "azure", "stripe", "ietf", "twitter", "x-ratelimit"}, Names())
	for _, name := range Names() {
		d, ok := Lookup(name)
		require.True(t, ok)
		assert.Equal(t, name, d.Name())
	}
	assert.Len(t, Builtins(), len(Names()))
}

func TestCredentialKey(t *testing.T) {
	const secretA, secretB = "Bearer ghp_aaaaaaaaaaaaaaaaaaaa", "Bearer ghp_bbbbbbbbbbbbbbbbbbbb"
	req := func(auth string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, "https://API.github.com/user", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		return r
	}
	a, b := CredentialKey(req(secretA), ""), CredentialKey(req(secretB), "")
	assert.NotEqual(t, a, b, "two credentials, two keys")
	assert.Equal(t, a, CredentialKey(req(secretA), ""), "stable")
	assert.True(t, strings.HasPrefix(a, "api.github.com#"))
	assert.Len(t, a, len("api.github.com#")+16)
	for _, k := range []string{a, b} {
		assert.NotContains(t, k, "ghp_")
		assert.NotContains(t, k, "aaaa")
		assert.NotContains(t, k, "bbbb")
	}
	assert.Equal(t, "api.github.com", CredentialKey(req(""), ""), "no credential: the host alone")

	k := req("")
	k.Header.Set("X-Api-Key", "sk-123")
	assert.NotEqual(t, "api.github.com", CredentialKey(k, "X-Api-Key"))
	salted := Keyer{Salt: []byte("process-secret")}.Key(req(secretA))
	assert.NotEqual(t, a, salted, "a salt changes the hash")
	assert.Equal(t, "", Keyer{}.Key(nil))
}

// TestKeyerFunc: the remembering key function gives Key's key for every request (hosts, letter
// cases, credentials, headers, salt, several values, a changed credential), and a credential seen
// last costs no allocation; its salt is its own copy.
func TestKeyerFunc(t *testing.T) {
	req := func(url string, hdrs ...string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		for i := 0; i+1 < len(hdrs); i += 2 {
			r.Header.Add(hdrs[i], hdrs[i+1])
		}
		return r
	}
	reqs := []*http.Request{
		req("https://API.github.com/user", "Authorization", "Bearer a"),
		req("https://API.github.com/user", "Authorization", "Bearer a"),
		req("https://api.github.com/user", "Authorization", "Bearer a"),
		req("https://api.github.com/user", "Authorization", "Bearer b"),
		req("https://api.github.com:8443/user", "Authorization", "Bearer b"),
		req("https://api.github.com/user"),
		req("https://api.github.com/user", "Authorization", ""),
		req("https://api.github.com/user", "Authorization", "Bearer b", "Authorization", "Bearer c"),
		req("https://api.github.com/user", "X-Api-Key", "sk-1"),
		req("https://api.github.com/user", "X-Api-Key", "sk-2"),
		req("https://api.github.com/user", "Authorization", "Bearer b"),
	}
	salt := []byte("process-secret")
	for _, k := range []Keyer{{}, {Header: "X-Api-Key"}, {Salt: salt}} {
		want := make([]string, len(reqs))
		for i, r := range reqs {
			want[i] = k.Key(r)
		}
		f := k.Func()
		salt[0] = 'P' // f keys with the salt as it was
		for i, r := range reqs {
			assert.Equal(t, want[i], f(r), "%+v, request %d", k, i)
			assert.Equal(t, want[i], f(r), "%+v, request %d again", k, i)
		}
		salt[0] = 'p'
		assert.Equal(t, "", f(nil))
	}
	f := Keyer{}.Func()
	r := reqs[0]
	f(r)
	assert.Zero(t, testing.AllocsPerRun(100, func() { f(r) }), "the credential seen last")
}

// TestCarriesLimitsSeesEveryBuiltinField: the fast path that skips a success's headers never
// skips a field a built-in dialect reads, in canonical or any other letter case.
func TestCarriesLimitsSeesEveryBuiltinField(t *testing.T) {
	fields := []string{
		"RateLimit", "RateLimit-Policy", "Ratelimit-Limit", "Ratelimit-Remaining", "Ratelimit-Reset",
		"Beta-Ratelimit", "Beta-Ratelimit-Policy", "X-Ratelimit-Limit", "X-Ratelimit-Remaining",
		"X-Ratelimit-Reset", "X-Ratelimit-Used", "X-Ratelimit-Resource", "X-Ratelimit-Bucket",
		"X-Ratelimit-Global", "X-Ratelimit-Scope", "X-Ratelimit-Reset-After", "X-Ratelimit-Limit-Requests",
		"X-Ratelimit-Reset-Tokens", "X-Rate-Limit-Limit", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset",
		"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Input-Tokens-Reset",
		"Retry-After", "Retry-After-Ms", "X-Ms-Retry-After-Ms", "X-Ms-Ratelimit-Remaining-Subscription-Reads",
		"Sforce-Limit-Info", "Stripe-Should-Retry", "X-Shopify-Shop-Api-Call-Limit", "x-ratelimit-remaining", "Request-Id", "X-Github-Request-Id",
		"X-Github-Media-Type",
	}
	for _, f := range fields {
		if !carriesLimits(http.Header{f: {"1"}}) {
			t.Errorf("%s: not seen", f)
		}
		if familyOf(f) != 0 && !limitField(f) {
			t.Errorf("%s: of a family, but not a limit field (scanFields looks no further)", f)
		}
		if familyOf(f) != 0 && !familyInitial[f[0]] {
			t.Errorf("%s: of a family, but its initial is not in familyInitial (scanFields does not ask)", f)
		}
	}
	for _, f := range []string{"Content-Type", "Date", "X-Request-Id", "Etag", "Server", "Cache-Control", "Vary", "Connection", "Content-Length", "Accept-Ranges", "Last-Modified"} {
		if carriesLimits(http.Header{f: {"1"}}) {
			t.Errorf("%s: taken for a limit field", f)
		}
	}
	// Every response of the vendor fixtures that reads as something still does.
	resp := &http.Response{StatusCode: 200, Header: http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Remaining": {"59"}, "X-Ratelimit-Reset": {"1700000000"}}}
	if r := Read(resp, time.Unix(1699999990, 0)); len(r.Quotas) == 0 {
		t.Errorf("a success with X-RateLimit fields read as nothing: %+v", r)
	}
}

// carriesLimits (a test's reference) reports whether h may hold a field a built-in dialect reads or recognises a
// response by: nearly every such name contains "ratelimit" or "rate-limit"; the others are
// Retry-After and its variants, Salesforce's Sforce-Limit-Info, Stripe-Should-Retry and Request-Id,
// Shopify's call limit and GitHub's X-GitHub-* (see limitField). It
// looks at each name once, without allocating; a name it cannot rule out counts as carrying.
func carriesLimits(h http.Header) bool {
	for k := range h {
		if limitField(k) {
			return true
		}
	}
	return false
}

// ReadInto reads as Read does, storing a built-in dialect's quotas in the array it is given
// (without allocating for them); a user dialect's quotas are the slice it returned, and the array
// is not written.
func TestReadInto(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tt := range []struct {
		hdrs    []string
		noAlloc bool // nothing but the quotas would allocate
	}{
		{[]string{"X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "7", "X-RateLimit-Reset", "30"}, true},
		{[]string{"X-RateLimit-Limit-Requests", "10", "X-RateLimit-Limit-Tokens", "1000", "X-RateLimit-Remaining-Tokens", "0"}, true},
		{[]string{"RateLimit-Policy", `"a";q=10;w=60, "b";q=100;w=3600`, "RateLimit", `"a";r=3;t=5, "b";r=50;t=100`}, false},
		{[]string{"Content-Type", "application/json"}, true},
		{[]string{"Retry-After", "3"}, true},
	} {
		resp := response(429, "", tt.hdrs...)
		want := Read(resp, now)
		var buf [4]Quota
		got := ReadInto(buf[:1], resp, now)
		if len(want.Quotas) == 0 {
			assert.Empty(t, got.Quotas, "%v", tt.hdrs)
			got.Quotas = nil
		} else {
			assert.Same(t, &buf[0], &got.Quotas[0], "%v: the quotas are in the array given", tt.hdrs)
		}
		assert.Equal(t, want, got, "%v", tt.hdrs)
		if tt.noAlloc {
			allocs := testing.AllocsPerRun(100, func() { got = ReadInto(buf[:], resp, now) })
			assert.Zero(t, allocs, "%v", tt.hdrs)
		}
	}

	r, err := NewReader(WithDialect(upper{}))
	require.NoError(t, err)
	resp := response(200, "", "X-Upper-Remaining", "3")
	buf := []Quota{{Name: "mine"}}
	assert.Equal(t, r.Read(resp, now), r.ReadInto(buf, resp, now))
	assert.Equal(t, "mine", buf[0].Name, "a user dialect's reading leaves the array as it was")
}
