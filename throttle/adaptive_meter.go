package throttle

import "time"

// The success meter counts in meterBuckets buckets of meterWidth nanoseconds: two seconds of
// history, read as rates over windows of meterSpan (one second, long enough to see a whole quota
// window of the common per-second limits).
const (
	meterSpan    = int64(1e9)
	meterWidth   = meterSpan / 32
	meterBuckets = 64
	meterWindow  = int(meterSpan / meterWidth) // buckets in one meterSpan
)

// meter counts events (successful responses) in time buckets to tell their rate over the recent
// past, on the integer clock of its limiter. It is a fixed-size value: no allocation, O(1) memory.
type meter struct {
	counts  [meterBuckets]int32
	cur     int   // index of the current bucket
	curEnd  int64 // end of the current bucket (exclusive)
	started bool
	first   int64 // time of the first event, to avoid dividing by a span that saw nothing yet
}

// advance rotates the buckets so that the current one contains t.
func (m *meter) advance(t int64) {
	if !m.started || t < m.curEnd {
		return
	}
	steps := (t-m.curEnd)/meterWidth + 1
	if steps >= meterBuckets {
		m.counts = [meterBuckets]int32{}
	} else {
		for range steps {
			m.cur = (m.cur + 1) % meterBuckets
			m.counts[m.cur] = 0
		}
	}
	m.curEnd += steps * meterWidth
}

// add records one event at t.
func (m *meter) add(t int64) {
	if !m.started {
		m.started, m.first = true, t
		m.curEnd = t + meterWidth
	}
	m.advance(t)
	if m.counts[m.cur] < 1<<30 {
		m.counts[m.cur]++
	}
}

// at returns the count of the bucket i places before the current one.
func (m *meter) at(i int) int {
	return int(m.counts[(m.cur-i+meterBuckets)%meterBuckets])
}

// rate reports the events per second over the last meterSpan before t (over the time since the
// first event when that is shorter), and how many events that is.
func (m *meter) rate(t int64) (perSec float64, n int) {
	if !m.started {
		return 0, 0
	}
	m.advance(t)
	for i := range meterWindow {
		n += m.at(i)
	}
	// The window is the meterWindow-1 full buckets before the current one and the current one's
	// elapsed part.
	span := meterSpan - (m.curEnd - t)
	span = min(span, t-m.first+meterWidth/2)
	if span < minSpan || n == 0 {
		return 0, 0 // too short to say anything
	}
	return float64(n) * 1e9 / float64(span), n
}

// minSpan is the shortest time over which a rate is measured: over less, a server that was left
// alone (a full bucket) admits a burst that says nothing of its rate.
const minSpan = meterSpan / 4

// peak reports the largest number of events in any meterSpan-long window (of whole buckets) of the
// last two seconds, as a rate per second, and that number: the best the server admitted lately.
func (m *meter) peak(t int64) (perSec float64, n int) {
	if !m.started {
		return 0, 0
	}
	m.advance(t)
	sum := 0
	for i := range meterWindow {
		sum += m.at(i)
	}
	n = sum
	for i := meterWindow; i < meterBuckets; i++ {
		sum += m.at(i) - m.at(i-meterWindow)
		n = max(n, sum)
	}
	span := min(meterSpan, t-m.first+meterWidth/2)
	if span < minSpan || n == 0 {
		return 0, 0
	}
	return float64(n) * 1e9 / float64(span), n
}

// rateBefore reports the events per second over the meterSpan before end (or since the first
// event, when that is shorter), in whole buckets, and how many events that is. end must not be
// before the start of the current bucket's window of history.
func (m *meter) rateBefore(t, end int64) (perSec float64, n int) {
	if !m.started {
		return 0, 0
	}
	m.advance(t)
	from := max(end-meterSpan, m.first)
	for i := range meterBuckets {
		bEnd := m.curEnd - int64(i)*meterWidth
		bStart := bEnd - meterWidth
		if bStart >= end || bEnd <= from {
			continue
		}
		n += m.at(i)
	}
	span := end - from
	if span < minSpan || n == 0 {
		return 0, 0
	}
	return float64(n) * 1e9 / float64(span+meterWidth/2), n
}

// paceLog remembers the lowest pace of each meter bucket of the last two seconds, so that the
// limiter can tell whether it asked for more than the server admitted during a whole second.
type paceLog struct {
	mins    [meterBuckets]float64
	cur     int
	curEnd  int64
	started bool
	last    float64
}

// note records that the pace is p at t.
func (l *paceLog) note(t int64, p float64) {
	if !l.started {
		l.started, l.curEnd, l.last = true, t+meterWidth, p
		for i := range l.mins {
			l.mins[i] = 0 // nothing is known of the time before the first note
		}
		l.mins[l.cur] = p
		return
	}
	if t >= l.curEnd {
		steps := min((t-l.curEnd)/meterWidth+1, meterBuckets)
		for range steps {
			l.cur = (l.cur + 1) % meterBuckets
			l.mins[l.cur] = l.last // the pace held until now
		}
		l.curEnd += ((t-l.curEnd)/meterWidth + 1) * meterWidth
	}
	l.mins[l.cur] = min(l.mins[l.cur], p)
	l.last = p
}

// min1 reports the lowest pace of the last meterSpan.
func (l *paceLog) min1() float64 {
	m := l.last
	for i := range meterWindow {
		m = min(m, l.mins[(l.cur-i+meterBuckets)%meterBuckets])
	}
	return m
}

// gapMin is the shortest pause in sending that history treats as a gap (see history.sent).
const gapMin = int64(100 * time.Millisecond)

// history is what an Adaptive limiter remembers of the recent past: its successes, its pace, and
// when it last resumed sending after a gap. A gap (the key paused by a Retry-After, or the caller
// idle) is no part of what the server admitted: rates are measured from its end when it is recent.
type history struct {
	succ      meter
	paces     paceLog
	successes int64

	hasSent  bool
	lastSent int64
	hasGap   bool
	gapEnd   int64 // when sending resumed after the last gap
	gapSucc  int64 // successes counted then
	// gapRate and gapN are the success rate and count of the second before the gap.
	gapRate float64
	gapN    int
}

// sent notes a request that came due at slot while the pacer's interval was interval.
func (h *history) sent(slot, interval int64) {
	if h.hasSent && slot-h.lastSent > max(4*interval, gapMin) {
		h.hasGap, h.gapEnd, h.gapSucc = true, slot, h.successes
		h.gapRate, h.gapN = h.succ.rateBefore(slot, h.lastSent+1)
	}
	h.hasSent, h.lastSent = true, slot
}

// success notes a successful response at t.
func (h *history) success(t int64) {
	h.succ.add(t)
	h.successes++
}

// measured reports the rate of successes over the last second before t, or since the end of a gap
// within it, and how many successes that is.
func (h *history) measured(t int64) (perSec float64, n int) {
	if h.hasGap && t-h.gapEnd < meterSpan {
		// Right after a gap a server that was left alone admits a burst: a rate measured over
		// less than a quarter of a second says little; the second before the gap says more.
		d := t - h.gapEnd
		if d < minSpan {
			return h.gapRate, h.gapN
		}
		n = int(h.successes - h.gapSucc)
		return float64(n) * 1e9 / float64(d), n
	}
	return h.succ.rate(t)
}

// peak reports the most successes in any second of the last two (see meter.peak) as a rate. A gap
// only lowers the count of the seconds it overlaps, which the maximum passes over.
func (h *history) peak(t int64) (perSec float64, n int) {
	return h.succ.peak(t)
}

func (h *history) reset() { *h = history{} }
