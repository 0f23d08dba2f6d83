package algorithm

import (
	"math"
	"math/bits"
)

// u128 is an unsigned 128-bit integer. The algorithms multiply counts by window lengths in
// nanoseconds (a quota of a million per day is 8.64e19 request-nanoseconds), which overflows int64;
// every such product is computed exactly in 128 bits, and every operation saturates instead of
// wrapping so that misuse can never turn a full bucket into an empty one.
type u128 struct{ hi, lo uint64 }

// mul returns a*b exactly. Both must be non-negative.
func mul(a, b int64) u128 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return u128{hi, lo}
}

// from returns a (non-negative) as a u128.
func from(a int64) u128 { return u128{0, uint64(a)} }

// add returns x+y, saturating at the largest u128.
func (x u128) add(y u128) u128 {
	lo, c := bits.Add64(x.lo, y.lo, 0)
	hi, c := bits.Add64(x.hi, y.hi, c)
	if c != 0 {
		return u128{math.MaxUint64, math.MaxUint64}
	}
	return u128{hi, lo}
}

// sub returns x-y, or zero when y > x.
func (x u128) sub(y u128) u128 {
	lo, b := bits.Sub64(x.lo, y.lo, 0)
	hi, b := bits.Sub64(x.hi, y.hi, b)
	if b != 0 {
		return u128{}
	}
	return u128{hi, lo}
}

// cmp returns -1, 0 or +1 as x is less than, equal to or greater than y.
func (x u128) cmp(y u128) int {
	switch {
	case x.hi < y.hi:
		return -1
	case x.hi > y.hi:
		return 1
	case x.lo < y.lo:
		return -1
	case x.lo > y.lo:
		return 1
	}
	return 0
}

// isZero reports whether x is zero.
func (x u128) isZero() bool { return x.hi == 0 && x.lo == 0 }

// div returns floor(x/d) as an int64, saturating at math.MaxInt64. d must be positive.
func (x u128) div(d int64) int64 {
	if x.hi >= uint64(d) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(x.hi, x.lo, uint64(d))
	return clampInt64(q)
}

// divCeil returns ceil(x/d) as an int64, saturating at math.MaxInt64. d must be positive.
func (x u128) divCeil(d int64) int64 {
	if x.hi >= uint64(d) {
		return math.MaxInt64
	}
	q, r := bits.Div64(x.hi, x.lo, uint64(d))
	if r != 0 {
		q++ // cannot wrap: q < 2^64-1 whenever r != 0 and d >= 2
	}
	return clampInt64(q)
}

// clampInt64 converts q to int64, saturating at math.MaxInt64.
func clampInt64(q uint64) int64 {
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}
