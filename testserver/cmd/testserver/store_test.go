package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/internal/redistest"
)

// TestStoreFlagsBad: bad store flags exit 2 before listening with one line naming the flag (and
// never the URL's password); so do rules the Redis store cannot decide exactly.
func TestStoreFlagsBad(t *testing.T) {
	const redisURL = "redis://127.0.0.1:1/0" // never dialled: these all fail before
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown store", []string{"-store", "mysql://db"}, []string{`"mysql://db"`, "-store", "redis://"}},
		{"bad redis URL", []string{"-store", "redis://127.0.0.1:6379/notadb"}, []string{"-store", "notadb"}},
		{"password hidden", []string{"-store", "redis://u:s3cret@127.0.0.1:6379/x"}, []string{"-store", "xxxxx"}},
		{"unknown policy", []string{"-store", redisURL, "-store-policy", "open"}, []string{`"open"`, "-store-policy", "fail-open"}},
		{"policy without redis", []string{"-store-policy", "fail-open"}, []string{`"fail-open"`, "-store-policy", "-store redis://"}},
		{"share without redis", []string{"-store-fallback-share", "0.5"}, []string{"-store-fallback-share", "-store redis://"}},
		{"share negative", []string{"-store", redisURL, "-store-fallback-share", "-0.5"}, []string{`"-0.5"`, "-store-fallback-share"}},
		{"instances negative", []string{"-store", redisURL, "-store-instances", "-1"}, []string{`"-1"`, "-store-instances"}},
		{"instances without redis", []string{"-store-instances", "3"}, []string{"-store-instances", "-store redis://"}},
		{"share above one", []string{"-store", redisURL, "-store-fallback-share", "1.5"}, []string{`"1.5"`, "-store-fallback-share"}},
		{"timeout zero", []string{"-store", redisURL, "-store-timeout", "0s"}, []string{`"0s"`, "-store-timeout"}},
		{"window not whole microseconds", []string{"-store", redisURL, "-limit", "3", "-window", "1500ns"}, []string{"-store", "exactly", "window"}},
		{"sliding window beyond exact", []string{"-store", redisURL, "-algorithm", "sliding-window", "-limit", "30000", "-window", "24h"},
			[]string{"-store", "limit*window"}},
		{"config beyond exact", []string{"-store", redisURL, "-config", writeFile(t, "big.json",
			`{"rules": [{"name": "big", "algorithm": "token-bucket", "limit": 30000, "window": "24h"}]}`)}, []string{`"big"`, "burst*window"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			if code := run(context.Background(), tt.args, &stdout, &stderr, nil); code != 2 {
				t.Errorf("exit status %d, want 2; stderr: %s", code, stderr.String())
			}
			msg := stderr.String()
			if stdout.Len() != 0 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "testserver: ") {
				t.Errorf("stdout %q, stderr %q: want nothing and one line", stdout.String(), msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q does not mention %q", msg, w)
				}
			}
			if strings.Contains(msg, "s3cret") {
				t.Errorf("stderr shows the password: %q", msg)
			}
		})
	}
}

// TestStoreRedisShared: two instances with -store on one Redis share one limit (5 per hour over
// 20 concurrent requests: exactly 5 admitted in all); when Redis stops each keeps answering by
// its own -store-policy (fail-closed: 429, fail-open: 200) and says so on stderr; a config
// reload to rules the store cannot decide exactly is refused and the old rules stay.
func TestStoreRedisShared(t *testing.T) {
	srv := redistest.Start(t)
	cfg := writeFile(t, "rules.json", `{"rules": [{"name": "shared", "algorithm": "sliding-log", "limit": 5, "window": "1h"}]}`)
	closed := start(t, "-store", srv.URL(), "-store-policy", "fail-closed", "-config", cfg)
	open := start(t, "-store", srv.URL(), "-store-policy", "fail-open", "-config", cfg)
	for _, in := range []*instance{closed, open} {
		in.stderr.waitLine(t, "Redis answers", in.exited)
	}

	var admitted int
	results := make(chan []*http.Response, 2)
	for _, in := range []*instance{closed, open} {
		go func() { results <- in.fireNoFatal(t, 10, "/") }()
	}
	for range 2 {
		for _, r := range <-results {
			if r != nil && r.StatusCode == http.StatusOK {
				admitted++
			}
		}
	}
	if admitted != 5 {
		t.Fatalf("two instances on one Redis admitted %d of 20, want 5", admitted)
	}

	srv.Stop()
	if resp, _ := closed.get(t, "/"); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("fail-closed with Redis down: %s, Retry-After %q", resp.Status, resp.Header.Get("Retry-After"))
	}
	if resp, _ := open.get(t, "/"); resp.StatusCode != http.StatusOK {
		t.Errorf("fail-open with Redis down: %s", resp.Status)
	}
	closed.stderr.waitLine(t, "made by -store-policy fail-closed", closed.exited)
	open.stderr.waitLine(t, "made by -store-policy fail-open", open.exited)

	replaceFile(t, cfg, `{"rules": [{"name": "shared", "algorithm": "sliding-window", "limit": 30000, "window": "24h"}]}`)
	open.reload <- nil
	if line := open.stderr.waitLine(t, "reload failed", open.exited); !strings.Contains(line, "limit*window") {
		t.Errorf("reload line %q does not say why", line)
	}
}

// fireNoFatal is fire for use off the test goroutine: it reports errors with t.Error and leaves
// nil responses.
func (in *instance) fireNoFatal(t *testing.T, n int, path string) []*http.Response {
	out := make([]*http.Response, n)
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			resp, err := in.client.Get(in.url + path)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			out[i] = resp
		}()
	}
	for range n {
		<-done
	}
	return out
}

func TestStoreFlagsInUsage(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"-h"}, &stdout, &stderr, nil); code != 0 {
		t.Fatalf("-h: exit status %d", code)
	}
	for _, flag := range append([]string{"store"}, storeFlags...) {
		if !strings.Contains(stdout.String(), "-"+flag+" ") {
			t.Errorf("usage does not mention -%s:\n%s", flag, stdout.String())
		}
	}
}
