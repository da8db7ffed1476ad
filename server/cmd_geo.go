package server

import (
	"strconv"

	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/value/geo"
	"github.com/tiercache/tiercache/value/zset"
)

// The geo commands (Redis 7.0's geo.c, as its documentation describes
// them). A geo set is a sorted set whose scores are the points' 52-bit
// geohashes (value/geo): GEOADD is a ZADD of those scores, and the sorted
// set commands see exactly what Redis's would (S66). The searches are
// geo_search.go's.

// cmdGeoAdd: GEOADD key [NX|XX] [CH] longitude latitude member... → as
// the ZADD of each point's score: the members added (with CH, added or
// changed). The options come first, in any order; coordinates outside
// the indexable limits are refused before anything is added.
func (c *conn) cmdGeoAdd(args [][]byte) {
	first := 2
	var nx, xx bool
options:
	for ; first < len(args); first++ {
		switch word(args[first]) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "CH":
		default:
			break options
		}
	}
	if (len(args)-first)%3 != 0 || nx && xx {
		c.w.Error(errSyntax)
		return
	}
	// The ZADD Redis's GEOADD turns itself into: ZADD key options score
	// member..., each score the point's as an integer.
	zargs := make([][]byte, 0, first+(len(args)-first)/3*2)
	zargs = append(zargs, nil)
	zargs = append(zargs, args[1:first]...)
	for i := first; i < len(args); i += 3 {
		lon, lat, ok := c.lonLatArgs(args[i], args[i+1])
		if !ok {
			return
		}
		score, _ := geo.Score(lon, lat)
		zargs = append(zargs, strconv.AppendUint(nil, uint64(score), 10), args[i+2])
	}
	c.zaddCmd(zargs, false)
}

// lonLatArgs parses a longitude and a latitude (as doubles) and checks
// that they can be indexed; false: the error reply is written.
func (c *conn) lonLatArgs(lonArg, latArg []byte) (lon, lat float64, ok bool) {
	lon, ok1 := resp.ParseDouble(lonArg)
	if !ok1 {
		c.w.Error(errNotFloat)
		return 0, 0, false
	}
	lat, ok2 := resp.ParseDouble(latArg)
	if !ok2 {
		c.w.Error(errNotFloat)
		return 0, 0, false
	}
	if !geo.Valid(lon, lat) {
		c.w.Error(errGeoPair(lon, lat))
		return 0, 0, false
	}
	return lon, lat, true
}

// cmdGeoPos: GEOPOS key member... → each member's longitude and
// latitude (its cell's middle), a nil array for one absent.
func (c *conn) cmdGeoPos(args [][]byte) {
	c.eachScore(args, func(s float64) { c.writeCoords(geo.Decode(s)) }, c.w.NullArray)
}

// writeCoords answers a point as its longitude and latitude, each printed
// as redis-server prints a long double for humans (addReplyHumanLongDouble:
// "%.17Lf" without trailing zeros; a bulk string in RESP2, a double in
// RESP3).
func (c *conn) writeCoords(lon, lat float64) {
	c.w.Array(2)
	for _, f := range [2]float64{lon, lat} {
		var buf [40]byte
		b := strconv.AppendFloat(buf[:0], f, 'f', 17, 64)
		for b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
		b = bytesTrimDot(b)
		if string(b) == "-0" {
			b = b[1:]
		}
		if c.w.Proto() >= 3 {
			c.w.Raw([]byte{','})
			c.w.Raw(b)
			c.w.Raw([]byte("\r\n"))
		} else {
			c.w.Bulk(b)
		}
	}
}

func bytesTrimDot(b []byte) []byte {
	if b[len(b)-1] == '.' {
		return b[:len(b)-1]
	}
	return b
}

// writeDistance answers a distance as Redis does (addReplyDoubleDistance):
// "%.4f", a bulk string in both protocols.
func (c *conn) writeDistance(d float64) {
	var buf [40]byte
	c.w.Bulk(strconv.AppendFloat(buf[:0], d, 'f', 4, 64))
}

// cmdGeoDist: GEODIST key member1 member2 [M|KM|FT|MI] → the distance
// between the two members in the unit (metres by default), nil when
// either is absent.
func (c *conn) cmdGeoDist(args [][]byte) {
	toMeter := 1.0
	switch {
	case len(args) == 5:
		u, ok := geo.Unit(string(args[4]))
		if !ok {
			c.w.Error(errGeoUnit)
			return
		}
		toMeter = u
	case len(args) > 5:
		c.w.Error(errSyntax)
		return
	}
	exists, ok := c.readLiveZSet(args[1], func(z *zset.Sorted) {
		s1, ok1 := z.Score(args[2])
		s2, ok2 := z.Score(args[3])
		if !ok1 || !ok2 {
			c.w.Null()
			return
		}
		lon1, lat1 := geo.Decode(s1)
		lon2, lat2 := geo.Decode(s2)
		c.writeDistance(geo.Distance(lon1, lat1, lon2, lat2) / toMeter)
	})
	if ok && !exists {
		c.w.Null()
	}
}

// cmdGeoHash: GEOHASH key member... → each member's 11-character standard
// geohash, nil for one absent.
func (c *conn) cmdGeoHash(args [][]byte) {
	c.eachScore(args, func(s float64) { c.w.BulkString(geo.String(s)) }, c.w.Null)
}
