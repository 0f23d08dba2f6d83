package dialects

import (
	"net/http"
	"strings"
	"time"
)

// salesforce reads Salesforce's REST API.
//
// Source: Salesforce REST API Developer Guide, "Limit Info Header"
// (https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/headers_api_usage.htm):
// "This response header is returned in each request to REST API", field Sforce-Limit-Info, value
// api-usage "Specifies the daily API usage for the organization against which the call was made.
// The first number is the number of API calls used, and the second number is the API limit for the
// organization." Examples: "Sforce-Limit-Info: api-usage=18/5000", "Sforce-Limit-Info:
// api-usage=10018/100000; api-bursts=1/750", and (older versions, pilot) "Sforce-Limit-Info:
// api-usage=25/5000; per-app-api-usage=17/250(appName=sample-connected-app)".
//
// Every name=used/limit member is a quota named as sent, Remaining = limit - used; api-usage is the
// daily (rolling 24-hour) org limit, so its Window is 24h; the others' windows are not documented
// there and stay unknown. The header has no reset.
//
// An exhausted org limit answers 403 (errorCode REQUEST_LIMIT_EXCEEDED): a 403 whose api-usage has
// nothing remaining is read as Throttled, with no RetryAfter (the rolling day frees calls as old
// ones age out, at an unknown pace).
//
// Recognised by Sforce-Limit-Info.
type salesforce struct{}

// salesforceDay is the period of the api-usage limit ("daily API usage", a rolling 24 hours).
const salesforceDay = 24 * time.Hour

// Name returns "salesforce".
func (salesforce) Name() string { return "salesforce" }

// Read reads Sforce-Limit-Info; ok is false without it.
func (salesforce) Read(resp *http.Response, now time.Time) (Reading, bool) {
	return readBuiltin(salesforce{}, resp, now)
}

// readTo is Read with its quotas appended to quotas, not finished (see builtin).
func (salesforce) readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool) {
	v := get(resp.Header, "Sforce-Limit-Info")
	if v == "" {
		return Reading{}, false
	}
	r := Reading{Dialect: "salesforce", Quotas: quotas}
	for _, member := range strings.Split(v, ";") {
		name, usage, ok := strings.Cut(trimOWS(member), "=")
		if !ok || name == "" {
			continue
		}
		if i := strings.IndexByte(usage, '('); i >= 0 {
			usage = usage[:i] // 17/250(appName=...)
		}
		usedS, limitS, ok := strings.Cut(usage, "/")
		used, okU := parseCount(usedS)
		limit, okL := parseCount(limitS)
		if !ok || !okU || !okL || limit <= 0 {
			continue
		}
		q := Quota{Name: name, Limit: limit, Remaining: max(limit-used, 0), HasRemaining: true}
		if name == "api-usage" {
			q.Window, q.WindowAssumed = salesforceDay, true
			if resp.StatusCode == http.StatusForbidden && q.Remaining == 0 {
				r.Throttled = true
			}
		}
		r.Quotas = append(r.Quotas, q)
	}
	return r, true
}
