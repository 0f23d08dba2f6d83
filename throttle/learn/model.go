package learn

// trust is how far the learner believes the server's rate-limit headers.
type trust int

const (
	trustNone       trust = iota // no header seen: the headerless strategies drive
	trustBelieved                // headers seen and not contradicted
	trustDistrusted              // headers contradicted by throttles: ignored for the learner's life (a key the throttle evicts starts afresh)
)

// liveContradictions is the count of contradictions that still stand: none once the server has
// admitted a whole declared quota since the first of them without another (the headers held; a
// race with another client a minute ago is no lie). Without a declared limit they stand for good.
func (m *model) liveContradictions() int {
	if m.contradictions > 0 && m.limit > 0 && m.successes-m.contradictedAt >= m.limit {
		return 0
	}
	return m.contradictions
}

func (t trust) String() string {
	return [...]string{"none", "believed", "distrusted"}[t]
}

// Kind is how a server's quota comes back, as far as the evidence shows.
type Kind int

// The kinds of quota the learner tells apart.
const (
	KindUnknown   Kind = iota // not seen exhausted yet
	KindRefilling             // comes back a request at a time (token or leaky bucket)
	KindWhole                 // comes back whole at a reset (fixed window, sliding log)
	KindCounter               // refilling, but sustains only limit-1 per window (sliding window counter)
)

// String names the kind: "unknown", "refilling", "whole" or "counter".
func (k Kind) String() string {
	return [...]string{"unknown", "refilling", "whole", "counter"}[k]
}

// model is what the learner believes about one key's server, and the evidence it keeps. It is
// guarded by the learner's mutex.
type model struct {
	tun   Tuning
	rtt   rtt
	sends sendLog
	succ  successLog

	successes, throttles int64

	// What the headers declared (0: never said) and how far they are believed.
	limit, window int64
	trust         trust
	// contradictions counts the throttles that contradicted the headers since the first of them,
	// when the count of successes was contradictedAt: see liveContradictions.
	contradictions int
	contradictedAt int64
	kind           Kind

	// share is the part of the declared rate this client paces at (1: all of it). Other clients
	// on the same key spend the same quota: a throttle at the declared pace with nothing left for
	// the request halves it, spare quota in the answers brings it back (see declaredStrategy).
	share float64

	// units is the quota of other units than requests (tokens, points) the server declared.
	units unitsQuota

	// rateAssumed reports that the declared rate is the dialect's guess for a quota the server
	// reports only the level of (Shopify's used/capacity): leak measures the true one.
	rateAssumed bool
	leak        leakMeter

	// trickled is set when the cycles strategy's test found that a quota after a wall trickles
	// back instead of coming back whole (a bucket); the rate strategy reads and clears it.
	trickled bool

	// pauseUntil is the end of the last Retry-After the server asked for (0: none), each bounded
	// by maxPause unless it is negative (WithMaxPause; -1 by default: no bound).
	pauseUntil int64
	maxPause   int64
	// pausePrev is the end of the pause before pauseUntil's (0: none): see pauseEndedBy.
	pausePrev int64

	// inFlight is how many requests are sent and not answered.
	inFlight int
	// driver is the name of the strategy in charge: a strategy whose evidence would be skewed
	// by another's way of sending (the rate law's measure by the cycles' bursts) can tell.
	driver string
}

// declaredInterval is serverInterval times this client's share of it: the spacing this client
// paces a declared quota at (0 when no rate is declared).
func (m *model) declaredInterval() int64 {
	share := m.share
	if !(share > 0) {
		share = 1
	}
	return int64(m.serverInterval() / share)
}

// serverInterval is the spacing, in nanoseconds, of the declared rate less the headroom, and of
// limit-1 per window where a sliding window counter is evident: the rate the server allows the key,
// before the share left to other clients; 0 when no rate is declared. Where the declared rate is
// assumed (rateAssumed), a faster leak measured from the levels replaces it: the measure is a lower
// bound of the server's rate.
func (m *model) serverInterval() float64 {
	if m.limit <= 0 || m.window <= 0 {
		return 0
	}
	per := float64(m.limit)
	if m.kind == KindCounter {
		// A sliding window counter at an even pace sustains limit-1 per window (its previous
		// window weighs on the next); with a limit of one, one request every other window.
		per = max(per-1, 0.5)
	}
	iv := float64(m.window) / per
	if li := m.leak.interval(); m.rateAssumed && li > 0 && float64(li) < iv {
		iv = float64(li)
	}
	return iv / (1 - m.tun.Headroom)
}

// pauseEndedBy returns the end of the latest pause the server asked for that is over at t (0:
// none): nothing was sent during it, so no rate is measured across it.
func (m *model) pauseEndedBy(t int64) int64 {
	if m.pauseUntil <= t {
		return m.pauseUntil
	}
	return m.pausePrev
}
