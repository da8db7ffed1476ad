package geo

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestScoreKnownPoints (VG1): scores, positions, geohashes and a distance
// redis-server 7.0 answers for the examples of its documentation and the
// corners of the indexable square.
func TestScoreKnownPoints(t *testing.T) {
	for _, tc := range []struct {
		lon, lat float64
		score    float64
		hash     string
	}{
		{13.361389, 38.115556, 3479099956230698, "sqc8b49rny0"},
		{15.087269, 37.502669, 3479447370796909, "sqdtr74hyu0"},
		{180, 85.05112878, 13510798882111488, "bp05b5048p0"},
		{-180, -85.05112878, 0, "00bh0hbj200"},
	} {
		s, ok := Score(tc.lon, tc.lat)
		if !ok || s != tc.score {
			t.Errorf("Score(%v, %v) = %v, %v; redis-server's %v", tc.lon, tc.lat, s, ok, tc.score)
		}
		if h := String(s); h != tc.hash {
			t.Errorf("String(%v) = %q; redis-server's %q", s, h, tc.hash)
		}
	}
	for _, p := range [][2]float64{{180.0000001, 0}, {-181, 0}, {0, 85.05112879}, {0, -90}, {math.Inf(1), 0}} {
		if _, ok := Score(p[0], p[1]); ok || Valid(p[0], p[1]) {
			t.Errorf("Score(%v, %v) is valid", p[0], p[1])
		}
	}
	lon, lat := Decode(3479099956230698)
	if lon != 13.361389338970184 || lat != 38.1155563954963 {
		t.Errorf("Decode(Palermo) = %v, %v; redis-server's 13.36138933897018433 38.11555639549629859", lon, lat)
	}
	lon2, lat2 := Decode(3479447370796909)
	if d := math.Round(Distance(lon, lat, lon2, lat2)*1e4) / 1e4; d != 166274.1516 {
		t.Errorf("Palermo-Catania %v m; redis-server's 166274.1516", d)
	}
}

// TestRoundTrip (VG2): a point decodes to its cell's middle, within half
// a cell of it, which encodes to the same score.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	halfLon, halfLat := 180.0/(1<<26), (LatMax-LatMin)/(1<<27)
	for range 100000 {
		lon, lat := r.Float64()*360-180, r.Float64()*(LatMax-LatMin)+LatMin
		s, ok := Score(lon, lat)
		if !ok {
			t.Fatalf("Score(%v, %v) refused", lon, lat)
		}
		dlon, dlat := Decode(s)
		if math.Abs(dlon-lon) > halfLon*1.0000001 || math.Abs(dlat-lat) > halfLat*1.0000001 {
			t.Fatalf("(%v, %v) decodes to (%v, %v)", lon, lat, dlon, dlat)
		}
		if s2, _ := Score(dlon, dlat); s2 != s {
			t.Fatalf("(%v, %v): score %v, its middle's %v", lon, lat, s, s2)
		}
	}
}

// TestStringIsStandardGeohash (VG3): String agrees with the geohash
// computed by bisection, longitude first, over -180..180 and -90..90.
func TestStringIsStandardGeohash(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		s, _ := Score(r.Float64()*360-180, r.Float64()*(LatMax-LatMin)+LatMin)
		lon, lat := Decode(s)
		want := make([]byte, 0, 11)
		lo := [2]float64{-180, -90}
		hi := [2]float64{180, 90}
		p := [2]float64{lon, lat}
		for c := range 10 {
			v := 0
			for b := range 5 {
				i := (c*5 + b) % 2
				mid := (lo[i] + hi[i]) / 2
				v <<= 1
				if p[i] >= mid {
					v |= 1
					lo[i] = mid
				} else {
					hi[i] = mid
				}
			}
			want = append(want, geohashAlphabet[v])
		}
		want = append(want, '0')
		if got := String(s); got != string(want) {
			t.Fatalf("String(%v) = %q, bisection %q", s, got, want)
		}
	}
}

// TestNeighbours (VG4): east then west, north then south, is the cell
// again, and a neighbour's rectangle shares the cell's edge.
func TestNeighbours(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		step := uint8(1 + r.IntN(StepMax))
		h := Hash{Bits: r.Uint64() & (1<<(2*uint(step)) - 1), Step: step}
		if e := h.neighbour(1, 0).neighbour(-1, 0); e != h {
			t.Fatalf("%+v east then west is %+v", h, e)
		}
		if n := h.neighbour(0, 1).neighbour(0, -1); n != h {
			t.Fatalf("%+v north then south is %+v", h, n)
		}
		a := decode(lonSpan, latSpan, h)
		if e := decode(lonSpan, latSpan, h.neighbour(1, 0)); a.lon.max < LonMax && (e.lon.min != a.lon.max || e.lat != a.lat) {
			t.Fatalf("%+v: east %+v is not next to %+v", h, e, a)
		}
		if n := decode(lonSpan, latSpan, h.neighbour(0, 1)); a.lat.max < LatMax && (n.lat.min != a.lat.max || n.lon != a.lon) {
			t.Fatalf("%+v: north %+v is not next to %+v", h, n, a)
		}
	}
}

