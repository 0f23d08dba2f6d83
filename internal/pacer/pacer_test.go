package pacer

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newTestPacer returns a pacer on a clock whose origin is base, recording the slots it sends.
func newTestPacer() (*Pacer, *[]int64, time.Time) {
	base := time.Unix(1000, 0)
	var mu sync.Mutex
	var sent []int64
	p := New(&mu, func(t time.Time) int64 { return int64(t.Sub(base)) }, func(slot, _ int64) { sent = append(sent, slot) })
	return p, &sent, base
}

func TestPacerSpacingIsFIFO(t *testing.T) {
	p, sent, _ := newTestPacer()
	p.SetInterval(0, LaneRequests, 100)
	if r := p.Reserve(0, 1); r != nil {
		t.Fatalf("first request waits until %d, want it due at once", r.slot)
	}
	var rs []*Reservation
	for range 3 {
		rs = append(rs, p.Reserve(10, 1))
	}
	for i, r := range rs {
		if want := int64(100 * (i + 1)); r == nil || r.slot != want {
			t.Fatalf("request %d: slot %v, want %d", i+1, r, want)
		}
	}
	// Cancelling the second moves the third up by one spacing.
	p.cancel(rs[0], 50)
	if rs[1].slot != 100 || rs[2].slot != 200 {
		t.Fatalf("after cancel: slots %d, %d, want 100, 200", rs[1].slot, rs[2].slot)
	}
	p.Settle(250)
	if want := []int64{0, 100, 200}; len(*sent) != 3 || (*sent)[1] != want[1] || (*sent)[2] != want[2] {
		t.Fatalf("sent %v, want %v", *sent, want)
	}
}

func TestPacerCreditAndHold(t *testing.T) {
	p, sent, _ := newTestPacer()
	p.SetInterval(0, LaneRequests, 1000)
	p.Reserve(0, 1)                            // due at 0
	r1, r2 := p.Reserve(1, 1), p.Reserve(1, 1) // waiting at 1000, 2000
	p.Grant(5, 1)                              // one goes at once: the first in line
	if r1.inList || r2.slot != 1005 {
		t.Fatalf("after grant: r1 waiting %v, r2 slot %d; want r1 sent and r2 one spacing after the grant (1005)", r1.inList, r2.slot)
	}
	p.SetHold(6, 5000)
	if r2.slot != 5000 {
		t.Fatalf("held: r2 slot %d, want 5000", r2.slot)
	}
	p.Grant(7, 3) // a credit does not jump a hold
	if !r2.inList {
		t.Fatal("credit released a request before the hold")
	}
	p.Settle(5000)
	if got := (*sent)[len(*sent)-1]; got != 5000 {
		t.Fatalf("last sent at %d, want 5000", got)
	}
}

// TestPacerCreditGoesAtTheHoldsEnd: requests waiting for a hold's end that the credit covers go at
// that end, ahead of the spacing (a quota said to be back at its reset), the rest one spacing after
// the last of them; each spends the credit as it goes.
func TestPacerCreditGoesAtTheHoldsEnd(t *testing.T) {
	p, sent, _ := newTestPacer()
	p.SetInterval(0, LaneRequests, 10_000)
	p.Reserve(0, 1) // due at 0: the next free slot is 10,000
	p.SetHold(1, 3000)
	p.Grant(1, 1)
	r1, r2 := p.Reserve(10, 1), p.Reserve(10, 1)
	if r1 == nil || r1.slot != 3000 || !r1.Held() {
		t.Fatalf("r1 %+v, want held to the hold's end, 3000, not the spacing's 10,000", r1)
	}
	if r2.slot != 13_000 {
		t.Fatalf("r2 slot %d, want one spacing after r1 (13,000)", r2.slot)
	}
	p.Settle(3000)
	if len(*sent) != 2 || (*sent)[1] != 3000 || p.Credit() != 0 {
		t.Fatalf("sent %v, credit %d; want r1 sent at 3000 from the credit", *sent, p.Credit())
	}
	if !r2.inList || r2.slot != 13_000 {
		t.Fatalf("r2 %+v, want waiting until 13,000", r2)
	}
}

