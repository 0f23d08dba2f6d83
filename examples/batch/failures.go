package main

import (
	"sync"
)

// maxReasons is how many distinct failure reasons a tally keeps by name; further reasons are
// counted together as otherReasons.
const maxReasons = 5

// otherReasons names the failures whose reasons came after the first maxReasons distinct ones.
const otherReasons = "other reasons"

// reasonCount is one failure reason and how many requests failed with it.
type reasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// tally counts failures by reason, keeping the first maxReasons distinct reasons in the order
// they were first seen. It is safe for concurrent use.
type tally struct {
	mu      sync.Mutex
	reasons []reasonCount
	other   int
	total   int
}

// add counts n failures with reason.
func (t *tally) add(reason string, n int) {
	if n <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += n
	for i := range t.reasons {
		if t.reasons[i].Reason == reason {
			t.reasons[i].Count += n
			return
		}
	}
	if len(t.reasons) < maxReasons {
		t.reasons = append(t.reasons, reasonCount{reason, n})
		return
	}
	t.other += n
}

// count returns the number of failures counted.
func (t *tally) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// list returns the reasons in the order first seen, then the others, if any.
func (t *tally) list() []reasonCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]reasonCount(nil), t.reasons...)
	if t.other > 0 {
		out = append(out, reasonCount{otherReasons, t.other})
	}
	return out
}
