// Command goodput is the benchmark that keeps steady honest (issue 4): in one run it starts
// testserver with every algorithm (token bucket, leaky bucket, fixed window, sliding log, sliding
// window counter), with its rate-limit headers on and off, and sends the same batch through four
// clients, each against a fresh server and built fresh for the run:
//
//   - steady-learning: client.New told no rate: its default pace learns the server's rate from its
//     responses (throttle.Adaptive per host);
//   - steady-told: client.New told the rate exactly as examples/batch -rate R does: a token bucket
//     at R less a 1% margin (-margin) with burst 1, an even pace of 198/s for R = 200/s;
//   - retryablehttp: github.com/hashicorp/go-retryablehttp with its defaults (RetryMax 4, backoff
//     from 1s to 30s honouring Retry-After), logger off; a request it gives up on is lost;
//   - xrate: plain net/http paced by golang.org/x/time/rate at the same pace as steady-told, with no
//     retries: a 429 is a lost request.
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
//     never a lost request), and if not, what missed.
//
// Output goes to stdout: the settings, the formulas, the goals and the machine (CPUs, CPU model,
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