func TestPacerInFlightCap(t *testing.T) {
	p, _, _ := newTestPacer()
	p.SetMaxInFlight(0, 1, 1000)
	if r := p.Reserve(0, 1); r != nil {
		t.Fatal("first request held by a cap of 1 with nothing in flight")
	}
	r := p.Reserve(1, 1)
	if r == nil || r.slot != 1001 {
		t.Fatalf("second request: %v, want held until the cap's wait (1001)", r)
	}
	p.Answered(10) // the first answer frees the place
	if r.inList {
		t.Fatalf("second request still waiting (slot %d) after the first was answered", r.slot)
	}
	if p.InFlight() != 1 {
		t.Fatalf("in flight %d, want 1", p.InFlight())
	}
}

// The units lane makes each request wait for its own cost after the one before, as a bucket of
// units drained by the one before admits it: the first goes at once, a cheap one behind it soon,
// a costly one late.
func TestPacerUnitsLane(t *testing.T) {
	p, _, _ := newTestPacer()
	p.SetInterval(0, LaneUnits, 10) // 10 ns per unit
	if r := p.Reserve(0, 50); r != nil {
		t.Fatalf("the first request waited: slot %d", r.slot)
	}
	r1 := p.Reserve(0, 1)
	r2 := p.Reserve(0, 50)
	if r1 == nil || r1.slot != 10 || r2 == nil || r2.slot != 10+500 {
		t.Fatalf("costs 1 then 50 behind a cost of 50: %v, %v; want slots 10 and 510", r1, r2)
	}
	p.Settle(510)
	if r := p.Reserve(2000, 30); r != nil {
		t.Fatalf("after an idle spell that brought its cost back: slot %d, want at once", r.slot)
	}
	if r := p.Reserve(2000, 5); r == nil || r.slot != 2000+50 {
		t.Fatalf("behind it: %v, want its own cost after it (2050)", r)
	}
}

// TestHeld: a reservation placed by a hold or by a full window is held; one placed by the pace
// behind the requests ahead is not.
func TestHeld(t *testing.T) {
	var mu sync.Mutex
	p := New(&mu, func(now time.Time) int64 { return now.UnixNano() }, nil)
	at := func(ns int64) time.Time { return time.Unix(0, ns) }
	mu.Lock()
	p.SetInterval(0, LaneRequests, 10)
	mu.Unlock()
	if r := p.Reserve(0, 1); r != nil {
		t.Fatal("the first request waited")
	}
	r := p.Reserve(0, 1)
	if r == nil || r.Held() {
		t.Fatalf("a request behind the pace: %v held", r)
	}
	r.Cancel(at(0))
	mu.Lock()
	p.SetHold(0, 1000)
	mu.Unlock()
	if r := p.Reserve(0, 1); r == nil || !r.Held() || r.Delay(at(0)) != 1000 {
		t.Fatal("a request behind a hold is not held")
	}

	q := New(&mu, func(now time.Time) int64 { return now.UnixNano() }, nil)
	mu.Lock()
	q.SetWindow(0, 2, 500, 0, nil)
	mu.Unlock()
	for range 2 {
		if r := q.Reserve(0, 1); r != nil {
			t.Fatal("a request within the window waited")
		}
	}
	if r := q.Reserve(0, 1); r == nil || !r.Held() || r.Delay(at(0)) != 500 {
		t.Fatal("a request beyond a full window is not held")
	}
}

// A units credit bounds the burst by the costs of its requests, in order: the first that does not
// fit stops it, and it then goes at the units lane's pace (its own cost times the spacing per unit
// after the burst, which drained the bucket).
func TestPacerUnitCredit(t *testing.T) {
	p, sent, _ := newTestPacer()
	p.SetInterval(0, LaneUnits, 10) // 10 ns per unit
	p.Grant(0, 5)                   // five requests may go at once...
	p.GrantUnits(0, 100)            // ...if they cost at most 100 units in all
	if p.Reserve(0, 60) != nil || p.Reserve(0, 30) != nil {
		t.Fatal("requests within the units credit were held")
	}
	r := p.Reserve(0, 20) // 90 spent: 20 does not fit
	if r == nil || r.slot != 20*10 {
		t.Fatalf("a request over the units credit: %v, want held for its own cost after the burst (200)", r)
	}
	if p.Credit() != 3 || p.UnitCredit() != 10 {
		t.Fatalf("credit %d, units %d; want 3 and 10", p.Credit(), p.UnitCredit())
	}
	p.GrantUnits(5, 20) // a new units credit lets it go at once
	if r.inList || (*sent)[len(*sent)-1] != 5 {
		t.Fatalf("after GrantUnits: waiting %v, last sent %v", r.inList, *sent)
	}
	p.GrantUnits(5, -1) // unmetered: the requests credit alone counts
	if p.Reserve(6, 1000) != nil {
		t.Fatal("an unmetered credit held a costly request")
	}
}

