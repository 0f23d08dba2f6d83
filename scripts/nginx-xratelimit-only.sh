#!/usr/bin/env bash
# Runs examples/batch, with no rate given, against testserver behind an nginx reverse proxy that
# strips RateLimit-Policy and RateLimit, so that the client sees only X-RateLimit-Limit,
# X-RateLimit-Remaining, X-RateLimit-Reset and Retry-After: the dialect GitHub and many gateways
# speak, which declares no window. Each line reports elapsed against the physical limit and what
# the testserver admitted and denied.
#
#   bash scripts/nginx-xratelimit-only.sh                         # the default configurations
#   bash scripts/nginx-xratelimit-only.sh "token-bucket 200 2000"  # ALGORITHM LIMIT(per 1s) N
#
# Buckets get a burst of 10. Needs nginx (apt-get install -y nginx-light); listens on 127.0.0.1
# ports 18090 (nginx) and 18091 (testserver) only; not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nginx >/dev/null || { echo "nginx not installed (apt-get install -y nginx-light)" >&2; exit 2; }
dir=$(mktemp -d)
tspid=""
trap 'nginx -p "$dir" -c "$dir/nginx.conf" -s stop 2>/dev/null || true; [ -n "$tspid" ] && kill "$tspid" 2>/dev/null || true; rm -rf "$dir"' EXIT
mkdir -p "$dir/logs"
go build -o "$dir/batch" ./examples/batch
go build -o "$dir/testserver" ./testserver/cmd/testserver
cat >"$dir/nginx.conf" <<EOC
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  upstream ts { server 127.0.0.1:18091; keepalive 32; }
  server {
    listen 127.0.0.1:18090;
    location / {
      proxy_pass http://ts; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_hide_header RateLimit-Policy; proxy_hide_header RateLimit;
    }
  }
}
EOC
nginx -p "$dir" -c "$dir/nginx.conf"

run() {
	local alg=$1 limit=$2 n=$3 burst=0
	case $alg in *bucket) burst=10 ;; esac
	"$dir/testserver" -addr 127.0.0.1:18091 -algorithm "$alg" -limit "$limit" -window 1s -burst "$burst" >"$dir/ts.out" 2>&1 &
	tspid=$!
	sleep 0.4
	local out st
	out=$(timeout 300 "$dir/batch" -url http://127.0.0.1:18090/items -n "$n" -json 2>/dev/null || true)
	st=$(curl -s http://127.0.0.1:18091/-/stats)
	kill "$tspid"; wait "$tspid" 2>/dev/null || true; tspid=""
	python3 - "$alg" "$limit" "$n" "$burst" "$out" "$st" <<'EOP'
import json, sys
alg, limit, n, burst, out, st = sys.argv[1:]
d = json.loads(out) if out else {}
r = json.loads(st)["rules"]["default"]
initial = int(burst) if int(burst) else (0 if alg == "sliding-window" else int(limit))
phys = (int(n) - initial) / float(limit)
el = d.get("elapsed_s", float("nan"))
print(f"{alg} {limit}/s n={n}: {d.get('succeeded')} succeeded, elapsed {el:.2f}s = {el/phys:.3f} x (N-initial burst)/R, "
      f"server admitted {r['allowed']} denied {r['denied']}, learned {d.get('learned_rate_rps')}/s")
EOP
}

if [ $# -gt 0 ]; then
	for c in "$@"; do run $c; done
else
	for c in "token-bucket 200 2000" "leaky-bucket 200 2000" "fixed-window 200 2000" "sliding-log 200 2000" "sliding-window 200 2000" "token-bucket 1000 10000" "token-bucket 50 500"; do run $c; done
fi
