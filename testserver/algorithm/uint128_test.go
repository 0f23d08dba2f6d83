package algorithm

import (
	"math"
	"math/big"
	"testing"
)

// TestUint128 checks the 128-bit helpers against math/big on edge values and random ones.
func TestUint128(t *testing.T) {
	two128 := new(big.Int).Lsh(bi(1), 128)
	maxU := new(big.Int).Sub(two128, bi(1))
	toBig := func(x u128) *big.Int {
		return new(big.Int).Add(new(big.Int).Lsh(new(big.Int).SetUint64(x.hi), 64), new(big.Int).SetUint64(x.lo))
	}
	sat := func(x *big.Int) int64 {
		if x.Cmp(bi(math.MaxInt64)) > 0 {
			return math.MaxInt64
		}
		return x.Int64()
	}
	values := []int64{0, 1, 2, 3, 7, 1e9, 1 << 32, math.MaxInt64 - 1, math.MaxInt64}
	r := seed("u128", 0)
	for range 200 {
		values = append(values, r.Int64(), r.Int64N(1<<20))
	}
	for i, a := range values {
		for j, b := range values {
			if (i*len(values)+j)%7 != 0 && i > 9 && j > 9 {
				continue // a sample of the random pairs is enough
			}
			x := mul(a, b)
			bx := new(big.Int).Mul(bi(a), bi(b))
			if toBig(x).Cmp(bx) != 0 {
				t.Fatalf("mul(%d, %d) = %v, want %v", a, b, toBig(x), bx)
			}
			y := mul(b, b).add(from(a))
			by := new(big.Int).Add(new(big.Int).Mul(bi(b), bi(b)), bi(a))
			if toBig(y).Cmp(by) != 0 {
				t.Fatalf("add = %v, want %v", toBig(y), by)
			}
			wantSub := new(big.Int).Sub(bx, by)
			if wantSub.Sign() < 0 {
				wantSub.SetInt64(0)
			}
			if got := x.sub(y); toBig(got).Cmp(wantSub) != 0 {
				t.Fatalf("sub = %v, want %v", toBig(got), wantSub)
			}
			if got, want := x.cmp(y), bx.Cmp(by); got != want {
				t.Fatalf("cmp(%v, %v) = %d, want %d", bx, by, got, want)
			}
			if b > 0 {
				q, m := new(big.Int).QuoRem(by, bi(b), new(big.Int))
				if got := y.div(b); got != sat(q) {
					t.Fatalf("%v div %d = %d, want %d", by, b, got, sat(q))
				}
				if m.Sign() > 0 {
					q.Add(q, bi(1))
				}
				if got := y.divCeil(b); got != sat(q) {
					t.Fatalf("%v divCeil %d = %d, want %d", by, b, got, sat(q))
				}
			}
		}
	}
	top := u128{math.MaxUint64, math.MaxUint64}
	if toBig(top.add(from(1))).Cmp(maxU) != 0 || !from(1).sub(from(2)).isZero() {
		t.Fatal("add and sub must saturate")
	}
	if top.div(1) != math.MaxInt64 || top.divCeil(math.MaxInt64) != math.MaxInt64 {
		t.Fatal("div must saturate")
	}
}