// TestRangesCoverShape (VG5): every point a shape holds has its score in
// one of the shape's ranges (shapes away from the poles and the
// antimeridian, where Redis's search is known to miss points too).
func TestRangesCoverShape(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 3000 {
		s := Shape{Lon: r.Float64()*300 - 150, Lat: r.Float64()*120 - 60, Conversion: []float64{1, 1000, 0.3048, 1609.34}[r.IntN(4)]}
		size := []float64{10, 1000, 100000, 1000000}[r.IntN(4)] * r.Float64() / s.Conversion
		if r.IntN(2) == 0 {
			s.Box, s.Width, s.Height = true, size*2*r.Float64(), size*2*r.Float64()
		} else {
			s.Radius = size
		}
		ranges := s.Ranges(nil)
		deg := size * s.Conversion / 111000 * 2
		for range 200 {
			score, ok := Score(s.Lon+(r.Float64()*2-1)*deg*2, s.Lat+(r.Float64()*2-1)*deg)
			if !ok {
				continue
			}
			if _, _, _, in := s.Within(score); !in {
				continue
			}
			found := false
			for _, rg := range ranges {
				found = found || score >= rg.Min && score < rg.Max
			}
			if !found {
				t.Fatalf("%+v holds score %v, in none of %v", s, score, ranges)
			}
		}
	}
}

// TestDistance (VG6): symmetric, 0 from a point to itself, a degree of
// latitude EarthRadius*pi/180 metres, half the equator EarthRadius*pi.
func TestDistance(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 10000 {
		lon1, lat1, lon2, lat2 := r.Float64()*360-180, r.Float64()*170-85, r.Float64()*360-180, r.Float64()*170-85
		if d1, d2 := Distance(lon1, lat1, lon2, lat2), Distance(lon2, lat2, lon1, lat1); d1 != d2 {
			t.Fatalf("not symmetric: %v, %v", d1, d2)
		}
		if d := Distance(lon1, lat1, lon1, lat1); d != 0 {
			t.Fatalf("from a point to itself: %v", d)
		}
	}
	if d := Distance(0, 0, 0, 1); math.Abs(d-EarthRadius*math.Pi/180) > 1e-6 {
		t.Errorf("a degree of latitude: %v", d)
	}
	if d := Distance(-90, 0, 90, 0); math.Abs(d-EarthRadius*math.Pi) > 1e-6 {
		t.Errorf("half the equator: %v", d)
	}
	for _, u := range []struct {
		name string
		m    float64
	}{{"m", 1}, {"KM", 1000}, {"ft", 0.3048}, {"Mi", 1609.34}} {
		if m, ok := Unit(u.name); !ok || m != u.m {
			t.Errorf("Unit(%q) = %v, %v", u.name, m, ok)
		}
	}
	if _, ok := Unit("mm"); ok {
		t.Error("Unit(mm) accepted")
	}
}

// TestTrigRoundsCorrectly (VG7): sin, cos and asin are the nearest
// doubles to the true values, checked against Taylor series in 200-bit
// big.Float arithmetic.
func TestTrigRoundsCorrectly(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const prec = 200
	seriesBig := func(x float64, odd bool) *big.Float {
		bx := new(big.Float).SetPrec(prec).SetFloat64(x)
		x2 := new(big.Float).SetPrec(prec).Mul(bx, bx)
		term := new(big.Float).SetPrec(prec).SetFloat64(1)
		n := 0
		if odd {
			term.Set(bx)
			n = 1
		}
		sum := new(big.Float).SetPrec(prec).Set(term)
		for range 80 {
			term.Mul(term, x2)
			term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(-(n+1)*(n+2))))
			sum.Add(sum, term)
			n += 2
		}
		return sum
	}
	series := func(x float64, odd bool) float64 {
		f, _ := seriesBig(x, odd).Float64()
		return f
	}
	// off is |sin a - y|, exactly enough.
	off := func(a, y float64) *big.Float {
		d := new(big.Float).SetPrec(prec).Sub(seriesBig(a, true), new(big.Float).SetPrec(prec).SetFloat64(y))
		return d.Abs(d)
	}
	for range 500 {
		x := (r.Float64()*2 - 1) * 3.3
		if got, want := sin(x), series(x, true); got != want {
			t.Fatalf("sin(%v) = %v, nearest %v", x, got, want)
		}
		if got, want := cos(x), series(x, false); got != want {
			t.Fatalf("cos(%v) = %v, nearest %v", x, got, want)
		}
		y := r.Float64()
		if i := r.IntN(3); i == 0 {
			y = 1 - r.Float64()*1e-6
		}
		a := asin(y)
		// asin(y) is the nearest double to the root of sin(a) = y: sin at
		// a's neighbours brackets y no closer than at a.
		lo, hi := math.Nextafter(a, 0), math.Nextafter(a, 2)
		if off(lo, y).Cmp(off(a, y)) < 0 || off(hi, y).Cmp(off(a, y)) < 0 {
			t.Fatalf("asin(%v) = %v: a neighbour's sine is nearer", y, a)
		}
	}
}

// TestPartialSort (VG8): PartialSort puts at lo..hi the keys a full sort
// puts there, in order, for slices of every length with many equal keys.
func TestPartialSort(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for range 5000 {
		n := 1 + r.IntN(120)
		s := make([]int, n)
		for i := range s {
			s[i] = r.IntN(1 + r.IntN(50))
		}
		want := append([]int(nil), s...)
		slices.Sort(want)
		lo := r.IntN(n)
		hi := lo + r.IntN(n-lo)
		PartialSort(s, func(a, b int) int { return a - b }, lo, hi)
		if !slices.Equal(s[lo:hi+1], want[lo:hi+1]) {
			t.Fatalf("n %d, %d..%d: %v, sorted %v", n, lo, hi, s[lo:hi+1], want[lo:hi+1])
		}
	}
}
