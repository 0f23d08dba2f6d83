package ratelimitheader

import (
	"net/http"
	"testing"
	"time"
)

// checkInfo asserts the invariants every Info from Parse holds, whatever the server sent.
func checkInfo(t *testing.T, info Info) {
	t.Helper()
	if info.Limit < 0 {
		t.Errorf("Limit %d < 0", info.Limit)
	}
	if info.Remaining < 0 {
		t.Errorf("Remaining %d < 0", info.Remaining)
	}
	if !info.HasRemaining && info.Remaining != 0 {
		t.Errorf("Remaining %d without HasRemaining", info.Remaining)
	}
	if info.Window < 0 || info.Window > maxWindow {
		t.Errorf("Window %v outside [0, %v]", info.Window, maxWindow)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
		has  bool
	}{{"Reset", info.Reset, info.HasReset}, {"RetryAfter", info.RetryAfter, info.HasRetryAfter}} {
		if d.v < 0 || d.v > MaxDelay {
			t.Errorf("%s %v outside [0, MaxDelay]", d.name, d.v)
		}
		if !d.has && d.v != 0 {
			t.Errorf("%s %v without its Has flag", d.name, d.v)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []struct {
		value, date string
		now         int64
	}{
		{"120", "", 0},
		{"0", "", 0},
		{"1.5", "", 0},
		{"-1", "", 0},
		{"99999999999999999999999", "", 0},
		{"Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:07 GMT", 784111777},
		{"Sunday, 06-Nov-94 08:49:37 GMT", "", 784111700},
		{"Sun Nov  6 08:49:37 1994", "garbage", 784111700},
		{"Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 0001 00:00:00 GMT", -62135596800},
		{"NaN", "", 0},
		{" 7 ", "", 0},
	} {
		f.Add(s.value, s.date, s.now)
	}
	f.Fuzz(func(t *testing.T, value, date string, nowUnix int64) {
		now := time.Unix(nowUnix, 0)
		d, ok := ParseRetryAfter(value, date, now)
		if d < 0 || d > MaxDelay {
			t.Fatalf("ParseRetryAfter(%q, %q) = %v outside [0, MaxDelay]", value, date, d)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q, %q) = %v with ok false", value, date, d)
		}
		// RetryAfter on a header is the same function.
		h := http.Header{HeaderRetryAfter: {value}, "Date": {date}}
		if d2, ok2 := RetryAfter(h, now); value != "" && (d2 != d || ok2 != ok) {
			t.Fatalf("RetryAfter = (%v, %v), ParseRetryAfter = (%v, %v)", d2, ok2, d, ok)
		}
		// Parse reports the same Retry-After.
		if info := Parse(h, now); info.RetryAfter != d || info.HasRetryAfter != ok {
			t.Fatalf("Parse = (%v, %v), ParseRetryAfter = (%v, %v)", info.RetryAfter, info.HasRetryAfter, d, ok)
		}
		// What FormatRetryAfter writes for a parsed delay admits a client that waits it.
		if ok {
			back, ok := ParseRetryAfter(FormatRetryAfter(d), "", now)
			if !ok || back < d || back < time.Second {
				t.Fatalf("FormatRetryAfter(%v) read back as (%v, %v)", d, back, ok)
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	seeds := [][9]string{
		{`"default";q=100;w=60`, `"default";r=42;t=17`, "", "", "", "", "", "", ""},
		{`burst;q=10;w=1, "daily";q=1000;w=86400`, `"daily";r=7;t=3600`, "", "", "", "", "", "", ""},
		{`100;w=60`, `limit=100, remaining=42, reset=17`, "", "", "", "", "", "", ""},
		{`"p";q=1;w=0.5`, `"p";r=1;t=1234567890.25`, "", "", "", "", "", "", "Fri, 13 Feb 2009 23:31:00 GMT"},
		{"", "", "100", "42", "17", "", "", "", ""},
		{"", "", "100, 100;w=60", "-1", "1234567890", "", "", "", "Fri, 13 Feb 2009 23:31:00 GMT"},
		{"", "", "NaN", "1e3", "1.5", "7", "", "", ""},
		{"", "", "", "", "99999999999999999999999", "", "10, 10;window=1", "3", "Sun, 06 Nov 1994 08:49:37 GMT"},
		{`"default;q=1`, `r=1;;t=2`, "garbage", "", "", "", "", "", "garbage"},
		{`"default";q=-1;w=-60`, `"default";r=-1;t=-5`, "", "", "", "", "", "", ""},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], int64(784111777))
	}
	f.Fuzz(func(t *testing.T, policy, limit, xLimit, xRemaining, xReset, retryAfter, oldLimit, oldRemaining, date string, nowUnix int64) {
		h := http.Header{}
		for _, kv := range [][2]string{
			{HeaderRateLimitPolicy, policy}, {HeaderRateLimit, limit},
			{HeaderXLimit, xLimit}, {HeaderXRemaining, xRemaining}, {HeaderXReset, xReset},
			{HeaderRetryAfter, retryAfter},
			{headerOldLimit, oldLimit}, {headerOldRemaining, oldRemaining}, {headerOldReset, xReset},
			{headerXDashLimit, oldLimit}, {headerXDashReset, limit},
			{"Date", date},
		} {
			if kv[1] != "" {
				h[kv[0]] = []string{kv[1]}
			}
		}
		info := Parse(h, time.Unix(nowUnix, 0))
		checkInfo(t, info)
	})
}

// FuzzWrite checks that whatever a server puts in Fields, Write produces headers that Parse reads
// back as documented.
func FuzzWrite(f *testing.F) {
	f.Add("default", int64(100), int64(time.Minute), int64(42), int64(17*time.Second), int64(0))
	f.Add("", int64(10), int64(100*time.Millisecond), int64(0), int64(300*time.Millisecond), int64(300*time.Millisecond))
	f.Add("é\"\\", int64(1<<62), int64(time.Second+1), int64(-1), int64(-1), int64(1<<62))
	f.Fuzz(func(t *testing.T, policy string, limit, window, remaining, reset, retryAfter int64) {
		fields := Fields{Policy: policy, Limit: limit, Window: time.Duration(window), Remaining: remaining,
			Reset: time.Duration(reset), RetryAfter: time.Duration(retryAfter)}
		h := http.Header{}
		Write(h, fields)
		got := Parse(h, refNow)
		checkInfo(t, got)
		if want := expectedInfo(fields); got != want {
			t.Fatalf("Write(%+v) = %v, read back %+v, want %+v", fields, h, got, want)
		}
	})
}
