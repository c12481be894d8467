package kserve

import "math"

// float32ToHalf rounds a float32 to the nearest IEEE 754 half (ties to even),
// with overflow to infinity and NaN kept NaN.
func float32ToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN
		return sign | 0x7e00
	case exp >= 0x1f: // overflow or infinity
		return sign | 0x7c00
	case exp <= 0: // subnormal half or zero
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		half := mant >> shift
		rem := mant & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, which is the right rounding
	}
	return sign | uint16(half)
}

// halfToFloat32 widens an IEEE 754 half exactly.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		v := float32(mant) / (1 << 24) // subnormal: mant × 2^-24, exact in float32
		if sign != 0 {
			v = -v
		}
		return v
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// float32ToBF16 rounds a float32 to the nearest bfloat16 (ties to even), its
// upper 16 bits, with NaN kept NaN.
func float32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}
