package throttle

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
	if span <= 0 || n == 0 {
		return 0, n
	}
	return float64(n) * 1e9 / float64(span), n
}

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
	if span <= 0 || n == 0 {
		return 0, n
	}
	return float64(n) * 1e9 / float64(span), n
}

// reset forgets every event.
func (m *meter) reset() { *m = meter{} }

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

func (l *paceLog) reset() { *l = paceLog{} }
