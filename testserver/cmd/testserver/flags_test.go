package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver"
)

func TestParseArgsGood(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want testserver.Rule // compared field by field below; Name is always "default"
		addr string
	}{
		{
			name: "defaults",
			want: testserver.Rule{Algorithm: "token-bucket", Limit: 100, Window: time.Second, Mode: "hard", Key: "global"},
			addr: "127.0.0.1:8080",
		},
		{
			name: "the acceptance run",
			args: []string{"-algorithm", "sliding-log", "-limit", "50", "-window", "1h", "-burst", "50", "-addr", ":0"},
			want: testserver.Rule{Algorithm: "sliding-log", Limit: 50, Window: time.Hour, Burst: 50, Mode: "hard", Key: "global"},
			addr: ":0",
		},
		{
			name: "soft takes the default percent",
			args: []string{"-mode", "soft"},
			want: testserver.Rule{Algorithm: "token-bucket", Limit: 100, Window: time.Second, Mode: "soft", SoftPercent: 10, Key: "global"},
		},
		{
			name: "soft with a percent",
			args: []string{"-mode=soft", "-soft-percent=25"},
			want: testserver.Rule{Algorithm: "token-bucket", Limit: 100, Window: time.Second, Mode: "soft", SoftPercent: 25, Key: "global"},
		},
		{
			name: "elastic defaults: twice the limit, 64 in flight",
			args: []string{"-mode", "elastic", "-limit", "7"},
			want: testserver.Rule{Algorithm: "token-bucket", Limit: 7, Window: time.Second, Mode: "elastic", Ceiling: 14, Capacity: 64, Key: "global"},
		},
		{
			name: "elastic explicit",
			args: []string{"-mode", "elastic", "-limit", "7", "-ceiling", "9", "-capacity", "3"},
			want: testserver.Rule{Algorithm: "token-bucket", Limit: 7, Window: time.Second, Mode: "elastic", Ceiling: 9, Capacity: 3, Key: "global"},
		},
		{
			name: "shadow, header key",
			args: []string{"-mode", "shadow", "-key", "header:X-API-Key"},
			want: testserver.Rule{Algorithm: "token-bucket", Limit: 100, Window: time.Second, Mode: "shadow", Key: "header:X-API-Key"},
		},
		{
			name: "leaky bucket shaping, ip key",
			args: []string{"-algorithm", "leaky-bucket", "-shape", "-burst", "5", "-key", "ip"},
			want: testserver.Rule{Algorithm: "leaky-bucket", Limit: 100, Window: time.Second, Burst: 5, Mode: "hard", Key: "ip", Shape: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseArgs(tt.args)
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tt.args, err)
			}
			got := o.rule
			w := tt.want
			w.Name = "default"
			if got.Name != w.Name || got.Algorithm != w.Algorithm || got.Limit != w.Limit || got.Window != w.Window ||
				got.Burst != w.Burst || got.Mode != w.Mode || got.SoftPercent != w.SoftPercent || got.Ceiling != w.Ceiling ||
				got.Capacity != w.Capacity || got.Key != w.Key || got.Shape != w.Shape {
				t.Errorf("rule = %+v\nwant   %+v", got, w)
			}
			if tt.addr != "" && o.addr != tt.addr {
				t.Errorf("addr = %q, want %q", o.addr, tt.addr)
			}
		})
	}
}

