package half

import (
	"math"
	"math/big"
	"testing"
)

// FuzzFromFloat32 checks, for any float32 and both types, the properties
// that define round to nearest even, without the reference's tables:
// the result is a value at least as near as either neighbour (the nearer
// one's bits even on a tie), overflow goes to Inf only from the halfway
// point up, and the next float32 up never rounds lower.
func FuzzFromFloat32(f *testing.F) {
	for _, seed := range []uint32{0, 1, 0x3f800000, 0x33000000, 0x477ff000, 0x477fefff, 0x7f7f8000, 0x7f7fffff, 0x7f800000, 0x7fc00000, 0x80000001, 0xc77ff000, 0x00008000} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, bits uint32) {
		x := math.Float32frombits(bits)
		for _, k := range kinds {
			got := k.from32(x)
			if math.IsNaN(float64(x)) {
				if got != 0x7fff {
					t.Fatalf("%s: NaN %#08x gave %#04x, want 0x7fff", k.ref.name, bits, got)
				}
				continue
			}
			checkNearest(t, k, float64(x), got)
			// Random bits seldom land on a halfway point, so also round
			// the points halfway from the result to its neighbours.
			for _, mid := range midpoints(k, got) {
				if m32 := float32(mid); float64(m32) == mid {
					checkNearest(t, k, mid, k.from32(m32))
				}
				checkNearest(t, k, mid, k.from64(mid))
			}
			// monotonic: the next float32 up rounds no lower
			if up := math.Nextafter32(x, float32(math.Inf(1))); !math.IsInf(float64(x), 1) {
				next := k.from32(up)
				if k.to32(next) < k.to32(got) {
					t.Fatalf("%s: %g rounds to %#04x but the next float32 %g to the lower %#04x", k.ref.name, x, got, up, next)
				}
			}
		}
	})
}

// FuzzFromFloat64 checks the same properties for float64 inputs, and that
// the float64 and float32 routes agree where the float64 is a float32.
func FuzzFromFloat64(f *testing.F) {
	for _, seed := range []uint64{0, 0x3ff0000000000000, 0x3ff0080000000001, 0x40effdffffffffff, 0x40effe0000000000, 0x7ff8000000000000, 0x0000000000000001} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		for _, k := range kinds {
			got := k.from64(x)
			if math.IsNaN(x) {
				if got != 0x7fff {
					t.Fatalf("%s: NaN %#016x gave %#04x, want 0x7fff", k.ref.name, bits, got)
				}
				continue
			}
			checkNearest(t, k, x, got)
			if float64(float32(x)) == x && k.from32(float32(x)) != got {
				t.Fatalf("%s: %g is a float32, yet from float32 gives %#04x and from float64 %#04x", k.ref.name, x, k.from32(float32(x)), got)
			}
		}
	})
}

// midpoints returns the points halfway between h and its finite
// neighbours, with h's sign.
func midpoints(k kind, h uint16) []float64 {
	sign, mag := h&0x8000, h&0x7fff
	var mids []float64
	for _, n := range []uint16{mag - 1, mag + 1} {
		if mag == 0 && n > mag || n > k.maxFinite || mag > k.maxFinite {
			continue
		}
		mids = append(mids, (float64(k.to32(sign|mag))+float64(k.to32(sign|n)))/2)
	}
	return mids
}

// checkNearest fails t unless got is x rounded to nearest even: no
// neighbour of got is nearer x, and on a tie got's bits are even.
func checkNearest(t *testing.T, k kind, x float64, got uint16) {
	t.Helper()
	if k.isNaN(got) {
		t.Fatalf("%s: %g gave NaN %#04x", k.ref.name, x, got)
	}
	if math.Signbit(x) != (got>>15 == 1) {
		t.Fatalf("%s: %g gave %#04x, of the other sign", k.ref.name, x, got)
	}
	inf := k.ref.infBits()
	mag := got & 0x7fff
	ax := new(big.Float).SetFloat64(math.Abs(x))
	// value of a magnitude's bits; Inf stands for 2^(emax+1), where IEEE
	// rounding puts it
	val := func(m uint16) *big.Float {
		if m == inf {
			top, below := float64(k.to32(k.maxFinite)), float64(k.to32(k.maxFinite-1))
			return new(big.Float).SetFloat64(top + (top - below)) // one more step of the top binade
		}
		return new(big.Float).SetFloat64(float64(k.to32(m)))
	}
	if mag == inf && math.IsInf(x, 0) {
		return
	}
	dist := func(m uint16) *big.Float {
		d := new(big.Float).SetPrec(2200).Sub(ax, val(m))
		return d.Abs(d)
	}
	d := dist(mag)
	for _, n := range []uint16{mag - 1, mag + 1} {
		if mag == 0 && n > mag || n > inf {
			continue // no neighbour below zero, none past Inf
		}
		switch dist(n).Cmp(d) {
		case -1:
			t.Fatalf("%s: %g gave %#04x, but %#04x is nearer", k.ref.name, x, got, n)
		case 0:
			if mag&1 == 1 {
				t.Fatalf("%s: %g ties between %#04x and %#04x and must go to the even one", k.ref.name, x, got, n)
			}
		}
	}
}
