// Command sweep is the proof of issue 10's learner: it runs the whole client stack against the
// real testserver algorithms across rates, round trips, workers, header modes (and, for issue 11,
// the dialects of real APIs) and clients sharing a key, in virtual time, and judges every cell
// against the issues' goals, with steady's peers on the same cells.
//
//	go run ./examples/sweep                       # the whole sweep (hours of CPU; see below)
//	go run ./examples/sweep -clients steady -limits 5/s,200/s -rtts 1ms,200ms -workers 16 -sharing 1
//	go run ./examples/sweep -json > sweep.jsonl   # one JSON object per line and per cell; the summary on stderr
//	go run ./examples/sweep -headers honest -dialects github,openai,stripe -limits 5/s -workers 16 -sharing 1
//	go run ./examples/sweep -realtime             # a few cells in real time on loopback, beside virtual time
//	go test -race ./examples/sweep                # CI's subset (steady only)
//
// # Virtual time
//
// Every run is one testing/synctest bubble: the clock moves only when every goroutine waits, so an
// hour of a 5,000/h server costs the CPU time of its requests, not an hour. Each run starts at
// midnight, 1 January 2026 UTC (plus its seed's phase; the bubble's own clock starts in 2000, when
// Unix times were below the 1e9 from which a numeric reset reads as one: simEpoch). A bubble needs a
// *testing.T, which a plain program gets from testing.Main: main runs the sweep as the one test of
// a testing.Main and ends the process itself when it is done, so that nothing but the sweep's
// output is printed. (go run ./examples/sweep is therefore the same code as the test, with no
// re-execution and no go toolchain at run time.)
//
// # The simulator
//
// The server is testserver's Limiter (package testserver, one rule with a global key: every client
// shares it) behind its Middleware, the same code a testserver binary runs, served by net/http over
// internal/pipenet's in-memory connections. Each client has its own connections and a wire that
// delays each request by half the round trip on its way out (the server decides it RTT/2 after it
// left) and its answer by the other half on its way back. The clients are the full stacks:
//
//   - steady: client.New() with its default pace (the learner of throttle/learn) and the batch
//     runner's retry settings (examples/batch: 20 attempts, backoff from 500 ms to 10 s, no
//     elapsed bound, no retry budget), with a max wait of 10 minutes or two windows, whichever is
//     longer, so that a batch waits out a window of any length;
//   - aimd, cubic: the same stack paced by plain AIMD (TCP Reno's law in rate form) and by the AWS
//     SDKs' adaptive CUBIC, both on steady's FIFO pacer (peers.go);
//   - retryablehttp: go-retryablehttp's NewClient with its defaults (4 retries, 1 s to 30 s,
//     Retry-After honoured), its logger off;
//   - xrate: net/http paced by golang.org/x/time/rate told the rate (less 0.5%, split between the
//     clients; a sliding window counter's (L−1)/W), burst 1, no retries.
//
// # Cells
//
// Servers: token-bucket, leaky-bucket, fixed-window, sliding-log, sliding-window (testserver's
// algorithms); count-denied, a sliding window counter that counts refused requests against the key
// as HAProxy's http_req_rate does (testserver.Rule.CountDenied); and changing, a token bucket whose
// rate halves a quarter of the way into the nominal run and comes back halfway (each phase starting
// with a fresh quota, as testserver's SetRules gives a changed rule). Headers: honest (testserver's
// RateLimit-Policy, RateLimit, X-RateLimit-* and Retry-After), none (the status alone) and lying
// (the quota and remaining declared ten times over, no Retry-After).
//
// Dialects (-dialects, issue 11) are the forms honest headers take: testserver, its own headers
// above (the default, and the only dialect of the grid unless -dialects names others), or one of
// testserver's personas (testserver.WithDialect: ietf, x-ratelimit, github, openai, anthropic,
// shopify, discord, stripe, none), each answering as that API does, with its statuses (GitHub
// throttles with a 403), header names, reset formats and bodies, on the cell's own server kind (the
// persona's default algorithm does not apply). A dialect shapes honest headers only: the honest
// mode gives one cell per dialect, and none and lying one cell each whatever -dialects lists (their
// answers are the status alone or testserver's fields lied, the same in every dialect), with an
// empty dialect ("-" in the table), so the grid holds no cell twice. The one pair left is the none
// persona's honest cell and the none header mode: the same server (the status alone, 429), kept as
// the persona's row.
//
// Limits, each L per W with a burst of the whole L (a window admits its quota at any time in it; a
// bucket holds one window's quota and refills it over the window):
//
//	1/s      1 per 1 s         5/s      5 per 1 s        50/s   50 per 1 s
//	200/s    200 per 1 s       2000/s   2,000 per 1 s
//	100/min  100 per 1 min     5000/h   5,000 per 1 h
//
// Round trips 1, 50 and 200 ms; 1, 16 and 64 workers per client; 1, 2 and 10 independent clients
// sharing the key. Each client sends at least 300 requests and enough for the run to last 10 of
// the server's windows at the limit (20 with ten clients: 10 of warm-up and 10 judged), the clients
// sharing the limit; a run sends at most 40,000 requests in all, which caps 5,000/h at 8 windows
// (and its warm-up at half the run). Each run starts at a phase of the server's window drawn from
// its seed; three seeds per cell, and a cell is judged on its worst: the largest elapsed over
// physical, 429 share and loss, the smallest share and Jain index over the seeds. A 429 in the
// figures and goals is any throttled answer: the server counts its limiter's refusals, whatever
// status the dialect gives them (GitHub's 403 too).
//
// # Figures
//
// The physical limit of a cell is the elapsed time of a clairvoyant client on the same cell and
// seed (clairvoyant.go): it keeps a replica of the server's algorithm and sends each request to
// arrive at the earliest instant the server admits it. It never draws a 429 (the sweep reports it
// if it ever does). A cell whose workers cannot send twice the limit in a round trip
// (workers×clients/RTT < 2×rate) is marked worker-bound: the clairvoyant is bound by them too.
// elapsed_over_physical divides the run's elapsed time by the clairvoyant's; throttled_share is the
// share of attempts the server refused; lost counts requests that did not end in a 200; share and
// jain compare the clients' admissions at the moment the first client sent its last request (the
// smallest over the fair share, and Jain's index); throttled_share_warm is, for ten clients, the
// 429 share of the attempts that reached the server after the warm-up.
//
// Goals (issue 10): with one or two clients nothing lost, at most 1.10× the physical limit, 429s at
// most 3% of attempts (none and lying headers) or 0.5% (honest), each client's share within ±20% of
// the fair share; with ten clients nothing lost, at most 1.25×, at most 3% 429s after the warm-up
// and at most a quarter of plain AIMD's on the same cell, and a Jain index of at least 0.9. Issue
// 11 extends the 429 goal to the dialects: at most 0.5% throttled answers (429, or the persona's
// 403) for the dialects that declare their quota (testserver and every persona but two), at most
// 3% for those that do not (stripe, none). The peers' laws (aimd, cubic) take for a throttle what
// the stack's retry does: a 429, or what the response's dialect calls one (GitHub's 403).
//
// # Cost
//
// A request costs about 40 µs of CPU time in the simulator (2026-11, a shared 2-core AMD EPYC); the
// whole sweep is 3,969 cells × 5 clients × 3 seeds, about ten hours of CPU. Run it in parts with
// the flags (every list flag takes comma-separated values; go run ./examples/sweep -h).
package main
