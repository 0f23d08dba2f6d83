package redisstore

import (
	"fmt"
	"strings"
)

// Policy is what the store does with a rule's checks when it cannot ask Redis: Redis is down,
// slower than the deadline (WithTimeout), or the circuit is open after a recent failure
// (WithRetryInterval). The zero value is Fallback.
type Policy int

// The policies.
const (
	// Fallback decides the check in a local in-memory store (one per Store) with a share of the
	// limit (WithFallbackShare): each instance then limits on its own, so N instances with share
	// 1/N together admit about the limit. It keeps its state across outages and is not merged back
	// into Redis when Redis returns.
	Fallback Policy = iota
	// FailOpen admits the check without counting it anywhere (the decision reports Remaining 0).
	FailOpen
	// FailClosed denies the check (and with it the request, unless the rule is in shadow mode) with
	// RetryAfter equal to the retry interval, when Redis will be tried again.
	FailClosed
)

// String returns the policy's flag name: "fallback", "fail-open" or "fail-closed".
func (p Policy) String() string {
	switch p {
	case Fallback:
		return "fallback"
	case FailOpen:
		return "fail-open"
	case FailClosed:
		return "fail-closed"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// valid reports whether p is one of the policies.
func (p Policy) valid() bool { return p >= Fallback && p <= FailClosed }

// ParsePolicy returns the policy named s ("fallback", "fail-open" or "fail-closed", case
// insensitive). An unknown name gives an error matching testserver.ErrInvalidOption.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range []Policy{Fallback, FailOpen, FailClosed} {
		if strings.EqualFold(s, p.String()) {
			return p, nil
		}
	}
	return 0, optionErr("ParsePolicy", s, "want fallback, fail-open or fail-closed")
}
