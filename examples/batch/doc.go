// Command batch is steady's main job: it sends a batch of requests to a rate-limited API as fast as
// the API allows, never drops one, and reports what happened.
//
//	go run ./examples/batch                          # 1,000 requests to an embedded testserver (100/s)
//	go run ./examples/batch -url https://api.example.com/v1/items -rate 50 -n 5000
//	go run ./examples/batch -url http://127.0.0.1:8080/ -json
//	go run ./examples/batch -url https://api.example.com/ -input requests.jsonl -output results.jsonl -resume
//
// With no -url it starts an embedded testserver on 127.0.0.1 (a token bucket of 100 requests per
// second with a burst of 10; see the -server-* flags) and sends the batch there, so the run shows
// how close steady gets to the limit the server enforces: its last line compares the achieved rate
// with the server's limit, and the elapsed time with the physical limit (N-burst)/R, the least time
// in which any client can get N requests through a limit of R per second that starts with burst
// tokens. -server-dialect NAME makes it answer as a real API does (testserver.WithDialect: github,
// openai, shopify, ...), with that API's limiter kind unless -server-algorithm is given; it
// honours Idempotency-Key (testserver.WithIdempotency).
//
// # What it sends
//
// -n requests (default 1000) with -method (default GET) to the target, from -c workers (default
// 16), through an http.Client built by client.New. POST, PUT and PATCH send a small JSON body
// ({"item":N}) that the retry layer replays through GetBody. Every request ends either as a
// success (a 2xx final response) or as a reported failure: a non-2xx final response, an error, or
// "cancelled" when the run was interrupted before the request finished. The summary counts both
// and the first few distinct failure reasons; succeeded+failed always equals -n.
//
// # A file of requests
//
// -input FILE (- for stdin) sends the requests of a file instead, one per line, from the -c
// workers, in the file's order (each request ends in its own time). A line is either a URL, sent
// with -method (default GET) and no body, or a JSON object:
//
//	{"method": "POST", "url": "/v1/orders", "headers": {"Authorization": "Bearer T"}, "body": {"sku": "a-1"}}
//
// where only url is required; headers map names to a string or an array of strings; body is a
// JSON string (sent as it is) or any other JSON value (sent as JSON, with Content-Type:
// application/json unless the headers set one). Relative URLs resolve against -url, or against the
// embedded server without it. Blank lines and lines starting with # are skipped. A line that is
// not a request (bad JSON, an unknown field, a bad URL, method or header, longer than 16 MiB) is a
// failed request: reported on stderr (the first five), recorded in the output, and counted with
// the reason "bad input line"; the other lines are still sent. With a file, the progress bar knows
// the total (the file is read once to count it); with stdin it shows the count and rate only.
//
// # Results and resume
//
// -output FILE appends one JSON line per finished request, in the order they finish:
//
//	{"job":"3f9c2a71d0be","line":2,"id":"a3c1f0d29b7e4c11","method":"POST","url":"https://api.example.com/v1/orders",
//	 "status":201,"body_bytes":57,"body_sha256":"9f2b...","attempts":1,"elapsed_s":0.041,"done":true}
//
// line is the input line (the request's number without -input), status the final response's
// status (absent when there was none), attempts the attempts made, error why the request failed,
// and done whether it succeeded (a 2xx final response). -output-headers keeps the final response's
// headers ("headers"); -output-body says what to keep of its body: digest (the default: its length
// and SHA-256, over the whole body), full (its text, or body_base64 when it is not UTF-8, up to 1
// MiB, then body_truncated), or none. A request cancelled by an interrupt gets no record. The file
// must be new or empty unless -resume is given.
//
// -resume continues the job the output records: a run killed at any point (SIGKILL, a crash, a
// second interrupt) and started again with the same command plus -resume sends every request the
// output does not record as done, and none that it does; the summary counts the others as
// skipped. A request is matched by its id: a digest of its line's content (and, for the K-th line
// with the same content, its occurrence), so lines added to or removed from the input between the
// runs do not shift the others. Failed requests are recorded with done false, and sent again by the
// next -resume; the last record of a line is its outcome. A write cut short by a kill is dropped
// when the output is read back. Each record is written with one write call, so what the batch
// recorded survives the process; a crash of the machine itself can lose the records of the last
// moments, whose requests -resume then sends again.
//
// A request in flight when a run died may have reached the server without its answer reaching the
// output, so -resume sends it again. With -output, every POST and PATCH therefore carries
// Idempotency-Key: JOB-ID (unless its line sets one), the same in every run of the job and unique to
// the job (the job id is random, kept in the records): a server that honours the key, as the
// embedded server does (testserver.WithIdempotency), answers it again without applying it twice.
// Against a server that ignores the key, such a POST may be applied twice. The key also makes the
// retry layer retry POSTs after transport errors (see -idempotency-keys).
//
// # Pace
//
// -rate R tells the client the API's rate. It then paces itself with a token bucket at R less a
// -margin (default 0.5%: 199 requests/s for -rate 200) and a burst of -burst less the margin,
// rounded down, at least 1 (default -burst 1: an even pace of one request every 1/R instead of a
// rush of the first requests; -burst 10 keeps 9). The margin is there because the server counts
// arrivals, not departures: at exactly R, a sliding-log or sliding-window server sees request i
// and request i-R·window exactly one window apart, so any network or scheduling jitter that delays
// the older one more than the newer one lands the newer one in a window that is still full, and
// the 429 that follows pauses the whole run for its Retry-After (at least a second). The margin
// costs 0.5% of the time; raise it for paths with more jitter, or set -margin 0 to pace at exactly
// R.
//
// -quota L/W (such as 200/1s, 6000/1m, 5000/1h) tells the client a quota per window that the API
// lets it use at any time within the window (a fixed window or a sliding log): the client sends up
// to L at once and never more than L in any window (client.WithWindowQuota), the window stretched
// by the margin (W/(1-margin): 1.005 s for 1s). Against such a server it needs (N-L)/R where an
// even pace needs N/R: 9 s instead of 10 s for 2,000 requests at 200/1s, and with 5000/1h the
// first 5,000 go at once instead of one every 0.72 s. Do not use it for a token bucket or a
// sliding window counter, which refuse a whole quota at a window's start: give a token bucket
// -rate, and a counter -counter.
//
// -counter L/W tells the client that the API is a sliding window counter of L per W
// (Cloudflare-style; the embedded server's sliding-window) on windows aligned to the Unix epoch: it admits a
// request at elapsed time e into a window iff prev×(W−e) + (cur+1)×W <= L×W, prev and cur being
// the requests counted in the previous and the current window. The client mirrors that rule on
// its own clock (client.WithWindowCounter) with the limit shrunk by the margin, ⌊L×(1−margin)⌋
// (at least 1; 199 for 200/1s): up to that many at once, then each as soon as the previous
// window's weight leaves room for it, one less than the limit per window in the long run (at a
// window's start the previous window's weight leaves no room for the last one). An even pace
// cannot use the fresh start's burst, which is borrowed from the next window. It needs the
// client's clock to agree with the server's to well within a window; for a counter whose windows
// start elsewhere (at a key's first request), give -rate (L-1)/W instead.
//
// -rate, -quota and -counter exclude each other; -quota and -counter cannot be -shared. Without
// any of them the client uses client.New's default pace, which reacts to what the server says
// (Retry-After pauses the whole host).
//
// # A quota shared by several processes
//
// -shared redis://HOST:PORT/DB makes this run one of several batch processes (on one machine or
// many) that share the target's quota through Redis (package throttle/redisthrottle): every
// process given the same Redis URL and calling the same host paces against one schedule, kept in
// the Redis key {steady:batch:HOST:PORT}. With -rate R they send R requests per second in total
// (less the -margin), not R each; without -rate they learn the server's rate together, so a 429
// seen by one of them slows them all. A line on stderr reports the processes seen on the quota, the
// shared pace, the reservations Redis and the local fallback served, the slots lost (booked for
// requests that were then not sent, and not given back) and the failed Redis calls (-json: the
// "shared" object). If Redis is down or slow (no answer within 50 ms), each process paces itself
// locally at its share of the rate (one over the number of processes last seen; the whole rate
// when it never reached Redis) and goes back to Redis when it answers again; without -rate it
// goes on learning meanwhile, alone, from its own answers. The run never waits on Redis longer
// than that, and never fails because of it. -v logs when Redis becomes unreachable and answers
// again, and each step of the shared law this process makes.
//
// What the processes learned stays in Redis for 10 minutes after the last request
// (redisthrottle.WithForget): a run started meanwhile begins from it, which is what a batch split
// into several runs wants. To start from nothing, delete the key: redis-cli DEL '{steady:batch:HOST:PORT}'.
//
//	redis-server --port 6379 &
//	go run ./examples/batch -url http://127.0.0.1:8080/items -rate 100 -n 1000 -shared redis://127.0.0.1:6379/0 &
//	go run ./examples/batch -url http://127.0.0.1:8080/items -rate 100 -n 1000 -shared redis://127.0.0.1:6379/0
//
// or, not told the rate, learning it together:
//
//	go run ./examples/batch -url http://127.0.0.1:8080/items -n 1000 -shared redis://127.0.0.1:6379/0 &
//	go run ./examples/batch -url http://127.0.0.1:8080/items -n 1000 -shared redis://127.0.0.1:6379/0
//
// Where a shared learned pace is weakest (docs/shared-learner.md, "Where it is weak"): servers of
// a few requests a second that count in windows (a sliding window counter at 3/s takes about 2.4x
// its L/W), and several processes against a bucket with no burst and no headers. Give -rate when
// the rate is known.
//
// # Retries
//
// A batch should survive a server that restarts under it. So the retry layer gets -attempts
// attempts per request (default 20), exponential backoff with full jitter from 500ms capped at
// -max-delay (default 10s), no bound on the total time of one request, and no retry budget: the
// workers already bound the load (at most -c requests in flight, each backing off), so the budget
// that protects an open-ended service from a retry storm would only fail the remaining items of a
// bounded batch during an outage. With the defaults a request that keeps failing gives up after
// about 78 seconds on average, and a 30-second outage fails fewer than one request in 100,000
// (with 12 attempts it would fail about one in six of those in flight: full jitter draws each
// wait anywhere from 0 to its cap). Retry-After is always honoured, and waited out up to
// -max-wait (0 = no bound), which also bounds the wait for a learned pace slower than one request
// per -max-wait and for a quota's reset: a longer wait fails the request (reported) instead of
// stalling the batch without a word. Its default waits out the longest window the run knows of (a
// -quota or -counter window, the embedded server's -server-window), and at least an hour, plus 2 s
// for resets given in whole seconds: a batch against a quota of 5,000 an hour waits up to an hour
// for its window to come back, where an interactive client (client.New) gives up after a minute. A
// daily quota is not waited out by default; give -max-wait 25h (or 0) for that, or -resume later.
// -timeout bounds each request, its retries and waits included (default 0: no bound).
// -idempotency-keys adds a random Idempotency-Key to every POST and PATCH, so that they are retried
// after transport errors too (only for servers that honour the key); with -output they carry the
// job's keys instead (see Results and resume).
//
// # Output
//
// -v logs every retry (with its reason and the wait before it), every request given up and, when
// the rate is learned (no -rate, -quota or -counter), every transition of the learner (what it
// believes of the server, and why; its states are explained in docs/learner.md §3), or with
// -shared each step of the shared law this process makes and each Redis outage, on stderr, one
// time-stamped slog line each; stdout is unchanged.
//
// The summary goes to stdout: requests, succeeded, failed, throttled responses (every answer the
// client saw that its API means as a throttle, read by package dialects: a 429, GitHub's 403 with
// its quota used up or a secondary limit, and so on; and every 503, which many APIs and proxies
// answer when they shed load), retries, elapsed time and achieved rate
// (succeeded requests per second). With -json it is one JSON object on one line, and nothing else
// is written to stdout:
//
//	{"requests":1000,"succeeded":1000,"failed":0,"throttled_responses":0,"retries":0,
//	 "elapsed_s":9.91,"rate_rps":100.9, ...}
//
// with the keys requests, succeeded, failed, throttled_responses, retries, elapsed_s and rate_rps
// always present, and cancelled, skipped, output, records, failure_reasons, learned_rate_rps (the pace the
// learner ended at, not a measure of the server), known_rate_rps, known_quota,
// known_counter, paced_rate_rps, server_limit_rps, physical_limit_s, server_requests, server_throttled and shared
// (-shared: processes, peak_processes, pace_rps, redis_reservations, local_reservations, lost_slots, redis_errors,
// last_error) when they apply. A progress bar is drawn on stderr when stderr is a terminal, and never otherwise: the
// requests done, the rate, the elapsed time and the ETA, and the throttled answers so far. Without -v, the first
// retry after a transport error (a connection refused, a reset, a timeout) is said on stderr once, with the error:
// a URL nothing answers is retried with backoff up to -attempts times, minutes in all, and would look like a hang.
//
// # Exit status and signals
//
// 0 when every request succeeded, 1 when some failed (or the run was interrupted, or could not
// start, or could not write its output), 2 for bad flags (with a one-line message naming the bad
// value) and for an -output that holds results without -resume. The first SIGINT or SIGTERM drains
// the run: no new request starts, the requests in flight finish and are recorded, and the summary
// prints, with every request not sent counted as failed ("cancelled"); the same command with
// -resume sends them. A second one cancels the requests in flight (they get no record; -resume
// sends them again), and a third kills the process. With -input -, a drain takes effect when the
// next line arrives or stdin ends.
package main
