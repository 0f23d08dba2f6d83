package learn

// sendLog remembers the send times of the latest requests (a ring of sendLogSize), so that the
// learner can count how many requests left after a given one: those are the requests the server
// had not seen yet when it answered it.
type sendLog struct {
	slots  [sendLogSize]int64
	credit [sendLogSize]int64 // the credit the headers gave each send when it left (see declaredStrategy)
	upper  [sendLogSize]int64 // the most the headers can have left for it (no jitter margin)
	before [sendLogSize]int64 // the units (request costs) sent before each send
	// others is how many other requests were in flight when each left: the most of those sent
	// before it that can reach the server after it (one answered already was seen).
	others [sendLogSize]int64
	n      int64 // sends recorded in all
	units  int64 // units sent in all
}

// sendLogSize bounds the memory: more requests than this in flight at once are counted as this
// many, which only makes the learner more careful.
const sendLogSize = 1024

func (s *sendLog) add(slot, cost, credit, upper, others int64) {
	s.others[s.n%sendLogSize] = others
	s.before[s.n%sendLogSize] = s.units
	s.units += cost
	s.slots[s.n%sendLogSize] = slot
	s.credit[s.n%sendLogSize] = credit
	s.upper[s.n%sendLogSize] = upper
	s.n++
}

// creditOf returns the credit and its upper bound recorded for the latest send at or before t, if
// it is still in the ring. Of sends at the same instant it takes the last, whose credit is the
// smallest.
func (s *sendLog) creditOf(t int64) (credit, upper int64, ok bool) {
	i := s.n - s.after(t) - 1
	if i < 0 || i < s.n-sendLogSize {
		return 0, 0, false
	}
	return s.credit[i%sendLogSize], s.upper[i%sendLogSize], true
}

// latest returns the send times of the latest k sends that the ring holds, oldest first.
func (s *sendLog) latest(k int64) []int64 {
	k = min(k, s.n, sendLogSize)
	out := make([]int64, 0, k)
	for i := s.n - k; i < s.n; i++ {
		out = append(out, s.slots[i%sendLogSize])
	}
	return out
}

// last returns the send time of the latest send, and whether there was one.
func (s *sendLog) last() (int64, bool) {
	if s.n == 0 {
		return 0, false
	}
	return s.slots[(s.n-1)%sendLogSize], true
}

// unseen counts the requests sent at or after t, but one: with t the send time of the request
// answered, those the server had not seen when it answered it. Requests that left at the same
// instant as it (a burst) are counted as unseen too, all but itself: which of them arrived first
// is not known, and counting them keeps the credit on the safe side.
func (s *sendLog) unseen(t int64) int64 { return max(s.after(t-1)-1, 0) }

// unseenBy counts the requests the server may not have seen when it answered the one sent at sent:
// those sent after it or in the same instant (but itself), and those sent within margin before
// it (they may have arrived after it), but no more of these than were in flight when it left: a
// request answered before it left was seen. A sequential client's previous request, answered a
// moment before, counted as unseen held back the last unit of a quota (3 per 10 min, the last
// one refused for an 86 s pace).
func (s *sendLog) unseenBy(sent, margin int64) int64 {
	all := max(s.after(sent-margin-1)-1, 0) // at or after sent-margin, but itself
	i := s.n - s.after(sent) - 1            // itself: the latest send at or before sent
	if i < 0 || i < s.n-sendLogSize {
		return all
	}
	own := s.slots[i%sendLogSize]
	before := s.after(sent-margin-1) - s.after(own-1) // sent within the margin before it
	if others := s.others[i%sendLogSize]; before > others {
		return all - (before - others)
	}
	return all
}

// unitsFrom sums the costs of the sends at or after t (of those the ring still holds: more than
// sendLogSize in flight are counted as that many, as unseen does).
func (s *sendLog) unitsFrom(t int64) int64 {
	i := s.n - s.after(t-1) // the first send at or after t
	if i >= s.n {
		return 0
	}
	return s.units - s.before[i%sendLogSize]
}

// after counts the recorded sends at times strictly after t. Sends are recorded in time order.
//
// The times asked about are nearly always recent (an answered request's send, with the few in
// flight sent after it), so it gallops back from the latest send (1, 2, 4... sends back) before it
// bisects: a handful of probes near the end of the ring rather than ten across it.
func (s *sendLog) after(t int64) int64 {
	lo, hi := max(s.n-sendLogSize, 0), s.n // search [lo, hi) for the first send after t
	for step := int64(1); ; step *= 2 {
		i := s.n - step
		if i < lo || s.slots[i%sendLogSize] <= t {
			lo = max(lo, i+1) // send i is at or before t
			break
		}
		hi = i // sends i.. are after t
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if s.slots[mid%sendLogSize] > t {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return s.n - lo
}

// successLog remembers the answer times of the latest successes, to measure the rate the server
// admitted over the last few of them.
type successLog struct {
	at [successLogSize]int64
	n  int64
}

const successLogSize = 64

func (s *successLog) add(t int64) {
	s.at[s.n%successLogSize] = t
	s.n++
}

// rate is the admitted rate, in requests per nanosecond, over the last k successes (k-1 spacings
// between the first and the last of them), and whether k were seen; only successes at or after
// since count.
func (s *successLog) rate(k int, since int64) (float64, bool) {
	k = min(k, successLogSize)
	if k < 2 || s.n < int64(k) {
		return 0, false
	}
	first, last := s.at[(s.n-int64(k))%successLogSize], s.at[(s.n-1)%successLogSize]
	if first < since || last <= first {
		return 0, false
	}
	return float64(k-1) / float64(last-first), true
}