func TestParseArgsSettings(t *testing.T) {
	o, err := parseArgs([]string{"-config", "rules.json", "-status", "503", "-headers=false", "-upstream", "http://127.0.0.1:9/base", "-max-keys", "10"})
	if err != nil {
		t.Fatal(err)
	}
	if o.configPath != "rules.json" || o.status == nil || *o.status != 503 || o.headers == nil || *o.headers ||
		o.maxKeys == nil || *o.maxKeys != 10 || o.upstream == nil || o.upstream.String() != "http://127.0.0.1:9/base" {
		t.Errorf("options = %+v", o)
	}
	o, err = parseArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.status != nil || o.headers != nil || o.maxKeys != nil || o.upstream != nil || o.shutdownTimeout != defaultShutdownTimeout {
		t.Errorf("defaults: options = %+v, want no explicit settings", o)
	}
	// -dialect leaves the algorithm to the persona unless -algorithm is given.
	o, err = parseArgs([]string{"-dialect", "shopify", "-limit", "40", "-window", "20s"})
	if err != nil || o.dialect != "shopify" || o.rule.Algorithm != "" {
		t.Errorf("-dialect shopify: options = %+v, %v", o, err)
	}
	l, err := o.newLimiter(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Rules()[0].Algorithm; got != "leaky-bucket" {
		t.Errorf("-dialect shopify: algorithm %q, want the persona's leaky-bucket", got)
	}
	_ = l.Close()
	o, err = parseArgs([]string{"-dialect", "shopify", "-algorithm", "fixed-window"})
	if err != nil || o.rule.Algorithm != "fixed-window" {
		t.Errorf("-dialect with -algorithm: options = %+v, %v", o, err)
	}
	if _, err := parseArgs([]string{"-h"}); !errors.Is(err, errHelp) {
		t.Errorf("-h: err = %v, want errHelp", err)
	}
}

// TestBadInput runs the whole command on bad flags and config files: each exits 2 before
// listening, prints nothing on stdout and one stderr line naming the bad value.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want []string // substrings of the stderr line
	}{
		{"negative limit", []string{"-limit", "-5"}, []string{`"-5"`, "-limit", "at least 1"}},
		{"zero limit", []string{"-limit", "0"}, []string{`"0"`, "-limit"}},
		{"limit not a number", []string{"-limit", "many"}, []string{`"many"`, "-limit"}},
		{"zero window", []string{"-window", "0s"}, []string{`"0s"`, "-window", "positive"}},
		{"negative window", []string{"-window", "-1s"}, []string{`"-1s"`, "-window"}},
		{"window not a duration", []string{"-window", "5"}, []string{`"5"`, "-window"}},
		{"unknown algorithm", []string{"-algorithm", "gcra"}, []string{`"gcra"`, "-algorithm", "token-bucket"}},
		{"unknown mode", []string{"-mode", "strict"}, []string{`"strict"`, "-mode", "hard"}},
		{"bad key", []string{"-key", "cookie:x"}, []string{`"cookie:x"`, "-key"}},
		{"empty header key", []string{"-key", "header:"}, []string{`"header:"`, "-key"}},
		{"shape without leaky bucket", []string{"-shape", "-algorithm", "fixed-window"}, []string{"-shape", "leaky-bucket"}},
		{"burst on a window algorithm", []string{"-algorithm", "sliding-log", "-burst", "7"}, []string{`"7"`, "-burst"}},
		{"negative burst", []string{"-burst", "-1"}, []string{`"-1"`, "-burst"}},
		{"soft percent outside soft", []string{"-soft-percent", "5"}, []string{`"5"`, "-soft-percent", "soft"}},
		{"soft percent out of range", []string{"-mode", "soft", "-soft-percent", "-3"}, []string{`"-3"`, "-soft-percent"}},
		{"ceiling not above limit", []string{"-mode", "elastic", "-limit", "10", "-ceiling", "10"}, []string{`"10"`, "-ceiling"}},
		{"zero capacity", []string{"-mode", "elastic", "-capacity", "0"}, []string{`"0"`, "-capacity"}},
		{"ceiling outside elastic", []string{"-ceiling", "500"}, []string{`"500"`, "-ceiling", "elastic"}},
		{"status not an error", []string{"-status", "200"}, []string{`"200"`, "-status"}},
		{"status too big", []string{"-status", "600"}, []string{`"600"`, "-status"}},
		{"max keys zero", []string{"-max-keys", "0"}, []string{`"0"`, "-max-keys"}},
		{"unknown dialect", []string{"-dialect", "klingon"}, []string{`"klingon"`, "-dialect", "github"}},
		{"headers not a bool", []string{"-headers=maybe"}, []string{`"maybe"`, "-headers"}},
		{"upstream scheme", []string{"-upstream", "ftp://example.com"}, []string{`"ftp://example.com"`, "-upstream", "http"}},
		{"upstream without host", []string{"-upstream", "http://"}, []string{`"http://"`, "-upstream", "host"}},
		{"upstream relative", []string{"-upstream", "localhost:9000"}, []string{`"localhost:9000"`, "-upstream"}},
		{"upstream bad escape", []string{"-upstream", "http://h/%zz"}, []string{`"http://h/%zz"`, "-upstream"}},
		{"addr without port", []string{"-addr", "localhost"}, []string{`"localhost"`, "-addr"}},
		{"addr port not a number", []string{"-addr", "127.0.0.1:http"}, []string{`"127.0.0.1:http"`, "-addr", "port"}},
		{"addr port too big", []string{"-addr", "127.0.0.1:70000"}, []string{`"127.0.0.1:70000"`, "-addr"}},
		{"shutdown timeout", []string{"-shutdown-timeout", "0s"}, []string{`"0s"`, "-shutdown-timeout"}},
		{"unknown flag", []string{"-limt", "5"}, []string{"-limt"}},
		{"stray argument", []string{"serve"}, []string{`"serve"`}},
		{"config with rule flags", []string{"-config", "x.json", "-limit", "5", "-mode", "soft"}, []string{"-config", "-limit", "-mode"}},
		{"empty config name", []string{"-config", ""}, []string{"-config"}},
		{"missing config", []string{"-config", dir + "/none.json"}, []string{"none.json", "no such file"}},
		{"config is a directory", []string{"-config", dir}, []string{"-config", dir}},
		{"malformed config", []string{"-config", writeFile(t, "bad.json", `{"rules": [`)}, []string{"bad.json", "invalid config"}},
		{"unknown field", []string{"-config", writeFile(t, "typo.json", `{"rules": [{"limt": 5, "window": "1s"}]}`)}, []string{"typo.json", "limt"}},
		{"unknown top-level field", []string{"-config", writeFile(t, "top.json", `{"rulez": [], "rules": [{"limit": 5, "window": "1s"}]}`)}, []string{"top.json", "rulez"}},
		{"bad rule value", []string{"-config", writeFile(t, "neg.json", `{"rules": [{"name": "api", "limit": -5, "window": "1s"}]}`)}, []string{"neg.json", `"api"`, `"-5"`, "limit"}},
		{"bad window in config", []string{"-config", writeFile(t, "win.json", `{"rules": [{"limit": 5, "window": "soon"}]}`)}, []string{"win.json", "soon"}},
		{"no rules", []string{"-config", writeFile(t, "empty.json", `{}`)}, []string{"empty.json", "rules"}},
		{"duplicate rule names", []string{"-config", writeFile(t, "dup.json", `[{"name":"a","limit":1,"window":"1s"},{"name":"a","limit":2,"window":"1s"}]`)}, []string{"dup.json", `"a"`}},
		{"bad setting in config", []string{"-config", writeFile(t, "status.json", `{"status": 200, "rules": [{"limit": 5, "window": "1s"}]}`)}, []string{"status.json", "200"}},
		{"bad status flag with config", []string{"-config", writeFile(t, "ok.json", `{"rules": [{"limit": 5, "window": "1s"}]}`), "-status", "99"}, []string{`"99"`, "-status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run(context.Background(), tt.args, &stdout, &stderr, nil)
			if code != 2 {
				t.Errorf("exit status %d, want 2; stderr: %s", code, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "testserver: ") {
				t.Errorf("stderr = %q, want one line starting with \"testserver: \"", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr = %q, want it to mention %q", msg, w)
				}
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine ") {
				t.Errorf("stderr looks like a panic: %q", msg)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"-h"}, &stdout, &stderr, nil); code != 0 {
		t.Fatalf("-h: exit status %d, want 0", code)
	}
	for _, flag := range append(append([]string{}, ruleFlags...), "addr", "status", "headers", "upstream", "config", "max-keys", "shutdown-timeout") {
		if !strings.Contains(stdout.String(), "-"+flag) {
			t.Errorf("usage does not mention -%s:\n%s", flag, stdout.String())
		}
	}
}

func TestListenFailureExits1(t *testing.T) {
	in := start(t)
	addr := strings.TrimPrefix(in.url, "http://")
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"-addr", addr}, &stdout, &stderr, nil); code != 1 {
		t.Errorf("second server on %s: exit status %d, want 1; stderr: %s", addr, code, stderr.String())
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "listen") {
		t.Errorf("stdout = %q, stderr = %q", stdout.String(), stderr.String())
	}
}
