// Package dialects reads what one HTTP response says about rate limits, as the API that sent it
// means it: the IETF draft fields, the generic X-RateLimit-* triple in all its reset forms, and the
// vendor dialects of GitHub, OpenAI, Anthropic, Shopify, Discord, X (Twitter), Azure, Stripe and
// Salesforce. [Read] turns a response into a [Reading]: whether it is a throttle, how long to wait,
// whether a retry is allowed, which quotas it declares (limit, window, remaining, reset, unit), and
// their scope and bucket.
//
// The parsers are tested against literal header sets taken from each vendor's documentation, never
// against a writer of this repository; each dialect's file cites the documentation it follows.
//
// # Recognition order
//
// A response is read by one dialect: the first that recognises it, in this order —
//
//  1. dialects forced for the request's host ([ForHost]), then user dialects ([WithDialect]);
//  2. the vendors, whose header sets are their own: github (x-ratelimit-resource, X-GitHub-*),
//     anthropic (anthropic-ratelimit-*), openai (x-ratelimit-*-requests / -tokens), shopify
//     (X-Shopify-Shop-Api-Call-Limit), discord (X-RateLimit-Bucket, -Reset-After, -Global,
//     -Scope), salesforce (Sforce-Limit-Info), azure (retry-after-ms, x-ms-retry-after-ms,
//     x-ms-ratelimit-remaining-*), stripe (Stripe-Should-Retry, Request-Id: req_...);
//  3. ietf: RateLimit-Policy / RateLimit (and Atlassian's Beta-RateLimit*, and the older
//     RateLimit-Limit / -Remaining / -Reset), which win over X-RateLimit-* when both are present;
//  4. twitter: the X-Rate-Limit-* spelling X documents;
//  5. x-ratelimit: the generic X-RateLimit-* triple.
//
// A vendor header set thus wins over the generic reading of the X-RateLimit-* headers the vendor
// also sends (GitHub, Discord). Whatever dialect reads the response (or none: Dialect ""), the
// reading is completed the same way: a 429 (or a status given to [WithThrottleStatus]) is a
// throttle, and when the dialect gave no wait, retry-after-ms, x-ms-retry-after-ms and then
// Retry-After (delay-seconds with decimals tolerated, or an HTTP-date against the Date header) give
// it.
//
// # Robustness
//
// Servers lie, truncate and misformat. Every parser ignores a malformed, negative or absurd value
// field by field and never panics (each is fuzzed). Waits (RetryAfter, Reset) are clamped to
// [0, MaxDelay] (24h): the resets vendors document fit in it (GitHub's hourly window, X's daily
// ones, Shopify's bucket). Windows are not clamped; one above 366 days is ignored. Instants (Unix
// times, dates) are measured against the response's Date header when it is valid, which corrects
// for skew between the server's clock and the client's, else against the now passed in. An
// HTTP-date (in a Retry-After or a reset) is read rounded up by its second: servers write their
// instant truncated (Go's time.Format does), and a retry at a date equal to the Date header would
// be early by up to a second.
//
// # Cost
//
// A response is scanned once for the header families it carries, and only the built-ins that
// recognise one of them are asked: a response with the three X-RateLimit-* fields costs about
// 0.5 µs and one allocation to read, one with no rate-limit field a scan of its names.
//
// Everything in the package is safe for concurrent use. [Read] may replace the Body of the
// response it reads (a GitHub 403, to tell a secondary limit from a permission error by its
// message); the body then reads exactly as it would have.
//
// [CredentialKey] derives a throttle key from a request's host and a short hash of its credential,
// so two API keys on one host get two keys and the secret never appears in one.
package dialects
