package geo

import "math"

// Shape is a search area: a circle of Radius, or a box of Width by
// Height (Box), around Lon, Lat, its sizes in a unit of Conversion
// metres.
type Shape struct {
	Lon, Lat              float64
	Box                   bool
	Radius, Width, Height float64
	Conversion            float64
}

// Within reports whether the point a score stands for is in s, with its
// point and its distance from s's centre in metres. A circle holds the
// points at most Radius away; a box those whose distance north-south
// (along the centre's meridian) is at most Height/2 and east-west (along
// the point's parallel) at most Width/2 (Redis's GEOSEARCH BYBOX).
func (s *Shape) Within(score float64) (lon, lat, dist float64, ok bool) {
	lon, lat = Decode(score)
	if !s.Box {
		dist = Distance(s.Lon, s.Lat, lon, lat)
		return lon, lat, dist, dist <= s.Radius*s.Conversion
	}
	if latDistance(lat, s.Lat) > s.Height*s.Conversion/2 {
		return lon, lat, 0, false
	}
	if Distance(lon, lat, s.Lon, lat) > s.Width*s.Conversion/2 {
		return lon, lat, 0, false
	}
	return lon, lat, Distance(s.Lon, s.Lat, lon, lat), true
}

// bounds is the rectangle of longitudes and latitudes s reaches: its
// half-height (the radius of a circle) north and south, its half-width
// east and west at the latitude (north or south of the centre, the one
// nearer a pole) where that is the most degrees.
func (s *Shape) bounds() (minLon, minLat, maxLon, maxLat float64) {
	h, w := s.Radius, s.Radius
	if s.Box {
		h, w = s.Height/2, s.Width/2
	}
	h *= s.Conversion
	w *= s.Conversion
	latDelta := deg(h / EarthRadius)
	lonDeltaTop := deg(w / EarthRadius / cos(rad(s.Lat+latDelta)))
	lonDeltaBottom := deg(w / EarthRadius / cos(rad(s.Lat-latDelta)))
	lonDelta := lonDeltaTop
	if s.Lat < 0 {
		lonDelta = lonDeltaBottom
	}
	return s.Lon - lonDelta, s.Lat - latDelta, s.Lon + lonDelta, s.Lat + latDelta
}

// steps is the cell size to search s with (Redis's
// geohashEstimateStepsByRadius): the most bits a coordinate for which a
// cell is still about twice the radius wide, fewer near the poles, where
// meridians converge, between 1 and StepMax.
func steps(radius, lat float64) uint8 {
	if radius == 0 {
		return StepMax
	}
	step := 1
	for radius < mercatorMax {
		radius *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), StepMax))
}

// Range is the scores [Min, Max) of one cell.
type Range struct{ Min, Max float64 }

// Ranges are the score ranges to look for s's points in, in the order
// Redis searches them: the cell of s's centre, then its neighbours north,
// south, east, west, north-east, north-west, south-east and south-west,
// at a step where a cell is about the size of s; one made smaller when a
// neighbour would not reach s's bounds, neighbours left out that s's
// bounds do not reach (at a step of 2 or more), and a neighbour the same
// as the one searched before it skipped (all of them near the poles or
// for a huge radius); the centre's cell is searched whatever.
func (s *Shape) Ranges(dst []Range) []Range {
	minLon, minLat, maxLon, maxLat := s.bounds()
	radius := s.Radius
	if s.Box {
		radius = math.Sqrt((s.Width/2)*(s.Width/2) + (s.Height/2)*(s.Height/2))
	}
	step := steps(radius*s.Conversion, s.Lat)
	cells := s.cells(step)
	if step > 1 {
		n, so := decode(lonSpan, latSpan, cells[1]), decode(lonSpan, latSpan, cells[2])
		e, w := decode(lonSpan, latSpan, cells[3]), decode(lonSpan, latSpan, cells[4])
		if n.lat.max < maxLat || so.lat.min > minLat || e.lon.max < maxLon || w.lon.min > minLon {
			step--
			cells = s.cells(step)
		}
	}
	if step >= 2 {
		a := decode(lonSpan, latSpan, cells[0])
		drop := func(is ...int) {
			for _, i := range is {
				cells[i] = Hash{}
			}
		}
		if a.lat.min < minLat {
			drop(2, 8, 7) // south, south-west, south-east
		}
		if a.lat.max > maxLat {
			drop(1, 5, 6) // north, north-east, north-west
		}
		if a.lon.min < minLon {
			drop(4, 8, 6) // west, south-west, north-west
		}
		if a.lon.max > maxLon {
			drop(3, 7, 5) // east, south-east, north-east
		}
	}
	last := -1
	for i, c := range cells {
		if c.zero() {
			continue
		}
		// Redis compares with the cell searched before only once that is
		// not the centre's (its index 0 doubles as "none yet").
		if last > 0 && c == cells[last] {
			continue
		}
		dst = append(dst, Range{Min: float64(c.align()), Max: float64(Hash{Bits: c.Bits + 1, Step: c.Step}.align())})
		last = i
	}
	return dst
}

// cells are the centre's cell at step and its eight neighbours, in
// Ranges' order.
func (s *Shape) cells(step uint8) [9]Hash {
	h, _ := encode(lonSpan, latSpan, s.Lon, s.Lat, step)
	return [9]Hash{h,
		h.neighbour(0, 1), h.neighbour(0, -1), h.neighbour(1, 0), h.neighbour(-1, 0),
		h.neighbour(1, 1), h.neighbour(-1, 1), h.neighbour(1, -1), h.neighbour(-1, -1)}
}
