// Command thirdparty shows steady under a typed client for a third-party API: a small GitHub-style
// RepoClient (ListIssues) whose *http.Client is built by client.New, so the API wrapper itself
// knows nothing about rate limits.
//
//	go run ./examples/thirdparty
//
// It starts an embedded testserver that plays the API: GET /repos/{owner}/{repo}/issues answers
// JSON issues, each API token (the Authorization header) gets a token bucket of 20 requests per
// second with a burst of 5, and throttled calls get 429 with Retry-After, the X-RateLimit-*
// headers and the IETF RateLimit fields, as GitHub-style APIs send them. It then lists the issues
// of several repositories at once, more calls than the burst allows. The server throttles some of
// them; steady pauses calls to the host for the Retry-After the server asked, retries, and every
// ListIssues call returns its issues as if nothing had happened.
//
// The report on stdout is deterministic (the issues, and the error of a repository that does not
// exist, which steady does not retry: a 404 is an answer, not a throttle). How many calls the
// server throttled depends on timing, so that line goes to stderr.
package main
