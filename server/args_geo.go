package server

import (
	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/value/geo"
	"github.com/tiercache/tiercache/value/zset"
)

// The geo searches' argument grammar, as redis-server 7.0 reads it
// (geo.c georadiusGeneric): the centre and shape first for GEORADIUS and
// GEORADIUSBYMEMBER, then options in any order, a later one of a kind
// replacing an earlier one.

// geoKind is which search command runs.
type geoKind uint8

const (
	geoRadius         geoKind = iota // GEORADIUS key lon lat radius unit
	geoRadiusRO                      // GEORADIUS_RO: no STORE
	geoRadiusMember                  // GEORADIUSBYMEMBER key member radius unit
	geoRadiusMemberRO                // GEORADIUSBYMEMBER_RO
	geoSearch                        // GEOSEARCH key FROM... BY...
	geoSearchStore                   // GEOSEARCHSTORE dst key FROM... BY...
)

func (k geoKind) byMember() bool { return k == geoRadiusMember || k == geoRadiusMemberRO }
func (k geoKind) search() bool   { return k == geoSearch || k == geoSearchStore }
func (k geoKind) noStore() bool  { return k == geoRadiusRO || k == geoRadiusMemberRO }

// geoSort is a search's order.
type geoSort uint8

const (
	geoUnsorted geoSort = iota
	geoAsc
	geoDesc
)

// geoQuery is a parsed search.
type geoQuery struct {
	shape                         geo.Shape
	withDist, withHash, withCoord bool
	sort                          geoSort
	any                           bool
	count                         int64 // 0: no limit
	store                         []byte
	storeDist                     bool
}

// geoArgs parses a search of kind on z (nil: the key is absent, when the
// centre member is not looked up and GEORADIUSBYMEMBER's radius is not
// read, as Redis); name is the command as spelled, for its errors.
// false: the error reply is written.
func (c *conn) geoArgs(args [][]byte, name []byte, kind geoKind, z zset.Reader) (q geoQuery, ok bool) {
	base := 2
	switch {
	case kind == geoRadius || kind == geoRadiusRO:
		base = 6
		if q.shape.Lon, q.shape.Lat, ok = c.lonLatArgs(args[2], args[3]); !ok {
			return q, false
		}
		if !c.radiusArgs(&q.shape, args[4], args[5]) {
			return q, false
		}
	case kind.byMember():
		base = 5
		if z != nil {
			if !c.memberCentre(&q.shape, z, args[2]) || !c.radiusArgs(&q.shape, args[3], args[4]) {
				return q, false
			}
		}
	case kind == geoSearchStore:
		base = 3
		q.store = args[1]
	}
	var fromMember, fromLonLat, byRadius, byBox bool
	opts := args[base:]
	for i := 0; i < len(opts); i++ {
		more := len(opts) - 1 - i // the arguments after this one
		w := word(opts[i])
		if f := q.flag(w); f != nil {
			*f = true
			continue
		}
		switch {
		case w == "ASC" || w == "DESC":
			q.sort = geoDesc
			if w == "ASC" {
				q.sort = geoAsc
			}
		case w == "COUNT" && more >= 1:
			n, ok := parseInt(opts[i+1])
			if !ok {
				c.w.Error(errNotInt)
				return q, false
			}
			if n <= 0 {
				c.w.Error(errGeoCount)
				return q, false
			}
			q.count = n
			i++
		case (w == "STORE" || w == "STOREDIST") && more >= 1 && !kind.noStore() && !kind.search():
			q.store, q.storeDist = opts[i+1], w == "STOREDIST"
			i++
		case w == "STOREDIST" && kind == geoSearchStore:
			q.storeDist = true
		case w == "FROMMEMBER" && more >= 1 && kind.search() && !fromLonLat:
			if z != nil && !c.memberCentre(&q.shape, z, opts[i+1]) {
				return q, false
			}
			fromMember = true
			i++
		case w == "FROMLONLAT" && more >= 2 && kind.search() && !fromMember:
			if q.shape.Lon, q.shape.Lat, ok = c.lonLatArgs(opts[i+1], opts[i+2]); !ok {
				return q, false
			}
			fromLonLat = true
			i += 2
		case w == "BYRADIUS" && more >= 2 && kind.search() && !byBox:
			if !c.radiusArgs(&q.shape, opts[i+1], opts[i+2]) {
				return q, false
			}
			byRadius = true
			i += 2
		case w == "BYBOX" && more >= 3 && kind.search() && !byRadius:
			if !c.boxArgs(&q.shape, opts[i+1], opts[i+2], opts[i+3]) {
				return q, false
			}
			byBox = true
			i += 3
		default:
			c.w.Error(errSyntax)
			return q, false
		}
	}
	switch {
	case q.store != nil && (q.withDist || q.withHash || q.withCoord):
		what := geoStoreRadius
		if kind == geoSearchStore {
			what = geoStoreSearch
		}
		c.w.Error(errGeoStoreWith(what))
	case kind.search() && !fromMember && !fromLonLat:
		c.w.Error(errGeoFrom(name))
	case kind.search() && !byRadius && !byBox:
		c.w.Error(errGeoBy(name))
	case q.any && q.count == 0:
		c.w.Error(errGeoAnyNeedsCount)
	default:
		return q, true
	}
	return q, false
}

// flag is the option a word without an argument sets, nil for another.
func (q *geoQuery) flag(w string) *bool {
	switch w {
	case "WITHDIST":
		return &q.withDist
	case "WITHHASH":
		return &q.withHash
	case "WITHCOORD":
		return &q.withCoord
	case "ANY":
		return &q.any
	}
	return nil
}

// memberCentre centres s on member's point; false (answered) when z has
// no such member.
func (c *conn) memberCentre(s *geo.Shape, z zset.Reader, member []byte) bool {
	score, ok := z.Score(member)
	if !ok {
		c.w.Error(errGeoMember)
		return false
	}
	s.Lon, s.Lat = geo.Decode(score)
	return true
}

// radiusArgs makes s a circle of radius in unit.
func (c *conn) radiusArgs(s *geo.Shape, radius, unit []byte) bool {
	r, ok := resp.ParseDouble(radius)
	switch {
	case !ok:
		c.w.Error(errGeoRadiusNotNum)
	case r < 0:
		c.w.Error(errGeoRadiusNegative)
	default:
		conv, ok := geo.Unit(string(unit))
		if !ok {
			c.w.Error(errGeoUnit)
			return false
		}
		s.Box, s.Radius, s.Conversion = false, r, conv
		return true
	}
	return false
}

// boxArgs makes s a box of width by height in unit.
func (c *conn) boxArgs(s *geo.Shape, width, height, unit []byte) bool {
	w, ok := resp.ParseDouble(width)
	if !ok {
		c.w.Error(errGeoWidthNotNum)
		return false
	}
	h, ok := resp.ParseDouble(height)
	if !ok {
		c.w.Error(errGeoHeightNotNum)
		return false
	}
	if w < 0 || h < 0 {
		c.w.Error(errGeoBoxNegative)
		return false
	}
	conv, ok := geo.Unit(string(unit))
	if !ok {
		c.w.Error(errGeoUnit)
		return false
	}
	s.Box, s.Width, s.Height, s.Conversion = true, w, h, conv
	return true
}
