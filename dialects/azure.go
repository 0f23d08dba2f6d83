package dialects

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// azure reads Azure's services.
//
// Sources: the Azure SDK's throttling retry strategy (@azure/core-rest-pipeline,
// throttlingRetryStrategy.ts: "The headers that come back from Azure services representing the
// amount of time (minimum) to wait to retry. "retry-after-ms", "x-ms-retry-after-ms" :
// milliseconds; "Retry-After" : seconds or timestamp", read in that order on a 429 or 503), and
// Azure Resource Manager's "Request limits and throttling"
// (https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling):
// remaining requests are reported in x-ms-ratelimit-remaining-subscription-reads,
// -subscription-writes, -subscription-deletes, -tenant-reads, -tenant-writes (and
// -subscription-resource-requests, -subscription-resource-entities-read), each a count with no
// limit or reset; a throttled request gets 429 with Retry-After.
//
// Each x-ms-ratelimit-remaining-* header is a quota named by its suffix ("subscription-reads") with
// Remaining only, in name order. The wait is read from retry-after-ms, x-ms-retry-after-ms, then
// Retry-After (the shared completion of every dialect).
//
// Recognised by retry-after-ms, x-ms-retry-after-ms or an x-ms-ratelimit-remaining-* header.
type azure struct{}

// Name returns "azure".
func (azure) Name() string { return "azure" }

const azureRemainingPrefix = "X-Ms-Ratelimit-Remaining-"

// Read reads the Azure headers; ok is false without any.
func (azure) Read(resp *http.Response, now time.Time) (Reading, bool) {
	return readBuiltin(azure{}, resp, now)
}

// readTo is Read with its quotas appended to quotas, not finished (see builtin).
func (azure) readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool) {
	h := resp.Header
	var names []string
	for k := range h {
		if len(k) > len(azureRemainingPrefix) && strings.HasPrefix(k, azureRemainingPrefix) {
			names = append(names, k)
		}
	}
	if len(names) == 0 && !has(h, "Retry-After-Ms") && !has(h, "X-Ms-Retry-After-Ms") {
		return Reading{}, false
	}
	slices.Sort(names)
	r := Reading{Dialect: "azure", Quotas: quotas}
	for _, k := range names {
		if n, ok := parseCount(get(h, k)); ok {
			r.Quotas = append(r.Quotas, Quota{Name: strings.ToLower(k[len(azureRemainingPrefix):]), Remaining: n, HasRemaining: true})
		}
	}
	return r, true
}
