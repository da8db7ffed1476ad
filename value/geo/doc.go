// Package geo is the arithmetic of Redis's geo commands on the sorted
// sets that hold them: a point's score, the point a score stands for, its
// standard geohash, the distance between two points and the score ranges
// a search looks in. It follows Redis's documentation of GEOADD (a
// point's score is its 52-bit geohash: 26 bits of longitude and 26 of
// latitude over -180..180 and -85.05112878..85.05112878, interleaved,
// longitude first), of GEODIST (the haversine distance on a sphere of
// radius 6372797.560856 m) and of GEOSEARCH (the cell of the centre and
// its eight neighbours searched at a cell size chosen from the radius,
// each point then checked by its exact distance), with the geohash
// algorithm of G. Niemeyer (geohash.org) for the bits.
//
// # Invariants
//
//   - VG1: Score is the score redis-server 7.0 stores for a GEOADD of the
//     same point, bit for bit, and none outside the indexable limits
//     (TestScoreKnownPoints; the server's TestGeoDifferential compares
//     random points with a redis-server).
//   - VG2: Decode of a point's Score is the middle of its cell: within
//     half a cell (180/2^26 degrees of longitude, 170.1/2^26 of latitude)
//     of the point, and Score of it gives the same score (TestRoundTrip).
//   - VG3: String is the standard geohash of the decoded point: its 10
//     first characters are the point's geohash over latitudes -90..90
//     computed bit by bit, then '0' (TestStringIsStandardGeohash).
//   - VG4: a cell's neighbour is the cell next to it: moving east then
//     west (north then south) is the cell again, and the neighbour's
//     rectangle touches the cell's (TestNeighbours).
//   - VG5: Ranges covers a shape: every point of random scores that Within
//     accepts has its score in one of the ranges (TestRangesCoverShape).
//   - VG6: Distance is the haversine distance: symmetric, 0 from a point to
//     itself, and a degree of latitude is EarthRadius*pi/180 metres
//     (TestDistance).
//   - VG7: sin, cos and asin round to the nearest double, as glibc's,
//     which Redis's distances use, all but always do
//     (TestTrigRoundsCorrectly).
//   - VG8: PartialSort puts at lo..hi the elements a full sort puts there,
//     in order (TestPartialSort), leaving equal ones in the order Redis's
//     pqsort leaves them (the server's TestGeoDifferential, COUNT with
//     members at the same place).
//
// # Caveats
//
//   - Distance rounds sin, cos and asin correctly (VG7); glibc's, which
//     redis-server uses, are wrong in the last bit about once in 700
//     calls, so a distance may differ from Redis's in its last bits: a
//     stored distance (STOREDIST) in its 16th or 17th digit, a printed one
//     ("%.4f") in its 4th decimal once in many thousands, and a point
//     within a bit of a search's edge may be kept by one and not the
//     other.
package geo
