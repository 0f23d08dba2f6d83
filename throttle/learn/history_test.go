package learn

import (
	"math/rand/v2"
	"testing"
)

// TestSendLogAfterCountsLikeAScan: after counts the sends later than t as a scan of the ring does,
// for rings part full and wrapped, bursts of equal times, and times before, among and after them.
func TestSendLogAfterCountsLikeAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sends := range []int{0, 1, 2, 3, 7, 100, sendLogSize - 1, sendLogSize, sendLogSize + 1, 3*sendLogSize + 17} {
		var s sendLog
		now := int64(1000)
		for range sends {
			if rng.IntN(4) != 0 { // a quarter of the sends share the previous one's instant
				now += 1 + rng.Int64N(50)
			}
			s.add(now, 1, 0, 0, 0)
		}
		scan := func(at int64) int64 {
			var n int64
			for i := max(s.n-sendLogSize, 0); i < s.n; i++ {
				if s.slots[i%sendLogSize] > at {
					n++
				}
			}
			return n
		}
		for at := int64(900); at <= now+10; at++ {
			if got, want := s.after(at), scan(at); got != want {
				t.Fatalf("%d sends: after(%d) = %d, a scan counts %d", sends, at, got, want)
			}
		}
	}
}
