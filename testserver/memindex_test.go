package testserver

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// indexFinds returns how many times a lookup of e's hash, probing from its home slot to the first
// empty one, meets e.
func indexFinds(x *keyIndex, e *memEntry) int {
	if len(x.slots) == 0 {
		return 0
	}
	found := 0
	mask := x.mask()
	for i := e.hash & mask; x.slots[i].entry != nil; i = (i + 1) & mask {
		if x.slots[i].entry == e {
			found++
		}
	}
	return found
}

// TestKeyIndex inserts and removes entries at random, with hashes drawn from a few values (so
// that runs of equal and neighbouring hashes form, and wrap around the table's end) or from all
// of them, and checks that every entry held is found once from its home slot (every 10 steps, and
// the one inserted at once), that none removed is, and that the count is right.
func TestKeyIndex(t *testing.T) {
	for _, spread := range []uint64{4, 64, 1 << 63} {
		r := rand.New(rand.NewPCG(spread, 7))
		var x keyIndex
		var held []*memEntry
		for step := range 5000 {
			if len(held) == 0 || r.IntN(100) < 55 {
				// Hashes near the top of the range land in the table's last slots and wrap.
				e := &memEntry{hash: ^uint64(0) - r.Uint64N(spread)}
				x.insert(e)
				held = append(held, e)
				require.Equal(t, 1, indexFinds(&x, e), "step %d: an inserted entry is not found once", step)
			} else {
				i := r.IntN(len(held))
				e := held[i]
				x.remove(e)
				held[i] = held[len(held)-1]
				held = held[:len(held)-1]
				require.Zero(t, indexFinds(&x, e), "step %d: a removed entry is still found", step)
			}
			require.Equal(t, len(held), x.n, "step %d", step)
			require.LessOrEqual(t, 4*x.n, 3*len(x.slots), "step %d: more than three quarters full", step)
			if step%10 == 0 {
				for _, e := range held {
					require.Equal(t, 1, indexFinds(&x, e), "step %d: hash %x", step, e.hash)
				}
			}
		}
		x.reset()
		require.Zero(t, x.n)
	}
}
