package learn

// leakMeter measures the rate a refilling quota comes back at from the levels the server reports,
// where the headers say the level but not the rate: Shopify's "used/capacity" call limit, whose
// leak rate the dialect can only assume from the vendor's plans (dialects.Quota.WindowAssumed on
// a continuous quota).
//
// The model: a bucket of capacity C holds used units; each admitted request adds one, and it
// leaks at a rate ρ while it holds any. Between two admitted answers A and B, in the order their
// requests reached the server, it took in the requests admitted between them and leaked
//
//	leaked = usedA + admitted(A, B] − usedB
//
// while no more than ρ·(tB − tA). A bucket that ran empty in between leaked less than it could
// have, so leaked/(tB − tA) is a lower bound on ρ whatever happened, and a tight one while the
// bucket held something throughout, as it does for a client that spends what remains at once and
// paces at the rate after. Pacing by a lower bound cannot overfill the bucket.
//
// The server's order is not the send order: a request that left within the reordering margin of A
// or B may have reached the server on the other side of it. Such requests are not counted as
// admitted between them, and the server-side interval is taken one margin longer than the sends',
// so the bound stays a bound under any reordering the margin covers. The margin is the one-way
// trip's spread, which the round trip's excess over its minimum bounds (the other leg takes at
// least its share of the minimum): the mean excess plus the jitter margin's deviations
// (reorderMargin). A bound that a reordering beyond it inflated would be believed for a whole
// span, so this margin is wider than the one that times sends. A throttled request was not
// admitted: an anchor with a throttled request after it is not used.
//
// The meter keeps the last leakAnchors answers as anchors and takes the largest bound a new answer
// gives against any of them: the oldest gives the finest figure (the margins and the counts'
// whole units weigh least over the longest span) and the newest the first figure after the bucket
// ran empty. The estimate is the largest bound of the span the anchors cover, renewed when it is
// older than that span, so that a server whose rate fell is followed down within a span (its
// throttles cut the pace sooner: see declaredStrategy's share).
type leakMeter struct {
	anchors [leakAnchors]leakAnchor
	n       int64 // anchors recorded in all

	rate   float64 // the estimate, in units per nanosecond; 0 before any bound
	rateAt int64   // the answer time it was measured at
}

// leakAnchor is one admitted answer: its request's send time and the level the server reported.
type leakAnchor struct {
	sent, used int64
	answered   int64
	dirty      bool // a request sent after it was throttled: its bounds would count it as admitted
}

// leakAnchors is how many answers the meter keeps to measure against. With one anchor per answer
// (anchors at least a jitter margin apart), the oldest lies 32 answers back, where one unit of a
// count's rounding moves the bound by about 3% and a margin at each end about as much; pacing
// lower by that leaves the bucket a little to refill, which the remaining count gives back as
// credit (declaredStrategy), so a low bound costs no throughput while answers come.
const leakAnchors = 32

// observe learns from one answer sent at sent and answered at answered, that reported used units
// of the bucket held (the capacity less the remaining) and was throttled or not; sends is the
// learner's send log and margin the reordering margin (reorderMargin). It reports whether the estimate rose.
func (k *leakMeter) observe(sent, answered, used int64, throttled bool, sends *sendLog, margin int64) bool {
	if throttled {
		// Not admitted: every anchor sent before it (by more than the margin can reorder) would
		// count it; their bounds are not used again.
		for i := max(k.n-leakAnchors, 0); i < k.n; i++ {
			if a := &k.anchors[i%leakAnchors]; a.sent < sent+margin {
				a.dirty = true
			}
		}
		return false
	}
	best := 0.0
	for i := max(k.n-leakAnchors, 0); i < k.n; i++ {
		a := &k.anchors[i%leakAnchors]
		if a.dirty || sent-a.sent <= margin {
			// Too close: B may have reached the server before A, and the interval may be empty.
			continue
		}
		// Admitted between them for sure: those sent more than a margin after A and before B,
		// and B itself.
		between := sends.after(a.sent+margin) - sends.after(sent-margin-1)
		// B itself counts too, and a unit comes off for the levels' rounding: each is reported
		// in whole units, so their difference may overstate the fall by less than one.
		leaked := a.used + max(between, 0) - used
		if leaked <= 0 {
			continue
		}
		if r := float64(leaked) / float64(sent-a.sent+margin); r > best {
			best = r
		}
	}
	rose := false
	span := int64(0)
	if k.n > 0 {
		span = answered - k.anchors[max(k.n-leakAnchors, 0)%leakAnchors].answered
	}
	if best > k.rate || (best > 0 && answered-k.rateAt > span) {
		rose = best > k.rate
		k.rate, k.rateAt = best, answered
	}
	if k.n == 0 || sent-k.anchors[(k.n-1)%leakAnchors].sent > margin {
		k.anchors[k.n%leakAnchors] = leakAnchor{sent: sent, used: used, answered: answered}
		k.n++
	}
	return rose
}

// interval is the spacing, in nanoseconds, of the measured rate; 0 before any measure.
func (k *leakMeter) interval() int64 {
	if k.rate <= 0 {
		return 0
	}
	return int64(1 / k.rate)
}

// reorderMargin is how far apart two sends can be and still reach the server in the other order:
// the round trip's mean excess over its minimum plus the jitter margin (see leakMeter).
func reorderMargin(m *model) int64 {
	return max(m.rtt.srtt-m.rtt.min, 0) + m.rtt.margin(m.tun.JitterMargin)
}
