#!/usr/bin/env bash
# Runs examples/batch, with no rate given, against nginx's limit_req (a server no one here wrote):
# a leaky bucket that answers 429 with no Retry-After and no rate-limit header. Each line reports
# elapsed against N/R and the 200s and 429s counted in nginx's own access log.
#
#   bash scripts/nginx-limit-req.sh                 # the default configurations
#   bash scripts/nginx-limit-req.sh "200 0 no 2000"  # RATE BURST(0 = none) NODELAY(yes|no) N
#
#   BATCH_FLAGS=-v BATCH_LOG=/tmp/trace.log bash scripts/nginx-limit-req.sh "50 0 no 500"  # with the learner's trace
#
# Needs nginx (apt-get install -y nginx-light); listens on 127.0.0.1:18080 only; not part of CI.
set -euo pipefail
if [ -n "${BATCH_LOG:-}" ]; then BATCH_LOG=$(realpath -m "$BATCH_LOG"); fi # before the cd below
cd "$(dirname "$0")/.."
command -v nginx >/dev/null || { echo "nginx not installed (apt-get install -y nginx-light)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'nginx -p "$dir" -c "$dir/nginx.conf" -s stop 2>/dev/null || true; rm -rf "$dir"' EXIT
mkdir -p "$dir/logs" "$dir/www"
chmod 755 "$dir" "$dir/www" # nginx workers run as another user
echo ok > "$dir/www/items"
go build -o "$dir/batch" ./examples/batch

run() {
	local rate=$1 burst=$2 nodelay=$3 n=$4 opts=""
	[ "$burst" != 0 ] && opts="burst=$burst"
	[ "$nodelay" = yes ] && opts="$opts nodelay"
	cat >"$dir/nginx.conf" <<EOC
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log $dir/logs/access.log;
  limit_req_zone \$binary_remote_addr zone=one:1m rate=${rate}r/s;
  limit_req_status 429;
  server {
    listen 127.0.0.1:18080;
    location / { limit_req zone=one $opts; root $dir/www; }
  }
}
EOC
	nginx -p "$dir" -c "$dir/nginx.conf" -s stop 2>/dev/null || true
	sleep 0.3
	: >"$dir/logs/access.log"
	nginx -p "$dir" -c "$dir/nginx.conf"
	sleep 0.3
	local out
	[ -n "${BATCH_LOG:-}" ] && echo "== rate=$rate burst=$burst nodelay=$nodelay n=$n ==" >>"$BATCH_LOG"
	# shellcheck disable=SC2086 # BATCH_FLAGS is a list of flags
	out=$(timeout 300 "$dir/batch" -url http://127.0.0.1:18080/items -n "$n" -json ${BATCH_FLAGS:-} 2>>"${BATCH_LOG:-/dev/null}" || true)
	sleep 0.2
	local ok th
	ok=$(grep -c '" 200 ' "$dir/logs/access.log" || true)
	th=$(grep -c '" 429 ' "$dir/logs/access.log" || true)
	python3 - "$rate" "$burst" "$nodelay" "$n" "$ok" "$th" "$out" <<'EOP'
import json, sys
rate, burst, nodelay, n, ok, th, out = sys.argv[1:]
d = json.loads(out) if out else {}
el = d.get("elapsed_s", float("nan"))
nr = int(n) / float(rate)
share = 100 * int(th) / max(1, int(ok) + int(th))
print(f"rate={rate}/s burst={burst} nodelay={nodelay} n={n}: {d.get('succeeded')} succeeded, elapsed {el:.2f}s = {el/nr:.3f} x N/R, "
      f"nginx saw {ok} 200s and {th} 429s ({share:.1f}%), learned {d.get('learned_rate_rps')}/s")
EOP
}

if [ $# -gt 0 ]; then
	for c in "$@"; do run $c; done
else
	for c in "50 0 no 500" "50 5 yes 500" "200 0 no 2000" "200 10 yes 2000" "1000 0 no 10000" "1000 20 yes 10000"; do run $c; done
fi
