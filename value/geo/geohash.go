package geo

// The coordinate limits Redis indexes (the Web Mercator square, EPSG:3857,
// as Redis's geo documentation states) and the precision of its scores:
// 26 bits a coordinate, interleaved into 52 (GEOADD's documentation).
const (
	LonMin = -180.0
	LonMax = 180.0
	LatMin = -85.05112878
	LatMax = 85.05112878
	// StepMax is the bits per coordinate of a stored score.
	StepMax = 26
)

// span is a range of one coordinate.
type span struct{ min, max float64 }

var (
	lonSpan = span{LonMin, LonMax}
	latSpan = span{LatMin, LatMax}
	// stdLatSpan is the latitude range of the standard geohash
	// (geohash.org), which GEOHASH answers in.
	stdLatSpan = span{-90, 90}
)

// Hash is a geohash cell: the interleaved bits of its two coordinates at
// step bits each, the longitude's in the odd positions and the latitude's
// in the even ones (the geohash bit order: the most significant bit is a
// longitude's). A zero Hash (bits and step 0) is no cell.
type Hash struct {
	Bits uint64
	Step uint8
}

func (h Hash) zero() bool { return h.Bits == 0 && h.Step == 0 }

// Valid reports whether lon, lat can be indexed (GEOADD's range check).
func Valid(lon, lat float64) bool {
	return lon >= LonMin && lon <= LonMax && lat >= LatMin && lat <= LatMax
}

// spread puts the 32 bits of v in the even positions of a 64-bit word.
func spread(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x | x<<4) & 0x0f0f0f0f0f0f0f0f
	x = (x | x<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	return x
}

// squeeze is spread's inverse: the even bits of x, packed.
func squeeze(x uint64) uint32 {
	x &= 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0f0f0f0f0f0f0f0f
	x = (x | x>>4) & 0x00ff00ff00ff00ff
	x = (x | x>>8) & 0x0000ffff0000ffff
	x = (x | x>>16) & 0x00000000ffffffff
	return uint32(x)
}

// encode is the cell of step bits a coordinate holding lon, lat over the
// given ranges; false outside them or outside the indexable limits. Each
// coordinate's offset in its range, scaled to 2^step, is truncated to an
// integer: at the range's top it is 2^step itself, one bit above the
// others, as Redis's encoder leaves it.
func encode(lons, lats span, lon, lat float64, step uint8) (Hash, bool) {
	if !Valid(lon, lat) || lat < lats.min || lat > lats.max || lon < lons.min || lon > lons.max {
		return Hash{}, false
	}
	latOff := (lat - lats.min) / (lats.max - lats.min)
	lonOff := (lon - lons.min) / (lons.max - lons.min)
	latOff *= float64(uint64(1) << step)
	lonOff *= float64(uint64(1) << step)
	return Hash{Bits: spread(uint32(latOff)) | spread(uint32(lonOff))<<1, Step: step}, true
}

// area is a cell's rectangle.
type area struct{ lon, lat span }

// decode is h's rectangle over the given ranges.
func decode(lons, lats span, h Hash) area {
	ilat := squeeze(h.Bits)
	ilon := squeeze(h.Bits >> 1)
	scale := float64(uint64(1) << h.Step)
	var a area
	a.lat.min = lats.min + (float64(ilat)*1.0/scale)*(lats.max-lats.min)
	a.lat.max = lats.min + (float64(ilat+1)*1.0/scale)*(lats.max-lats.min)
	a.lon.min = lons.min + (float64(ilon)*1.0/scale)*(lons.max-lons.min)
	a.lon.max = lons.min + (float64(ilon+1)*1.0/scale)*(lons.max-lons.min)
	return a
}

// center is a's middle, kept within the indexable limits.
func (a area) center() (lon, lat float64) {
	lon = min(max((a.lon.min+a.lon.max)/2, LonMin), LonMax)
	lat = min(max((a.lat.min+a.lat.max)/2, LatMin), LatMax)
	return lon, lat
}

// align is the 52-bit score of h's first point: its bits shifted to step
// StepMax.
func (h Hash) align() uint64 { return h.Bits << (52 - 2*uint(h.Step)) }

// Score is the score GEOADD stores for lon, lat: the cell of step StepMax
// holding it, as an integer; false outside the indexable limits.
func Score(lon, lat float64) (float64, bool) {
	h, ok := encode(lonSpan, latSpan, lon, lat, StepMax)
	return float64(h.align()), ok
}

// scoreBits is a score as C converts a double to uint64 on x86-64 (Redis
// casts a member's score so): below 2^63 a truncation to int64 (its
// two's complement for a negative score, 2^63 for one out of range), at
// or above it the truncation of score-2^63 with the top bit flipped. A
// geo score is a small integer and converts exactly; the rest is what
// Redis decodes a score that no GEOADD wrote as.
func scoreBits(score float64) uint64 {
	const two63 = 9223372036854775808.0
	trunc := func(f float64) uint64 {
		if f > -two63 && f < two63 {
			return uint64(int64(f))
		}
		return 1 << 63 // the x86-64 "integer indefinite" of cvttsd2si
	}
	if score >= two63 {
		return trunc(score-two63) ^ 1<<63
	}
	return trunc(score)
}

// Decode is the point a score stands for: the middle of its cell.
func Decode(score float64) (lon, lat float64) {
	return decode(lonSpan, latSpan, Hash{Bits: scoreBits(score), Step: StepMax}).center()
}

// geohashAlphabet is the standard geohash's base 32 (geohash.org).
const geohashAlphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// String is the 11-character standard geohash of a score's point, as
// GEOHASH answers: the point encoded again over latitudes -90..90, its 52
// bits as 10 characters, then '0' for the 3 bits a score lacks.
func String(score float64) string {
	lon, lat := Decode(score)
	h, _ := encode(lonSpan, stdLatSpan, lon, lat, StepMax)
	var b [11]byte
	for i := range 10 {
		b[i] = geohashAlphabet[(h.Bits>>(52-(i+1)*5))&0x1f]
	}
	b[10] = geohashAlphabet[0]
	return string(b[:])
}

// The neighbours of a cell: the cell step away along one coordinate,
// wrapping around at the edges, computed on the interleaved bits by
// filling the other coordinate's positions with ones (so a carry runs
// through them) before adding, the classic trick of the geohash-int
// library Redis's geohash.c is based on.

const (
	oddBits  = 0xaaaaaaaaaaaaaaaa // the longitude's positions
	evenBits = 0x5555555555555555 // the latitude's
)

// move is h moved by d (+1 or -1) along the coordinate of the positions
// in mine (oddBits: east-west, evenBits: north-south).
func (h Hash) move(d int, mine, other uint64) Hash {
	if d == 0 {
		return h
	}
	shift := 64 - 2*uint(h.Step)
	v, keep := h.Bits&mine, h.Bits&other
	fill := other >> shift
	if d > 0 {
		v += fill + 1
	} else {
		v = (v | fill) - (fill + 1)
	}
	v &= mine >> shift
	return Hash{Bits: v | keep, Step: h.Step}
}

// neighbour is h moved dx east (negative: west) and dy north.
func (h Hash) neighbour(dx, dy int) Hash {
	return h.move(dx, oddBits, evenBits).move(dy, evenBits, oddBits)
}
