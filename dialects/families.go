package dialects

import (
	"net/http"
	"strings"
)

// family is a set of the header families a response carries, found in one pass over its field
// names (scanFields). A built-in dialect recognises a response only by fields of its families
// (builtinFamilies), so one whose families are all absent is not asked: without this filter a
// response with three X-RateLimit-* fields was looked up some forty times by the ten dialects
// tried before x-ratelimit, most of a reading's cost.
//
// Like the dialects' own lookups, it matches canonical field names (http.CanonicalHeaderKey),
// which net/http gives every response it reads.
type family uint16

const (
	famXRateLimit family = 1 << iota // X-Ratelimit-Limit, -Remaining, -Reset and any other X-Ratelimit-*
	famXRateDash                     // X-Rate-Limit-*: X's spelling
	famOpenAI                        // X-Ratelimit-*-Requests, X-Ratelimit-*-Tokens
	famDiscord                       // X-Ratelimit-Bucket, -Reset-After, -Global, -Scope
	famIETF                          // Ratelimit, Ratelimit-Policy, Ratelimit-* and the Beta- prefix
	famAnthropic                     // Anthropic-Ratelimit-*
	famGitHub                        // X-Github-*, X-Ratelimit-Resource
	famShopify                       // X-Shopify-Shop-Api-Call-Limit
	famSalesforce                    // Sforce-Limit-Info
	famAzure                         // X-Ms-Ratelimit-Remaining-*, X-Ms-Retry-After-Ms, Retry-After-Ms
	famStripe                        // Stripe-Should-Retry, Request-Id
	famWait                          // Retry-After, Retry-After-Ms, X-Ms-Retry-After-Ms: the waits finish reads
)

// familyInitial holds the first letters of the names familyOf knows: scanFields asks familyOf
// only of a name that starts with one, since most of a response's names (Content-Type, Date,
// Cache-Control, Vary, ...) do not.
var familyInitial = [256]bool{'X': true, 'R': true, 'B': true, 'A': true, 'S': true}

// familyOf returns the family of one canonical field name, 0 for none.
func familyOf(k string) family {
	if k == "" {
		return 0
	}
	switch k[0] { // the letters of familyInitial
	case 'X':
		switch {
		case strings.HasPrefix(k, "X-Ratelimit-"):
			return xRateLimitFamily(k[len("X-Ratelimit-"):])
		case strings.HasPrefix(k, "X-Rate-Limit-"):
			return famXRateDash
		case strings.HasPrefix(k, "X-Github-"):
			return famGitHub
		case k == "X-Shopify-Shop-Api-Call-Limit":
			return famShopify
		case strings.HasPrefix(k, azureRemainingPrefix):
			return famAzure
		case k == "X-Ms-Retry-After-Ms":
			return famAzure | famWait
		}
	case 'R':
		switch {
		case strings.HasPrefix(k, "Ratelimit"):
			return famIETF
		case k == "Retry-After":
			return famWait
		case k == "Retry-After-Ms":
			return famAzure | famWait
		case k == "Request-Id":
			return famStripe
		}
	case 'B':
		if strings.HasPrefix(k, "Beta-Ratelimit") {
			return famIETF
		}
	case 'A':
		if strings.HasPrefix(k, "Anthropic-Ratelimit-") {
			return famAnthropic
		}
	case 'S':
		switch k {
		case "Sforce-Limit-Info":
			return famSalesforce
		case "Stripe-Should-Retry":
			return famStripe
		}
	}
	return 0
}

// xRateLimitFamily is the family of the X-Ratelimit-* field whose name ends in rest: the vendors'
// own fields apart (GitHub's resource, OpenAI's per-unit triples as openAIFamilies names them,
// Discord's bucket fields), since GitHub, OpenAI and Discord are asked before the generic dialect,
// which alone reads the rest.
func xRateLimitFamily(rest string) family {
	switch rest {
	case "Limit", "Remaining", "Reset", "Used", "Retry-After":
		return famXRateLimit
	case "Resource":
		return famGitHub
	case "Bucket", "Reset-After", "Global", "Scope":
		return famDiscord
	}
	k := "X-Ratelimit-" + rest // only for the names past the switch: no allocation on the common path
	for _, f := range openAIFamilies {
		if k == f.limit || k == f.remaining || k == f.reset {
			return famOpenAI
		}
	}
	return famXRateLimit
}

// scanFields returns the families of h's field names and whether any name may be one a built-in
// reads (limitField), in one pass over them. It does not allocate. Every name of a family passes
// limitField, so a name's family, a switch on its first letter, is looked for first, and only a
// name of none (most of a response's) is searched for the words of limitField.
func scanFields(h http.Header) (f family, carries bool) {
	for k := range h {
		var fam family
		if k != "" && familyInitial[k[0]] {
			fam = familyOf(k)
		}
		if fam != 0 {
			f |= fam
			carries = true
		} else if !carries && limitField(k) {
			carries = true
		}
	}
	return f, carries
}

// builtinFamilies are the families each built-in dialect recognises a response by, in the order
// of builtins: one of them present is necessary for its Read to return ok.
var builtinFamilies = [len(builtins)]family{
	famGitHub,                    // github: X-Ratelimit-Resource, X-Github-*
	famAnthropic,                 // anthropic
	famOpenAI,                    // openai: X-Ratelimit-*-Requests, -Tokens
	famShopify,                   // shopify
	famDiscord,                   // discord: X-Ratelimit-Bucket, -Reset-After, -Global, -Scope
	famSalesforce,                // salesforce
	famAzure,                     // azure
	famStripe,                    // stripe
	famIETF,                      // ietf
	famXRateDash,                 // twitter
	famXRateLimit | famXRateDash, // x-ratelimit
}