// TestPacerBatchAppliesAsOne: a plan that lifts the spacing and sets a hold in its place lets no
// waiting request go in between when applied in a batch; applied setting by setting, the spacing
// lifted first sends every waiter at once (what a learner switching from a pace to a hold did).
func TestPacerBatchAppliesAsOne(t *testing.T) {
	for _, batched := range []bool{true, false} {
		p, sent, _ := newTestPacer()
		p.SetInterval(0, LaneRequests, 1000)
		p.Reserve(0, 1) // due at 0
		var rs []*Reservation
		for range 3 {
			rs = append(rs, p.Reserve(1, 1)) // waiting at 1000, 2000, 3000
		}
		if batched {
			p.Begin()
		}
		p.SetInterval(10, LaneRequests, 0)
		p.SetHold(10, 9000)
		p.Grant(10, 1)
		if batched {
			if len(*sent) != 1 {
				t.Fatalf("batched: %d sent before Commit, want only the first", len(*sent))
			}
			p.Commit(10)
		}
		gone := len(*sent) - 1
		for _, r := range rs {
			if !r.inList {
				continue
			}
			if r.slot < 9000 {
				t.Fatalf("batched=%v: a waiter slotted at %d, before the hold", batched, r.slot)
			}
		}
		if batched && gone != 0 {
			t.Fatalf("batched: %d waiters went before the hold, want none", gone)
		}
		if !batched && gone != 3 {
			t.Fatalf("unbatched: %d waiters went, want all 3 (the hazard the batch removes)", gone)
		}
	}
}

// TestPacerCatchUpBound: a request that went late moves the ones behind it only as far as the
// bound on catching up asks: with none (the default) they keep to the schedule; with 0 they follow
// it by a whole spacing; with n they may close on it by n spacings.
func TestPacerCatchUpBound(t *testing.T) {
	for _, c := range []struct {
		catchUp, went int64
		want          [2]int64 // the slots of the two requests booked behind the first
	}{
		{-1, 50, [2]int64{100, 200}},
		{0, 50, [2]int64{150, 250}},
		{1, 50, [2]int64{100, 200}},
		// Went at 150: the request at 100 is due by then and counts as gone with it.
		{0, 150, [2]int64{100, 250}},
		{1, 150, [2]int64{100, 200}},
	} {
		p, _, _ := newTestPacer()
		p.SetInterval(0, LaneRequests, 100)
		p.SetCatchUp(c.catchUp)
		if r := p.Reserve(0, 1); r != nil {
			t.Fatalf("catch-up %d: first request not due at once", c.catchUp)
		}
		rs := []*Reservation{p.Reserve(10, 1), p.Reserve(10, 1)}
		p.Went(c.went) // the first request (slot 0) went late
		if got := [2]int64{rs[0].slot, rs[1].slot}; got != c.want {
			t.Errorf("catch-up %d: slots %v after the first request went at %d, want %v", c.catchUp, got, c.went, c.want)
		}
	}
}

// A refused send gives its place in the window back: the window holds what the server admitted.
// Before, a request refused at 0 held its place in a window of 3 per 1,000 until 1,000, and a fourth
// request waited for it though the server had admitted only two.
func TestPacerRefusedFreesItsWindowPlace(t *testing.T) {
	for _, c := range []struct {
		name    string
		refused int64 // the send time the answer names
		near    int64
		want    int64 // the fourth request's delay at 20
	}{
		{"the refused send taken back", 0, 5, 0},
		{"a late send within near", 3, 5, 0},               // left 3 late: the one at 0
		{"a send time no slot matches", 500, 5, 1000 - 20}, // nothing taken back
		{"a send time before every slot", -100, 5, 1000 - 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := windowPacer(t, 3, 1000)
			for _, at := range []int64{0, 10, 20} {
				if r := p.Reserve(at, 1); r != nil {
					t.Fatalf("a request at %d within the window waited", at)
				}
			}
			p.Refused(20, c.refused, c.near)
			r := p.Reserve(20, 1)
			var got int64
			if r != nil {
				got = r.slot - 20
			}
			if got != c.want {
				t.Fatalf("the next request waits %d, want %d", got, c.want)
			}
		})
	}
}

