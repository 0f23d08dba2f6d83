package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/retry"
)

// repos are listed at once, and reported in this order; the last one does not exist.
var repos = []string{
	"acme/widgets", "acme/gadgets", "acme/gizmos", "acme/sprocket",
	"acme/cogs", "acme/levers", "acme/pulleys", "acme/missing",
}

// concurrency is how many ListIssues calls run at once.
const concurrency = 4

// throttleCounter counts the 429s the client rode through, as a client.Observer.
type throttleCounter struct {
	client.NopObserver
	n atomic.Int64
}

func (c *throttleCounter) Retry(_ *http.Request, _ int, reason retry.Reason, _ time.Duration) {
	if reason.Status == http.StatusTooManyRequests {
		c.n.Add(1)
	}
}

// newAPIClient is all it takes to make the RepoClient rate-limit aware: an *http.Client from
// client.New. With no options it retries 429s, waits out Retry-After, and pauses the whole host
// meanwhile so the calls in flight beside the throttled one hold back too.
func newAPIClient(obs client.Observer) *http.Client {
	return client.New(client.WithObserver(obs))
}

// listing is the outcome of one ListIssues call.
type listing struct {
	issues []Issue
	err    error
}

// run starts the fake API, lists the issues of every repository in repos at once, and writes the
// report to stdout and the server's throttling figures to stderr. It returns the exit status: 0
// when every repository was answered (found or not), 1 otherwise.
func run(ctx context.Context, stdout, stderr io.Writer) int {
	srv, err := startAPI()
	if err != nil {
		fmt.Fprintf(stderr, "thirdparty: starting the API: %v\n", err)
		return 1
	}
	defer srv.Close()

	obs := &throttleCounter{}
	hc := newAPIClient(obs)
	defer hc.CloseIdleConnections()
	rc, err := NewRepoClient(hc, srv.URL(), "ghp_example")
	if err != nil {
		fmt.Fprintf(stderr, "thirdparty: %v\n", err)
		return 1
	}

	results := make([]listing, len(repos))
	var g errgroup.Group
	g.SetLimit(concurrency)
	for i, repo := range repos {
		g.Go(func() error {
			list, err := rc.ListIssues(ctx, repo)
			results[i] = listing{list, err}
			return nil
		})
	}
	_ = g.Wait() // the calls report their own errors

	code := writeReport(stdout, results)
	if st := srv.Stats().Server; st != nil {
		fmt.Fprintf(stderr, "server: %d calls, %d throttled with 429 (Retry-After, X-RateLimit-*); the client rode through %d of them\n",
			st.Requests, st.Throttled, obs.n.Load())
	}
	return code
}

// writeReport writes one block per repository, in the order of repos, and returns the exit status.
func writeReport(w io.Writer, results []listing) int {
	code, ok := 0, 0
	for i, r := range results {
		var apiErr *APIError
		switch {
		case errors.As(r.err, &apiErr) && apiErr.Status == http.StatusNotFound:
			fmt.Fprintf(w, "%s: not found\n", repos[i])
			ok++
		case r.err != nil:
			fmt.Fprintf(w, "%s: error: %v\n", repos[i], r.err)
			code = 1
		case len(r.issues) == 0:
			fmt.Fprintf(w, "%s: no open issues\n", repos[i])
			ok++
		default:
			fmt.Fprintf(w, "%s: %d open %s\n", repos[i], len(r.issues), plural(len(r.issues), "issue", "issues"))
			for _, is := range r.issues {
				fmt.Fprintf(w, "  #%d %s\n", is.Number, is.Title)
			}
			ok++
		}
	}
	fmt.Fprintf(w, "%d of %d repositories answered\n", ok, len(results))
	return code
}

// plural returns one when n is 1 and many otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
