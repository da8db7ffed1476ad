package hll

import "math"

// estimate is the cardinality of a histogram of register values (how
// many registers hold each value), by the estimator Redis 7.0 uses
// (hllCount, after Otmar Ertl, "New cardinality estimation algorithms
// for HyperLogLog sketches", arXiv:1702.01284): tau of the registers at
// q+1, the counts of q down to 1 halved in turn, sigma of the zero
// registers, and alpha_inf*m^2 over that sum, rounded half away from
// zero. Values past q+1 (only a crafted dense string holds them) count
// for nothing, as in Redis. Each product is rounded on its own (the
// float64 conversions), so no platform fuses it and the integer is
// redis-server's.
func estimate(hist *[64]int) uint64 {
	const m = float64(numRegisters)
	const alphaInf = 0.721347520444481703680 // HLL_ALPHA_INF, 0.5/ln(2)
	z := float64(m * tau((m-float64(hist[q+1]))/m))
	for j := q; j >= 1; j-- {
		z += float64(hist[j])
		z *= 0.5
	}
	z += float64(m * sigma(float64(hist[0])/m))
	e := math.Round(float64(float64(alphaInf*m)*m) / z)
	if !(e < 1<<63) { // Inf (no register below q+2) or NaN: llroundl's x86 answer
		return 1 << 63
	}
	return uint64(e)
}

// sigma is Ertl's sigma(x) = x + sum_k x^(2^k) 2^(k-1), summed until it
// no longer changes; infinite at 1 (hllSigma).
func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += float64(x * y)
		y += y
		if z == prev {
			return z
		}
	}
}

// tau is Ertl's tau(x) = (1 - x - sum_k (1 - x^(2^-k))^2 2^-k) / 3,
// summed until it no longer changes; 0 at 0 and 1 (hllTau).
func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y)
		if z == prev {
			return z / 3
		}
	}
}
