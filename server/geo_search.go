package server

import (
	"cmp"
	"slices"

	"github.com/tiercache/tiercache/value/geo"
	"github.com/tiercache/tiercache/value/zset"
)

// The geo searches: GEOSEARCH, GEOSEARCHSTORE and the deprecated
// GEORADIUS, GEORADIUSBYMEMBER and their _RO forms, as Redis 7.0's
// georadiusGeneric: the points of the cells value/geo's Shape.Ranges
// names, in that order and each cell's in score order, kept when within
// the shape; sorted by distance (stably) with ASC or DESC, or with COUNT
// and not ANY; ANY stops at COUNT points.

// geoPoint is a point found.
type geoPoint struct {
	member   []byte
	score    float64
	lon, lat float64
	dist     float64 // metres from the centre
}

// geoSearchCmd runs a search of kind; name is the command as the client
// spelled it (GEOSEARCH's errors repeat it). A command that may store
// reads its source whole, as ZRANGESTORE does; the others read it in
// place.
func (c *conn) geoSearchCmd(args [][]byte, name []byte, kind geoKind) {
	c.noop = true // a search changes nothing; a store changes its destination only (storeResult)
	src := args[1]
	if kind == geoSearchStore {
		src = args[2]
	}
	if kind == geoRadius || kind == geoRadiusMember || kind == geoSearchStore {
		defer c.typed.release()
		z := &c.typed.zset
		exists, ok := c.readZSet(src, z, false)
		if !ok {
			return
		}
		if exists {
			c.geoRun(args, name, kind, z)
		} else {
			c.geoRun(args, name, kind, nil)
		}
		return
	}
	exists, ok := c.readLiveZSet(src, func(z *zset.Sorted) { c.geoRun(args, name, kind, z) })
	if ok && !exists {
		c.geoRun(args, name, kind, nil)
	}
}

// geoRun parses and answers a search on z (nil: the key is absent).
func (c *conn) geoRun(args [][]byte, name []byte, kind geoKind, z zset.Reader) {
	q, ok := c.geoArgs(args, name, kind, z)
	if !ok {
		return
	}
	if z == nil {
		if q.store != nil {
			c.storeGeo(q, nil)
		} else {
			c.w.Array(0)
		}
		return
	}
	if q.count != 0 && q.sort == geoUnsorted && !q.any {
		q.sort = geoAsc // the nearest COUNT points
	}
	limit := 0
	if q.any {
		limit = int(q.count)
	}
	pts := geoFind(z, &q.shape, limit)
	if q.sort != geoUnsorted {
		byDist := func(a, b geoPoint) int { return cmp.Compare(a.dist, b.dist) }
		if q.sort == geoDesc {
			byDist = func(a, b geoPoint) int { return cmp.Compare(b.dist, a.dist) }
		}
		// Redis sorts all the points with glibc's qsort, a stable merge
		// sort, or only the first COUNT with its pqsort, which is not
		// (geo.PartialSort): equal distances come in the order of each.
		if q.count > 0 && int64(len(pts)) > q.count {
			geo.PartialSort(pts, byDist, 0, int(q.count)-1)
		} else {
			slices.SortStableFunc(pts, byDist)
		}
	}
	if q.count > 0 && int64(len(pts)) > q.count {
		pts = pts[:q.count]
	}
	if q.store != nil {
		c.storeGeo(q, pts)
		return
	}
	c.writeGeoPoints(q, pts)
}

// geoFind is the points of z within s, in Redis's order, stopping at
// limit points (0: no limit).
func geoFind(z zset.Reader, s *geo.Shape, limit int) []geoPoint {
	var pts []geoPoint
	var rs [9]geo.Range
	for _, r := range s.Ranges(rs[:0]) {
		if limit > 0 && len(pts) >= limit {
			break
		}
		lo, hi := zset.ScoreSpan(z, zset.ScoreRange{Min: r.Min, Max: r.Max, MaxEx: true})
		for i := lo; i < hi; i++ {
			e := z.At(i)
			if lon, lat, d, ok := s.Within(e.Score); ok {
				pts = append(pts, geoPoint{member: e.Member, score: e.Score, lon: lon, lat: lat, dist: d})
			}
			if limit > 0 && len(pts) >= limit {
				break
			}
		}
	}
	return pts
}

// writeGeoPoints answers the points: members, or with options an array
// each of the member, its distance in the unit, its score as an integer
// and its coordinates, in that order.
func (c *conn) writeGeoPoints(q geoQuery, pts []geoPoint) {
	opts := boolInt(q.withDist) + boolInt(q.withHash) + boolInt(q.withCoord)
	c.w.Array(len(pts))
	for _, p := range pts {
		if opts > 0 {
			c.w.Array(opts + 1)
		}
		c.w.Bulk(p.member)
		if q.withDist {
			c.writeDistance(p.dist / q.shape.Conversion)
		}
		if q.withHash {
			c.w.Int(int64(p.score))
		}
		if q.withCoord {
			c.writeCoords(p.lon, p.lat)
		}
	}
}

// storeGeo stores the points in q.store as a sorted set, their scores
// their own or, with STOREDIST, their distances in the unit; none
// deletes it. It answers how many.
func (c *conn) storeGeo(q geoQuery, pts []geoPoint) {
	out := &c.typed.out
	out.Reset()
	entries := out.All()[:0]
	for _, p := range pts {
		score := p.score
		if q.storeDist {
			score = p.dist / q.shape.Conversion
		}
		entries = append(entries, zset.Entry{Member: p.member, Score: score})
	}
	slices.SortFunc(entries, zset.Compare)
	*out = *zset.FromSorted(entries)
	c.storeResult(q.store, out, kindZSet)
}
