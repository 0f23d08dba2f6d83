// Command batch is steady's main job: it sends a batch of requests to a rate-limited API as fast as
// the API allows, never drops one, and reports what happened.
//
//	go run ./examples/batch                          # 1,000 requests to an embedded testserver (100/s)
//	go run ./examples/batch -url https://api.example.com/v1/items -rate 50 -n 5000
//	go run ./examples/batch -url http://127.0.0.1:8080/ -json
//
// With no -url it starts an embedded testserver on 127.0.0.1 (a token bucket of 100 requests per
// second with a burst of 10; see the -server-* flags) and sends the batch there, so the run shows
// how close steady gets to the limit the server enforces: its last line compares the achieved rate
// with the server's limit, and the elapsed time with the physical limit (N-burst)/R, the least time
// in which any client can get N requests through a limit of R per second that starts with burst
// tokens.
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
// seen by one of them slows them all. A line on stderr reports the processes seen on the quota and
// the shared pace. If Redis is down or slow (no answer within 50 ms), each process paces itself
// locally at its share of the rate (one over the number of processes last seen) and goes back to
// Redis when it answers again; the run never waits on Redis longer than that, and never fails
// because of it.
//
//	redis-server --port 6379 &
//	go run ./examples/batch -url http://127.0.0.1:8080/items -rate 100 -n 1000 -shared redis://127.0.0.1:6379/0 &
//	go run ./examples/batch -url http://127.0.0.1:8080/items -rate 100 -n 1000 -shared redis://127.0.0.1:6379/0
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
// -max-wait (default 10m; 0 = no bound), which also bounds the wait for a learned pace slower than
// one request per -max-wait: a longer wait fails the request (reported) instead of stalling the
// batch without a word. -timeout bounds each request, its retries
// and waits included (default 0: no bound). -idempotency-keys adds an Idempotency-Key to every
// POST and PATCH, so that they are retried after transport errors too (only for servers that honour
// the key).
//
// # Output
//
// -v logs every retry (with its reason and the wait before it) and every request given up on
// stderr, one time-stamped slog line each; stdout is unchanged.
//
// The summary goes to stdout: requests, succeeded, failed, throttled responses (429 and 503 answers
// the client saw, counted by a client.Observer), retries, elapsed time and achieved rate
// (succeeded requests per second). With -json it is one JSON object on one line, and nothing else
// is written to stdout:
//
//	{"requests":1000,"succeeded":1000,"failed":0,"throttled_responses":0,"retries":0,
//	 "elapsed_s":9.91,"rate_rps":100.9, ...}
//
// with the keys requests, succeeded, failed, throttled_responses, retries, elapsed_s and rate_rps
// always present, and cancelled, failure_reasons, known_rate_rps, known_quota, known_counter, paced_rate_rps,
// server_limit_rps, physical_limit_s, server_requests and server_throttled when they apply. A progress bar is drawn on stderr when
// stderr is a terminal, and never otherwise.
//
// # Exit status and signals
//
// 0 when every request succeeded, 1 when some failed (or the run could not start), 2 for bad flags
// (with a one-line message naming the bad value). SIGINT or SIGTERM stops the run cleanly: requests
// in flight are cancelled, no new ones start, and the summary still prints, with every unfinished
// request counted as failed ("cancelled").
package main
