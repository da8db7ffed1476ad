// Package load holds what the comparison load clients (cmd/memload,
// cmd/embedload) and the in-process benchmarks share: a Zipf generator,
// self-checking values, the stores they talk to, and figures.
package load

import (
	"math"
	"math/rand/v2"
)

// Zipf draws ranks 0..n-1 with P(i) ∝ 1/(i+1)^theta for any theta in (0, 1)
// ∪ (1, ∞), using the method of Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases" (SIGMOD 1994), as YCSB does; Go's
// rand.Zipf needs s > 1 and cannot draw theta 0.9 or 0.99.
type Zipf struct {
	r                   *rand.Rand
	n                   float64
	theta, alpha, zetan float64
	eta                 float64
}

// NewZipf draws from 0..n-1 with skew theta, using r.
func NewZipf(r *rand.Rand, n int, theta float64) *Zipf {
	z := &Zipf{r: r, n: float64(n), theta: theta}
	for i := 1; i <= n; i++ {
		z.zetan += 1 / math.Pow(float64(i), theta)
	}
	zeta2 := 1 + 1/math.Pow(2, theta)
	z.alpha = 1 / (1 - theta)
	z.eta = (1 - math.Pow(2/z.n, 1-theta)) / (1 - zeta2/z.zetan)
	return z
}

// Next draws one rank.
func (z *Zipf) Next() int {
	u := z.r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < 1+math.Pow(0.5, z.theta) {
		return 1
	}
	i := int(z.n * math.Pow(z.eta*u-z.eta+1, z.alpha))
	if i >= int(z.n) {
		i = int(z.n) - 1
	}
	return i
}
