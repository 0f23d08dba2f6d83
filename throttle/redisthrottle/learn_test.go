package redisthrottle

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/steadyhttp/steady/throttle"
	"github.com/steadyhttp/steady/throttle/learn"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

var throttled429 = &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}

// attempt reserves one request on l at at and observes its answer one rtt later.
func attempt(t *testing.T, l *Limiter, at, rtt time.Duration, resp *http.Response) {
	t.Helper()
	if _, err := l.Reserve(epoch.Add(at)); err != nil {
		t.Fatal(err)
	}
	l.ObserveAttempt(epoch.Add(at), epoch.Add(at+rtt), resp, nil)
}

// storedLaw decodes the law l's key holds in Redis.
func storedLaw(t *testing.T, l *Limiter) *learn.RateLaw {
	t.Helper()
	law, err := newLaw(l.cfg)
	if err != nil {
		t.Fatal(err)
	}
	state, err := l.client.HGet(context.Background(), l.Key(), "law").Result()
	if err != nil {
		t.Fatalf("no law in Redis: %v", err)
	}
	if err := law.UnmarshalBinary([]byte(state)); err != nil {
		t.Fatal(err)
	}
	return law
}

// TestSharedLawIsTheRateLaw: two processes on one key report ten successes between them, then one
// of them a throttle. The law in Redis, and the pace both processes book at, are what one
// learn.RateLaw makes of the same evidence: the first throttle after ten successes searches from
// ten a second.
func TestSharedLawIsTheRateLaw(t *testing.T) {
	c := newClient(t, redisURL(t))
	a, b := mustNew(t, c, "law"), mustNew(t, c, "law")
	const rtt = 10 * time.Millisecond
	local, err := newLaw(a.cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		at := time.Duration(i) * 20 * time.Millisecond
		attempt(t, []*Limiter{a, b}[i%2], at, rtt, ok200)
		local.ObserveRoundTrip(epoch.Add(at), epoch.Add(at+rtt))
	}
	// Each reports its successes with its next reservation.
	attempt(t, a, 200*time.Millisecond, rtt, ok200)
	attempt(t, b, 200*time.Millisecond, rtt, throttled429)
	local.ObserveRoundTrip(epoch.Add(200*time.Millisecond), epoch.Add(210*time.Millisecond))
	local.Admit(epoch.Add(200*time.Millisecond), 10)
	if ev := local.Throttle(epoch.Add(200*time.Millisecond), epoch.Add(210*time.Millisecond)); ev == "" {
		t.Fatal("the local law did not cut")
	}
	if s := b.Stats(); s.Cuts != 1 || s.Throttles != 1 {
		t.Fatalf("b's stats %+v, want one throttle that cut", s)
	}
	stored := storedLaw(t, a)
	if stored.State() != "search" || !near(stored.Rate(), local.Rate()) || !near(stored.Rate(), 10) {
		t.Fatalf("law in Redis: %s at %v/s; one RateLaw with the same evidence: %s at %v/s (want search at 10/s)",
			stored.State(), stored.Rate(), local.State(), local.Rate())
	}
	for _, p := range []*Limiter{a, b} {
		if _, err := p.Reserve(epoch.Add(220 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if got := p.Rate(); !near(got, 10) {
			t.Errorf("a process paces at %v/s, want the law's 10/s", got)
		}
	}
}

// TestOneCutPerEpoch: a throttle for a request sent before the last cut, reported by another
// process, belongs to that cut; one sent after it cuts again.
func TestOneCutPerEpoch(t *testing.T) {
	c := newClient(t, redisURL(t))
	a, b := mustNew(t, c, "epoch"), mustNew(t, c, "epoch")
	for i := range 20 {
		attempt(t, a, time.Duration(i)*time.Millisecond, time.Millisecond, ok200)
	}
	attempt(t, a, 20*time.Millisecond, time.Millisecond, throttled429) // the cut, at 21 ms
	rate := storedLaw(t, a).Rate()
	// b's request left at 19 ms, before the cut.
	b.ObserveAttempt(epoch.Add(19*time.Millisecond), epoch.Add(22*time.Millisecond), throttled429, nil)
	if s := b.Stats(); s.Cuts != 0 || storedLaw(t, a).Rate() != rate {
		t.Fatalf("a throttle of the cut's epoch: b cut %d time(s), pace %v -> %v", s.Cuts, rate, storedLaw(t, a).Rate())
	}
	b.ObserveAttempt(epoch.Add(time.Second), epoch.Add(time.Second+time.Millisecond), throttled429, nil)
	if s := b.Stats(); s.Cuts != 1 {
		t.Fatalf("a throttle for a request sent a second after the cut: %d cuts, want 1", s.Cuts)
	}
}

// TestStaleReservationIsTheCutsEpoch: a request another process booked before a cut, and sent
// after it on that booking (the process had not heard of the cut), belongs to the cut's epoch as a
// request in flight at the cut does: its throttle does not cut again; nor does one it sent after
// the cut but before it heard of it. Once the process has heard of the cut (its next reservation),
// a throttle of what it sends next does. The same holds after the state was forgotten and a new
// law cut: cuts are told apart by Redis's clock, not by versions that start again.
func TestStaleReservationIsTheCutsEpoch(t *testing.T) {
	c := newClient(t, redisURL(t))
	a, b := mustNew(t, c, "stale"), mustNew(t, c, "stale")
	ms := func(n float64) time.Time { return epoch.Add(time.Duration(n * float64(time.Millisecond))) }
	for i := range 20 {
		attempt(t, a, time.Duration(i)*time.Millisecond, time.Millisecond, ok200)
	}
	if _, err := b.Reserve(ms(20)); err != nil { // booked at the startup's pace
		t.Fatal(err)
	}
	attempt(t, a, 21*time.Millisecond, time.Millisecond, throttled429) // the cut, at 22 ms
	rate := storedLaw(t, a).Rate()
	// b hears of the cut when it writes this throttle, at 26 ms.
	b.ObserveAttempt(ms(25), ms(26), throttled429, nil)
	// b's request that left at 25.5 ms, after the cut but before b heard of it.
	b.ObserveAttempt(ms(25.5), ms(27), throttled429, nil)
	if s := b.Stats(); s.Cuts != 0 || storedLaw(t, a).Rate() != rate {
		t.Fatalf("throttles of bookings made before b heard of the cut: b cut %d time(s), pace %v -> %v", s.Cuts, rate, storedLaw(t, a).Rate())
	}
	// Booked after b heard of the cut, the request leaves when it is due: a spacing of the cut's
	// pace after the cut at the earliest (a throttle of one sent sooner is of the cut's epoch).
	r, err := b.Reserve(ms(30))
	if err != nil {
		t.Fatal(err)
	}
	sent := ms(30).Add(r.Delay(ms(30)))
	if hold := ms(22).Add(time.Duration(float64(time.Second) / rate)); sent.Before(hold) {
		t.Fatalf("a booking made after b heard of the cut is due %v after it, before the cut's hold (%v)", sent.Sub(ms(22)), hold.Sub(ms(22)))
	}
	b.ObserveAttempt(sent, sent.Add(time.Millisecond), throttled429, nil)
	if s := b.Stats(); s.Cuts != 1 {
		t.Fatalf("a throttle of a booking made after b heard of the cut, sent when due (%v after the cut): %d cuts, want 1", sent.Sub(ms(22)), s.Cuts)
	}

	// The state is forgotten (WithForget, or Redis lost it); a starts a new law and cuts it.
	if err := c.Del(context.Background(), a.Key()).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		attempt(t, a, time.Duration(100+i)*time.Millisecond, time.Millisecond, ok200)
	}
	attempt(t, a, 121*time.Millisecond, time.Millisecond, throttled429) // the new law's cut, at 122 ms
	rate = storedLaw(t, a).Rate()
	b.ObserveAttempt(ms(125), ms(126), throttled429, nil) // b has not heard of it
	if s := b.Stats(); s.Cuts != 1 || storedLaw(t, a).Rate() != rate {
		t.Fatalf("after the state was forgotten, a throttle of a booking made before b heard of the new cut: b cut %d time(s) (want 1, the first law's), pace %v -> %v",
			s.Cuts, rate, storedLaw(t, a).Rate())
	}
}

// TestCutHoldsAtTheCap: a cut that leaves the pace where it was (a declared rate caps it, and the
// law with it) still holds the slots one spacing, in Redis and in every process that hears of it.
func TestCutHoldsAtTheCap(t *testing.T) {
	c := newClient(t, redisURL(t))
	a, b := mustNew(t, c, "cap"), mustNew(t, c, "cap")
	declared := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Ratelimit-Policy": {`"default";q=10;w=1`}}}
	for i := range 30 {
		attempt(t, a, time.Duration(i)*time.Millisecond, time.Millisecond, declared)
	}
	now := epoch.Add(30 * time.Millisecond)
	var waiting throttle.Reservation
	for range 2 {
		r, err := b.Reserve(now)
		if err != nil {
			t.Fatal(err)
		}
		waiting = r
	}
	before := now.Add(waiting.Delay(now))
	pace := b.Rate()
	changed := waiting.Changed()
	attempt(t, a, 30*time.Millisecond, time.Millisecond, throttled429) // the cut, at 31 ms
	// The run admitted (30) would have the search start at 30/s; the cap bounds the law too.
	if law := storedLaw(t, a); !law.Active() || !near(law.Rate(), pace) {
		t.Fatalf("the law is %s at %v/s, want cut and held at the cap of %v/s", law.State(), law.Rate(), pace)
	}
	now = epoch.Add(32 * time.Millisecond)
	if _, err := b.Reserve(now); err != nil { // b hears of the cut
		t.Fatal(err)
	}
	if got := b.Rate(); !near(got, pace) {
		t.Fatalf("b paces at %v/s after the cut, want the cap, %v/s", got, pace)
	}
	select {
	case <-changed:
	default:
		t.Fatal("b's waiting reservation was not told of the cut's hold")
	}
	spacing := time.Duration(math.Ceil(1e9 / pace))
	// The slot was booked at the interval rounded up to a microsecond, and moves at the exact pace:
	// it may come up to a microsecond per spacing of its wait sooner than the hold alone says.
	rounding := time.Duration(math.Ceil(float64(before.Sub(now))/float64(spacing))+1) * time.Microsecond
	if after := now.Add(waiting.Delay(now)); after.Before(before.Add(spacing - rounding)) {
		t.Errorf("b's waiting slot moved from %v to %v after the cut, want one spacing (%v) later", before.Sub(epoch), after.Sub(epoch), spacing)
	}
}

// TestCutHoldsWaitingReservations: a reservation waiting in another process when the law cuts
// moves, when that process hears of the cut, to at least one new spacing after it, as the slots in
// Redis do (the law's hold: the throttle emptied the server's quota); the next booking follows it.
func TestCutHoldsWaitingReservations(t *testing.T) {
	c := newClient(t, redisURL(t))
	a, b := mustNew(t, c, "hold"), mustNew(t, c, "hold")
	for i := range 20 {
		attempt(t, a, time.Duration(i)*time.Millisecond, time.Millisecond, ok200)
	}
	// a books the request that will draw the throttle; then b books at the startup's pace
	// (thousands a second) until a slot is due after the cut (at 22.02 ms, off the slots' grid):
	// the first, less than an old spacing after it, which the new pace alone would move to less
	// than a new spacing after it.
	if _, err := a.Reserve(epoch.Add(21 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	cutAt := epoch.Add(22*time.Millisecond + 20*time.Microsecond)
	booked := epoch.Add(21 * time.Millisecond)
	var waiting throttle.Reservation
	for i := 0; ; i++ {
		r, err := b.Reserve(booked)
		if err != nil {
			t.Fatal(err)
		}
		if booked.Add(r.Delay(booked)).After(cutAt) {
			waiting = r
			break
		}
		if i == 1000 {
			t.Fatal("b's slots are not booked ahead at the startup's pace")
		}
	}
	a.ObserveAttempt(epoch.Add(21*time.Millisecond), cutAt, throttled429, nil)
	spacing := time.Duration(math.Ceil(1e9 / storedLaw(t, a).Rate()))
	changed := waiting.Changed()
	now := epoch.Add(23 * time.Millisecond)
	next, err := b.Reserve(now) // b hears of the cut
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Fatal("b's waiting reservation was not told that the pace changed")
	}
	due := now.Add(waiting.Delay(now))
	if due.Before(cutAt.Add(spacing)) {
		t.Errorf("b's waiting slot is due %v after the cut, want at least one new spacing (%v)", due.Sub(cutAt), spacing)
	}
	if nextDue := now.Add(next.Delay(now)); nextDue.Before(cutAt.Add(2*spacing)) || !nextDue.After(due) {
		t.Errorf("b's next booking is due %v after the cut, its waiting slot %v; want after the slot and at least two new spacings (%v each)",
			nextDue.Sub(cutAt), due.Sub(cutAt), spacing)
	}
}

// TestWriteConflict: a process whose copy of the law is stale (another wrote a cut since it read
// it) does not write its copy over the cut: the compare-and-set fails, and it applies its
// evidence to the state in Redis.
func TestWriteConflict(t *testing.T) {
	c := newClient(t, redisURL(t))
	a, b := mustNew(t, c, "conflict"), mustNew(t, c, "conflict")
	for i := range 20 {
		attempt(t, a, time.Duration(i)*time.Millisecond, time.Millisecond, ok200)
	}
	attempt(t, b, 20*time.Millisecond, time.Millisecond, ok200) // b reads the law's version
	attempt(t, a, 21*time.Millisecond, time.Millisecond, throttled429)
	cut := storedLaw(t, a)
	// b, at the version before a's cut, reports a throttle of the cut's epoch.
	b.ObserveAttempt(epoch.Add(21*time.Millisecond), epoch.Add(23*time.Millisecond), throttled429, nil)
	after := storedLaw(t, a)
	if !after.Active() || after.Rate() != cut.Rate() || after.State() != cut.State() || !after.LastCut().Equal(cut.LastCut()) {
		t.Fatalf("after b's stale write: %s at %v/s cut at %v, want a's cut kept (%s at %v/s cut at %v)",
			after.State(), after.Rate(), after.LastCut(), cut.State(), cut.Rate(), cut.LastCut())
	}
	if b.lawV != intOf(hget(t, c, a, "lv")) {
		t.Fatalf("b holds version %d, Redis %s", b.lawV, hget(t, c, a, "lv"))
	}
}

// TestBadLawInRedis: a law state no process can read (garbage, another format) reads as a fresh
// law, never a panic, and the next write replaces it.
func TestBadLawInRedis(t *testing.T) {
	c := newClient(t, redisURL(t))
	a := mustNew(t, c, "badlaw")
	attempt(t, a, 0, time.Millisecond, ok200)
	if err := c.HSet(context.Background(), a.Key(), "law", "garbage", "lv", 7).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		attempt(t, a, time.Duration(i+1)*time.Millisecond, time.Millisecond, ok200)
	}
	attempt(t, a, 10*time.Millisecond, time.Millisecond, throttled429)
	if law := storedLaw(t, a); !law.Active() {
		t.Fatalf("the law in Redis after a throttle: %s", law.State())
	}
	if s := a.Stats(); s.Cuts != 1 {
		t.Fatalf("stats %+v, want one cut", s)
	}
}

// TestStartupPaceAndForget: before the first throttle the shared pace is the startup's,
// (successes+1)/RTT, from the initial rate; the learned state expires after WithForget.
func TestStartupPaceAndForget(t *testing.T) {
	c := newClient(t, redisURL(t))
	l := mustNew(t, c, "startup", WithInitialRate(5), WithForget(time.Minute))
	if _, err := l.Reserve(epoch); err != nil {
		t.Fatal(err)
	}
	if got := l.Rate(); got != 5 {
		t.Fatalf("first pace %v/s, want the initial 5/s", got)
	}
	// One success with a 100 ms round trip: two in flight per round trip, 20/s.
	l.ObserveAttempt(epoch, epoch.Add(100*time.Millisecond), ok200, nil)
	if _, err := l.Reserve(epoch.Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if got := l.Rate(); !near(got, 20) {
		t.Errorf("pace after one success %v/s, want 20/s", got)
	}
	ttl, err := c.PTTL(context.Background(), l.Key()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 59*time.Second || ttl > time.Minute {
		t.Errorf("PTTL %v, want about a minute", ttl)
	}
}

// TestAdvertisedRate: a rate in the RateLimit headers paces every process at once, less the
// headroom (L per W, whatever the server's algorithm: a sliding window counter's L-1 is the law's
// to find); lying headers are clamped or ignored.
func TestAdvertisedRate(t *testing.T) {
	url := redisURL(t)
	tests := []struct {
		name   string
		header http.Header
		want   float64
	}{
		{"draft policy", http.Header{"Ratelimit-Policy": {`"default";q=100;w=1`}}, 99},
		{"per minute", http.Header{"Ratelimit-Policy": {`"default";q=600;w=60`}}, 9.9},
		{"enormous", http.Header{"Ratelimit-Policy": {`"default";q=999999999999;w=1`}}, DefaultMaxRate * 0.99},
		{"garbage", http.Header{"Ratelimit-Policy": {`nonsense;;q=`}}, DefaultInitialRate},
		{"negative", http.Header{"X-Ratelimit-Limit": {"-5"}}, DefaultInitialRate},
		{"limit without a window", http.Header{"X-Ratelimit-Limit": {"100"}}, DefaultInitialRate},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("adv-%d", i)
			a := mustNew(t, newClient(t, url), key)
			b := mustNew(t, newClient(t, url), key)
			a.Observe(epoch, &http.Response{StatusCode: http.StatusOK, Header: tt.header}, nil)
			if _, err := a.Reserve(epoch); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Reserve(epoch.Add(time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if got := b.Rate(); !near(got, tt.want) {
				t.Errorf("other process paces at %v, want %v", got, tt.want)
			}
		})
	}
}

// TestReservationsMove: a learning limiter's waiting reservations move when the shared rate
// changes, and Changed announces it.
func TestReservationsMove(t *testing.T) {
	c := newClient(t, redisURL(t))
	l := mustNew(t, c, "move", WithInitialRate(10))
	now := epoch
	l.Reserve(now)
	r, _ := l.Reserve(now) // due at +100ms at 10/s
	if got := r.Delay(now); got != 100*time.Millisecond {
		t.Fatalf("delay %v, want 100ms", got)
	}
	changed := r.Changed()
	// the server advertises 100 per second: at 99%, 99/s
	l.Observe(now, &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Ratelimit-Policy": {`"default";q=100;w=1`}}}, nil)
	r2, _ := l.Reserve(now)
	select {
	case <-changed:
	default:
		t.Fatal("Changed did not fire when the rate moved")
	}
	// the slot clock restarted at now at 99/s: the waiting reservation's 100ms becomes 100ms*10/99
	want := time.Duration(math.Ceil(float64(100*time.Millisecond) * 10 / 99))
	if got := r.Delay(now); got != want {
		t.Errorf("moved delay %v, want %v", got, want)
	}
	// the next booking comes after it at the new pace
	if got := r2.Delay(now); got < want || got > want+10102*time.Microsecond {
		t.Errorf("next booking %v, want one interval after %v", got, want)
	}
}
