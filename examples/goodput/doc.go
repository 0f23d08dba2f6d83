// Command goodput is the benchmark that keeps steady honest (issue 4): in one run it starts
// testserver with every algorithm (token bucket, leaky bucket, fixed window, sliding log, sliding
// window counter), with its rate-limit headers on and off, and sends the same batch through four
// clients, each against a fresh server and built fresh for the run:
//
//   - steady-learning: client.New told no rate: its default pace learns the server's rate from its
//     responses (a throttle/learn learner per host);
//   - steady-told: client.New told the server's published policy, exactly as a user who read it
//     would configure examples/batch, with a safety margin m (-margin, default 0.5%) applied to
//     every told quantity in one way (rates and bursts times 1-m, windows divided by 1-m):
//     against token-bucket and leaky-bucket ("R per second with bursts of B") a token bucket at
//     R×(1-m) with burst max(1, ⌊B×(1-m)⌋), as examples/batch -rate R -burst B (199/s, burst 9 for
//     200/s and 10); against fixed-window and sliding-log ("L per W, usable any time in the
//     window") a window quota of L per W/(1-m) (client.WithWindowQuota), as examples/batch
//     -quota L/W (200 per 1.005025126s); against sliding-window (a counter of L per W on windows
//     aligned to the Unix epoch, as testserver's and Cloudflare's are) a counter of
//     max(1, ⌊L×(1-m)⌋) per W that mirrors the server's rule on the same windows
//     (client.WithWindowCounter), as examples/batch -counter L/W (199 per 1s): the fresh start's
//     burst at once, then each request as soon as the previous window's weight leaves room for it;
//   - retryablehttp: github.com/hashicorp/go-retryablehttp with its defaults (RetryMax 4, backoff
//     from 1s to 30s honouring Retry-After), logger off; a request it gives up on is lost;
//   - xrate: plain net/http paced by golang.org/x/time/rate told the same, with no retries (a 429
//     is a lost request): the same token bucket as steady-told against the buckets; as
//     x/time/rate has no window primitive, an even pace at R×(1-m) with burst 1 against
//     fixed-window and sliding-log, and at (L-1)/W×(1-m) against sliding-window (a counter
//     sustains L-1 per window: at a window's start the previous window's weight leaves no room
//     for the last; its burst at a fresh start, borrowed from the next window, is out of reach of
//     a client that does not know where the windows start).
//
// Both steady clients use examples/batch's retry policy (20 attempts, full-jitter backoff from
// 500ms capped at 10s, no bound on a request's total time, no retry budget). Every client goes out
// on the same transport settings (http.DefaultTransport's, one idle connection per worker), so the
// table compares policies, not connection pools.
//
//	go run ./examples/goodput                                 # the full benchmark (about 20 minutes)
//	go run ./examples/goodput -clients steady-learning,steady-told -algorithms token-bucket
//	go run ./examples/goodput -markdown > table.md            # for the README
//	go run ./examples/goodput -json | jq .                    # one JSON object per row
//
// The batch is -n GET requests (default 2,000) from -c workers (default 16) against a server that
// allows -limit requests per -window (default 200 per second; R = limit/window) with one global key;
// the token and leaky buckets start with -burst requests (default 10), the window algorithms with
// the whole limit. -algorithms, -clients and -headers (both, on, off) select the rows.
//
// # The table
//
// One row per (algorithm, headers, client):
//
//   - elapsed: the run's wall time, from the first request until the last worker stopped;
//   - physical: the physical limit (N - initial burst)/R, the least time in which any client gets
//     N requests through (initial burst = -burst for the buckets, = -limit for the window
//     fixed-window and sliding-log; a fixed window that ends soon after the start lets a client beat
//     it by up to one window; the sliding window counter admits at most R·t by absolute time t, its
//     fresh-start burst being borrowed from the next window, so its physical limit is N/R less the
//     start's phase in its window), and elapsed/physical;
//   - 429s (server): the share of attempts the server denied, as the server counts them
//     (testserver's Stats: throttled / requests), and attempts, the server's request count;
//   - retries: attempts after the first, as the client counts them (steady's Observer,
//     retryablehttp's RequestLogHook; xrate never retries);
//   - lost: requests that did not end in a 2xx response, including those unfinished when the
//     per-run -timeout (default 15×N/R, at least 30s) ended the run;
//   - learned: the pace a steady client keeps for the server after the run;
//   - goal: for the steady clients, whether the row meets issue 4's goals (learning: at most
//     1.03× and 0.5% 429s with headers, 1.10× and 3% without; told: at most 1.01× and no 429s;
//     never a lost request), and if not, what missed. Against sliding-window the physical limit
//     is a bound no client reaches: after the fresh start's L, a counter admits L-1 per window,
//     not L. steady-told, at ⌊L×(1-m)⌋ = L' per window, sends L' at once and then L'-1 per
//     window, so it takes about (1-phase)×W + (N-L')/(L'-1)×W: 1.009× to 1.010× at the defaults
//     (N 2,000, 200 per second, m 0.5%), the more the later in its window the run starts; xrate's
//     even pace takes about N/((L-1)/W×(1-m)), so it meets 1.01× only when the run starts early in
//     a window.
//
// Output goes to stdout: the settings, what the told clients are told, the formulas, the goals and the machine (CPUs, CPU model,
// Go version), then an aligned table; -markdown writes the same as Markdown for the README; -json
// writes only one JSON object per row, as each run ends. Progress lines go to stderr: one when a
// run starts, one every five seconds, one with its result.
//
// # Exit status and signals
//
// 0 when every run was done (whatever the results), 1 when a run could not start or a signal
// stopped the benchmark, 2 for bad flags, and with -check 3 when a steady client missed a goal.
// SIGINT or SIGTERM ends the current run (its unfinished requests count as lost) and prints the
// rows so far.
package main
