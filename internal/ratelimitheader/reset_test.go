package ratelimitheader

import (
	"net/http"
	"testing"
	"time"
)

func TestParseReset(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	date := now.Add(-2 * time.Second).UTC().Format(http.TimeFormat) // server clock 2 s behind
	tests := []struct {
		name, value, date string
		want              time.Duration
		ok                bool
	}{
		{"delta", "17", "", 17 * time.Second, true},
		{"fraction", "1.5", "", 1500 * time.Millisecond, true},
		{"first element", "30, 30;w=60", "", 30 * time.Second, true},
		{"epoch seconds vs now", "1700000060", "", time.Minute, true},
		{"epoch seconds vs Date", "1700000060", date, 62 * time.Second, true},
		{"epoch millis", "1700000001500", "", 1500 * time.Millisecond, true},
		{"past epoch", "1600000000", "", 0, true},
		{"huge delta clamped", "999999", "", MaxDelay, true},
		{"negative", "-1", "", 0, false},
		{"empty", "", "", 0, false},
		{"date is not a number", "2025-10-25T12:00:00Z", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseReset(tt.value, tt.date, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseReset(%q, %q) = %v, %v; want %v, %v", tt.value, tt.date, got, ok, tt.want, tt.ok)
			}
		})
	}
}
