package dialects

import "net/http"

// Bucket returns the quota bucket a response names within its host, as [Read] reads it into
// [Reading.Bucket], without reading anything else: GitHub's x-ratelimit-resource on a GitHub
// response (core, search, graphql...), else Discord's X-RateLimit-Bucket; "" when it names none.
// It is meant for a caller that looks at every response, successes included, and maps routes to
// buckets (package throttle): it allocates nothing and never touches the body. A nil resp gives "".
// It is safe for concurrent use.
func Bucket(resp *http.Response) string {
	if resp == nil {
		return ""
	}
	h := resp.Header
	if r := get(h, "X-Ratelimit-Resource"); r != "" || has(h, "X-Github-Request-Id") || has(h, "X-Github-Media-Type") {
		return trimOWS(r) // a GitHub response: its resource, or none
	}
	return trimOWS(get(h, "X-Ratelimit-Bucket"))
}

// PrimaryBucket returns the bucket of resp's API that is the host's own quota for the credential,
// when the API documents one: "core" on a GitHub response (the REST API's primary rate limit, which
// every endpoint without a quota of its own counts against; search, code_search, graphql and the
// other resources are separate quotas), "" otherwise (Discord's buckets are per route: none is the
// host's). Like [Bucket], it allocates nothing and never touches the body; a nil resp gives "". It
// is safe for concurrent use.
func PrimaryBucket(resp *http.Response) string {
	if resp == nil {
		return ""
	}
	h := resp.Header
	if has(h, "X-Ratelimit-Resource") || has(h, "X-Github-Request-Id") || has(h, "X-Github-Media-Type") {
		return githubPrimary
	}
	return ""
}

// githubPrimary is GitHub's primary quota: the resource its REST endpoints count against
// (https://docs.github.com/en/rest/rate-limit/rate-limit: "core", beside search, code_search,
// graphql, integration_manifest, dependency_snapshots, code_scanning_upload...).
const githubPrimary = "core"
