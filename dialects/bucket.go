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