// Taken back from a window that has wrapped, a send leaves the place before the oldest held free:
// the send that place held fell out of the ring long ago.
func TestPacerRefusedInAWrappedWindow(t *testing.T) {
	p := windowPacer(t, 2, 1000)
	for _, at := range []int64{0, 10, 1000, 1010} { // the last two a window after the first two
		if r := p.Reserve(at, 1); r != nil {
			t.Fatalf("a request at %d within the window waited until %d", at, r.slot)
		}
	}
	p.Refused(1010, 1000, 5)
	if r := p.Reserve(1010, 1); r != nil {
		t.Fatalf("after the send at 1000 was refused, the next waits until %d, want it due at once", r.slot)
	}
	if r := p.Reserve(1010, 1); r == nil || r.slot != 2010 {
		t.Fatalf("the window full again: the next at %v, want a window after the send at 1010 (2010)", r)
	}
}

// windowPacer returns a pacer (its lock held until the test ends) with a window of limit per span.
func windowPacer(t *testing.T, limit int, span int64) *Pacer {
	t.Helper()
	var mu sync.Mutex
	p := New(&mu, func(now time.Time) int64 { return now.UnixNano() }, nil)
	mu.Lock()
	t.Cleanup(mu.Unlock)
	p.SetWindow(0, limit, span, 0, nil)
	return p
}

// The place a refused send gives back goes to a request already waiting for the window, at once,
// and the line behind it keeps its order.
func TestPacerRefusedReleasesTheLine(t *testing.T) {
	p := windowPacer(t, 3, 1000)
	for _, at := range []int64{0, 10, 20} {
		p.Reserve(at, 1)
	}
	a, b := p.Reserve(30, 1), p.Reserve(30, 1)
	p.Refused(40, 10, 5)
	if a == nil || b == nil || a.slot != 40 || b.slot != 1000 {
		t.Fatalf("the waiting requests at %v and %v, want 40 (the freed place) and 1000 (a window after the send at 0)", a, b)
	}
}

// Refused takes back the newest matching send, and the window keeps its order, wrapped or not.
func TestPacerRefusedKeepsTheWindowsOrder(t *testing.T) {
	t.Run("the newest of two within near", func(t *testing.T) {
		p := windowPacer(t, 2, 1000)
		p.Reserve(0, 1)
		p.Reserve(3, 1)
		p.Refused(3, 3, 5) // the one at 3: admitted, the one at 0
		p.Reserve(4, 1)    // the window: 0, 4
		if r := p.Reserve(5, 1); r == nil || r.slot != 1000 {
			t.Fatalf("the next at %v, want a window after the send at 0 (1000)", r)
		}
	})
	t.Run("the middle of a wrapped window", func(t *testing.T) {
		p := windowPacer(t, 3, 1000)
		for _, at := range []int64{0, 10, 20, 1000, 1010, 1020} {
			if r := p.Reserve(at, 1); r != nil {
				t.Fatalf("a request at %d waited until %d", at, r.slot)
			}
		}
		p.Refused(1030, 1010, 5) // admitted: 1000, 1020
		if r := p.Reserve(1030, 1); r != nil {
			t.Fatalf("one place free, the next waited until %d", r.slot)
		}
		if r := p.Reserve(1040, 1); r == nil || r.slot != 2000 { // the window: 1000, 1020, 1030
			t.Fatalf("the next at %v, want a window after the send at 1000 (2000)", r)
		}
	})
	t.Run("the oldest of a wrapped window", func(t *testing.T) {
		p := windowPacer(t, 3, 1000)
		for _, at := range []int64{0, 10, 20, 1000, 1010, 1020} {
			p.Reserve(at, 1)
		}
		p.Refused(1030, 1000, 5) // admitted: 1010, 1020
		p.Reserve(1030, 1)       // the window: 1010, 1020, 1030
		if r := p.Reserve(2010, 1); r != nil {
			t.Fatalf("at 2010 the send at 1010 has left the window; the next waited until %d", r.slot)
		}
	})
	t.Run("a slot a little after the send time named", func(t *testing.T) {
		p := windowPacer(t, 2, 1000)
		p.Reserve(0, 1)
		p.Reserve(10, 1)
		p.Refused(10, 8, 5) // its owner read its clock at 8, before another caller's 10
		if r := p.Reserve(10, 1); r != nil {
			t.Fatalf("the send at 10 taken back, the next waited until %d", r.slot)
		}
	})
}
