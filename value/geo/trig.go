package geo

import "math"

// Correctly rounded sine, cosine and arcsine for Distance. Redis computes
// distances with glibc's sin, cos and asin, which round (all but never
// wrongly) to the nearest double; Go's math.Sin, Cos and Asin may be a
// bit or two off, which shows in a stored distance's 17 digits. These
// compute in double-double arithmetic (T. J. Dekker, "A floating-point
// technique for extending the available precision", 1971: about 106
// bits) and round once: sine and cosine by reduction modulo pi/2 and
// their Taylor series, arcsine by a Newton step on the sine from
// math.Asin's estimate.

// dd is the unevaluated sum hi+lo, |lo| at most half an ulp of hi.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := float64(a * b)
	return dd{p, math.FMA(a, b, -p)}
}

func (x dd) add(y dd) dd {
	s, t := twoSum(x.hi, y.hi), twoSum(x.lo, y.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func (x dd) neg() dd        { return dd{-x.hi, -x.lo} }
func (x dd) sub(y dd) dd    { return x.add(y.neg()) }
func (x dd) round() float64 { return x.hi + x.lo }

func (x dd) mul(y dd) dd {
	p := twoProd(x.hi, y.hi)
	p.lo += float64(x.hi*y.lo) + float64(x.lo*y.hi)
	return quickTwoSum(p.hi, p.lo)
}

func (x dd) mulF(f float64) dd { return x.mul(dd{f, 0}) }

func (x dd) div(y dd) dd {
	q1 := x.hi / y.hi
	r := x.sub(y.mulF(q1))
	q2 := r.hi / y.hi
	r = r.sub(y.mulF(q2))
	q3 := r.hi / y.hi
	return quickTwoSum(q1, q2).add(dd{q3, 0})
}

// pio2 is pi/2 in three parts, to 160 bits.
var pio2 = [3]float64{1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33}

// invFact[n] is 1/n! as a double-double, for the Taylor series.
var invFact = func() [28]dd {
	var f [28]dd
	f[0] = dd{1, 0}
	for n := 1; n < len(f); n++ {
		f[n] = f[n-1].div(dd{float64(n), 0})
	}
	return f
}()

// sinCos is the sine and cosine of x, |x| at most a few turns.
func sinCos(x dd) (sin, cos dd) {
	k := math.Round(x.hi / pio2[0])
	r := x.sub(twoProd(k, pio2[0])).sub(twoProd(k, pio2[1])).sub(dd{k * pio2[2], 0})
	r2 := r.mul(r)
	// sin r = sum (-1)^i r^(2i+1)/(2i+1)!, cos r = sum (-1)^i r^(2i)/(2i)!.
	s, c := r, dd{1, 0}
	p := dd{1, 0}
	for n := 2; n+1 < len(invFact); n += 2 {
		p = p.mul(r2).neg()
		c = c.add(p.mul(invFact[n]))
		s = s.add(p.mul(r).mul(invFact[n+1]))
	}
	switch int64(k) & 3 {
	case 1:
		return c, s.neg()
	case 2:
		return s.neg(), c.neg()
	case 3:
		return c.neg(), s
	}
	return s, c
}

// trigLimit is the largest argument sin and cos reduce exactly enough;
// past it (only a search's bounds for a huge radius) math's serve.
const trigLimit = 16

func sin(x float64) float64 {
	if math.Abs(x) > trigLimit || x != x {
		return math.Sin(x)
	}
	s, _ := sinCos(dd{x, 0})
	return s.round()
}

func cos(x float64) float64 {
	if math.Abs(x) > trigLimit || x != x {
		return math.Cos(x)
	}
	_, c := sinCos(dd{x, 0})
	return c.round()
}

// asinDD is the arcsine of x in [0, 0.5], one Newton step from
// math.Asin's estimate: y - (sin y - x)/cos y.
func asinDD(x dd) dd {
	y := dd{math.Asin(x.hi), 0}
	s, c := sinCos(y)
	return y.sub(s.sub(x).div(c))
}

// asin is the arcsine of x in [0, 1] (a haversine's root): directly up
// to 0.5, above by asin x = pi/2 - 2 asin sqrt((1-x)/2), where the sine
// is steep enough for Newton's step.
func asin(x float64) float64 {
	switch {
	case x != x || x < 0 || x > 1:
		return math.Asin(x)
	case x <= 0.5:
		return asinDD(dd{x, 0}).round()
	case x == 1:
		return dd{pio2[0], pio2[1]}.round()
	}
	t := (1 - x) / 2 // exact: Sterbenz, then a halving
	zh := math.Sqrt(t)
	z := quickTwoSum(zh, math.FMA(-zh, zh, t)/(2*zh))
	w := asinDD(z)
	return dd{pio2[0], pio2[1]}.add(dd{pio2[2], 0}).sub(w.add(w)).round()
}
