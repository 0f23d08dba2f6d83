package ratelimitheader

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// refNow is the client's clock in tests: 1994-11-06 08:49:37 UTC, the RFC 9110 example date.
var refNow = time.Date(1994, time.November, 6, 8, 49, 37, 0, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	const date = "Sun, 06 Nov 1994 08:49:37 GMT" // equals refNow
	tests := []struct {
		name   string
		value  string
		date   string
		now    time.Time
		want   time.Duration
		wantOK bool
	}{
		{"delay seconds", "120", "", refNow, 120 * time.Second, true},
		{"zero", "0", "", refNow, 0, true},
		{"surrounding whitespace", " \t5 ", "", refNow, 5 * time.Second, true},
		{"leading zeros", "007", "", refNow, 7 * time.Second, true},
		{"fraction", "1.5", "", refNow, 1500 * time.Millisecond, true},
		{"fraction beyond nanoseconds rounds up", "1.0000000001", "", refNow, time.Second + 1, true},
		{"tiny fraction rounds up", "0.0000000001", "", refNow, 1, true},
		{"fraction of 9s rounds up into seconds", "0.9999999999", "", refNow, time.Second, true},
		{"delay above MaxDelay clamped", "90000", "", refNow, MaxDelay, true},
		{"overflowing delay clamped", "99999999999999999999999999999", "", refNow, MaxDelay, true},
		{"empty", "", "", refNow, 0, false},
		{"only whitespace", "   ", "", refNow, 0, false},
		{"negative", "-5", "", refNow, 0, false},
		{"plus sign", "+5", "", refNow, 0, false},
		{"garbage", "soon", "", refNow, 0, false},
		{"trailing garbage", "5s", "", refNow, 0, false},
		{"exponent", "1e3", "", refNow, 0, false},
		{"NaN", "NaN", "", refNow, 0, false},
		{"Inf", "Inf", "", refNow, 0, false},
		{"hex", "0x10", "", refNow, 0, false},
		{"underscore", "1_000", "", refNow, 0, false},
		{"dot without fraction", "1.", "", refNow, 0, false},
		{"fraction without integer", ".5", "", refNow, 0, false},
		{"two dots", "1.2.3", "", refNow, 0, false},
		{"list", "5, 6", "", refNow, 0, false},
		// A date is whole seconds, the instant meant up to one later: every wait to one is a second
		// longer than the difference of the two dates (DateGrain).
		{"IMF-fixdate against Date", "Sun, 06 Nov 1994 08:50:07 GMT", date, refNow, 31 * time.Second, true},
		{"RFC 850 against Date", "Sunday, 06-Nov-94 08:50:07 GMT", date, refNow, 31 * time.Second, true},
		{"asctime against Date", "Sun Nov  6 08:50:07 1994", date, refNow, 31 * time.Second, true},
		{"Date corrects a client clock one hour ahead", "Sun, 06 Nov 1994 08:50:07 GMT", date, refNow.Add(time.Hour), 31 * time.Second, true},
		{"without Date measured against now", "Sun, 06 Nov 1994 08:50:07 GMT", "", refNow.Add(10 * time.Second), 21 * time.Second, true},
		{"malformed Date measured against now", "Sun, 06 Nov 1994 08:50:07 GMT", "yesterday", refNow.Add(10 * time.Second), 21 * time.Second, true},
		{"date equal to Date waits its second", date, date, refNow, time.Second, true},
		{"date a second before Date is 0", "Sun, 06 Nov 1994 08:49:36 GMT", date, refNow, 0, true},
		{"date in the past is 0", "Sun, 06 Nov 1994 08:49:00 GMT", date, refNow, 0, true},
		{"far future date clamped", "Fri, 31 Dec 9999 23:59:59 GMT", date, refNow, MaxDelay, true},
		{"malformed date", "Sun, 06 Nov 1994 25:99:99 GMT", date, refNow, 0, false},
		{"date with a zone name other than GMT or UTC", "Sun, 06 Nov 1994 08:50:07 PST", date, refNow, 0, false},
		// sethvargo/go-limiter writes time.RFC1123 of a UTC time: "UTC" for "GMT".
		{"RFC 1123 with UTC", "Sun, 06 Nov 1994 08:50:07 UTC", date, refNow, 31 * time.Second, true},
		{"RFC 1123 with a numeric zone", "Sun, 06 Nov 1994 09:50:07 +0100", date, refNow, 31 * time.Second, true},
		{"Date in UTC", "Sun, 06 Nov 1994 08:50:07 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", refNow.Add(time.Hour), 31 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseRetryAfter(tt.value, tt.date, tt.now)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		wantOK bool
	}{
		{"absent", http.Header{}, 0, false},
		{"nil header", nil, 0, false},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second, true},
		{"first of several values", http.Header{"Retry-After": {"3", "9"}}, 3 * time.Second, true},
		{"empty value", http.Header{"Retry-After": {""}}, 0, false},
		{"date with Date header", http.Header{
			"Retry-After": {"Sun, 06 Nov 1994 08:49:47 GMT"},
			"Date":        {"Sun, 06 Nov 1994 08:49:37 GMT"},
		}, 11 * time.Second, true}, // 10 s between the dates, and the date's second (DateGrain)
		{"date without Date header", http.Header{"Retry-After": {"Sun, 06 Nov 1994 08:49:47 GMT"}}, 11 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RetryAfter(tt.header, refNow)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
			// Same answer as the documented equivalent.
			wantD, wantOK := ParseRetryAfter(tt.header.Get("Retry-After"), tt.header.Get("Date"), refNow)
			assert.Equal(t, wantOK, ok)
			assert.Equal(t, wantD, got)
		})
	}
}

func TestFormatRetryAfter(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Hour, "1"},
		{0, "1"},
		{1, "1"},
		{time.Second, "1"},
		{time.Second + 1, "2"},
		{1500 * time.Millisecond, "2"},
		{2 * time.Second, "2"},
		{59*time.Second + 999*time.Millisecond, "60"},
		{MaxDelay, "86400"},
		// Not clamped: the server must never advertise less than the real wait.
		{MaxDelay + 1, "86401"},
		{48 * time.Hour, "172800"},
		{time.Duration(1<<63 - 1), "9223372037"},
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			assert.Equal(t, tt.want, FormatRetryAfter(tt.d))
		})
	}
}

// TestFormatRetryAfterAdmits checks that a client waiting exactly the advertised delay waits at least
// as long as the server asked, and less than a second more.
func TestFormatRetryAfterAdmits(t *testing.T) {
	for _, d := range []time.Duration{1, 999 * time.Millisecond, time.Second, time.Second + 1, 17*time.Second + 3, MaxDelay - 1, MaxDelay} {
		t.Run(d.String(), func(t *testing.T) {
			s := FormatRetryAfter(d)
			_, err := strconv.ParseInt(s, 10, 64)
			assert.NoError(t, err, "delay-seconds is a plain integer")
			got, ok := ParseRetryAfter(s, "", refNow)
			assert.True(t, ok)
			assert.GreaterOrEqual(t, got, d)
			assert.Less(t, got-d, time.Second)
		})
	}
}
