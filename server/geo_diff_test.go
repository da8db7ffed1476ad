package server

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// geoCentres are where random points cluster, so that searches of every
// size find some: the equator and the antimeridian, the poles' limits,
// Palermo.
var geoCentres = [][2]float64{{13.36, 38.11}, {0, 0}, {179.9, 10}, {-179.95, -20}, {100, 84.9}, {-45, -84.5}, {-73.98, 40.75}}

// randGeoCommand is a random geo command on a few keys (a geo set, a
// second one, a sorted set of other scores, a string, an absent key):
// points clustered around geoCentres or anywhere, searches of every
// shape, unit and option, and bad arguments of every kind.
func randGeoCommand(r *rand.Rand) ([]string, diffKind) {
	keys := []string{"g", "g", "g", "h", "z", "s", "none"}
	key := func() string { return keys[r.IntN(len(keys))] }
	mem := func() string { return "m" + strconv.Itoa(r.IntN(60)) }
	// Points at every precision: many share a cell, and so a distance.
	num := func(f float64, prec int) string {
		return strconv.FormatFloat(f, 'f', prec+r.IntN(12-prec), 64)
	}
	point := func() (string, string) {
		if r.IntN(25) == 0 {
			return []string{"181", "-180", "180", "0", "x", "inf", "-180.0000001", "nan", "1e400"}[r.IntN(9)],
				[]string{"85.05112878", "-85.05112878", "85.05112879", "-90", "0", "y", "-inf"}[r.IntN(7)]
		}
		if r.IntN(4) == 0 {
			return num(r.Float64()*360-180, 3), num(r.Float64()*170.1022575-85.05112878, 3)
		}
		c := geoCentres[r.IntN(len(geoCentres))]
		spread := []float64{0.0001, 0.01, 1, 5}[r.IntN(4)]
		lon := min(max(c[0]+(r.Float64()*2-1)*spread, -180), 180)
		lat := min(max(c[1]+(r.Float64()*2-1)*spread, -85.05112878), 85.05112878)
		return num(lon, 2), num(lat, 2)
	}
	unit := func() string {
		if r.IntN(30) == 0 {
			return []string{"mm", "", "kilometers"}[r.IntN(3)]
		}
		return []string{"m", "km", "ft", "mi", "KM", "Mi"}[r.IntN(6)]
	}
	dist := func() string {
		if r.IntN(30) == 0 {
			return []string{"-1", "x", "0", "inf", "nan", "1e400", "-0"}[r.IntN(7)]
		}
		return num([]float64{5, 500, 50000, 800000, 6000000, 2e7}[r.IntN(6)]*r.Float64(), 0)
	}
	opts := func(store bool) []string {
		var out []string
		for range r.IntN(4) {
			switch r.IntN(12) {
			case 0, 1:
				out = append(out, []string{"ASC", "desc"}[r.IntN(2)])
			case 2, 3:
				out = append(out, "COUNT", []string{"1", "2", "3", "5", "100", "0", "-1", "x"}[r.IntN(8)])
				if r.IntN(3) == 0 {
					out = append(out, "ANY")
				}
			case 4:
				out = append(out, "ANY")
			case 5, 6, 7:
				if !store || r.IntN(8) == 0 {
					out = append(out, []string{"WITHDIST", "WITHHASH", "withcoord"}[r.IntN(3)])
				}
			case 8:
				if store {
					out = append(out, "STOREDIST")
				}
			case 9:
				out = append(out, []string{"BOGUS", "COUNT", "STORE", "FROMMEMBER"}[r.IntN(4)])
			}
		}
		return out
	}
	switch r.IntN(20) {
	case 0, 1, 2, 3, 4:
		cmd := []string{"GEOADD", key()}
		for _, o := range []string{"NX", "XX", "CH"} {
			if r.IntN(8) == 0 {
				cmd = append(cmd, o)
			}
		}
		if r.IntN(30) == 0 {
			cmd = append(cmd, []string{"GT", "INCR", "nx"}[r.IntN(3)])
		}
		for range 1 + r.IntN(4) {
			lon, lat := point()
			cmd = append(cmd, lon, lat, mem())
		}
		if r.IntN(30) == 0 {
			cmd = cmd[:len(cmd)-1]
		}
		return cmd, diffNear
	case 5:
		return []string{"GEOPOS", key(), mem(), mem(), mem()}, diffNear
	case 6:
		cmd := []string{"GEODIST", key(), mem(), mem()}
		if r.IntN(2) == 0 {
			cmd = append(cmd, unit())
		}
		if r.IntN(30) == 0 {
			cmd = append(cmd, "extra")
		}
		return cmd, diffNear
	case 7:
		return []string{"GEOHASH", key(), mem(), mem()}, diffNear
	case 8:
		return []string{"ZREM", key(), mem()}, diffNear
	case 9, 10, 11, 12:
		name := []string{"GEOSEARCH", "geosearch", "GEOSEARCHSTORE"}[r.IntN(3)]
		cmd := []string{name}
		store := name == "GEOSEARCHSTORE"
		if store {
			cmd = append(cmd, []string{"d", "g", "s"}[r.IntN(3)])
		}
		cmd = append(cmd, key())
		from := func() []string {
			if r.IntN(3) == 0 {
				return []string{"FROMMEMBER", mem()}
			}
			lon, lat := point()
			return []string{"FROMLONLAT", lon, lat}
		}
		by := func() []string {
			if r.IntN(2) == 0 {
				return []string{"BYRADIUS", dist(), unit()}
			}
			return []string{"BYBOX", dist(), dist(), unit()}
		}
		parts := [][]string{from(), by(), opts(store)}
		if r.IntN(20) == 0 {
			parts = append(parts, [][]string{from(), by()}[r.IntN(2)])
		}
		if r.IntN(20) == 0 {
			parts = parts[1:]
		}
		r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		for _, p := range parts {
			cmd = append(cmd, p...)
		}
		if store && storesDist(cmd) {
			cmd[1] = "d" // the one key compared without its scores
		}
		return cmd, diffNear
	case 13, 14, 15:
		name := []string{"GEORADIUS", "GEORADIUS_RO", "GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"}[r.IntN(4)]
		cmd := []string{name, key()}
		if name == "GEORADIUS" || name == "GEORADIUS_RO" {
			lon, lat := point()
			cmd = append(cmd, lon, lat)
		} else {
			cmd = append(cmd, mem())
		}
		cmd = append(cmd, dist(), unit())
		store := r.IntN(3) == 0
		cmd = append(cmd, opts(store)...)
		if store {
			cmd = append(cmd, []string{"STORE", "STOREDIST"}[r.IntN(2)], []string{"d", "g"}[r.IntN(2)])
			if storesDist(cmd) {
				cmd[len(cmd)-1] = "d"
			}
		}
		return cmd, diffNear
	case 16:
		return []string{"ZADD", "z", []string{"-5", "1e300", "9007199254740993", "4503599627370496", "1.5", "-inf", "inf"}[r.IntN(7)], mem()}, diffNear
	case 17:
		return []string{"ZRANGE", []string{"d", "g"}[r.IntN(2)], "0", "-1", "WITHSCORES"}, diffNear
	}
	return []string{"COMMAND", "GETKEYS", "GEORADIUS", "g", "0", "0", "1", "km", []string{"STORE", "STOREDIST", "x"}[r.IntN(3)], "d"}, diffNear
}

// storesDist reports whether a search stores distances: their last bits
// may differ from Redis's (nearReplies), so only "d" takes them.
func storesDist(cmd []string) bool {
	return slices.ContainsFunc(cmd, func(a string) bool { return strings.EqualFold(a, "STOREDIST") })
}

// TestGeoDifferential checks the geo commands reply as redis-server 7.0
// does (S66), in RESP2 and RESP3: random sequences of GEOADD, GEOPOS,
// GEODIST, GEOHASH and every search, with their errors, run on both,
// replies compared byte for byte (coordinates and distances as 7.0 prints
// them, searches in its order), and every key's sorted set (scores
// included) compared after each step.
func TestGeoDifferential(t *testing.T) {
	d := &typedDiff{t: t, gen: randGeoCommand, keys: []string{"g", "h", "z", "d", "s", "none"},
		state: func(k string) []string {
			if k == "d" { // STOREDIST's scores may differ in their last bits (nearReplies)
				return []string{"ZRANGE", k, "0", "-1"}
			}
			return []string{"ZRANGE", k, "0", "-1", "WITHSCORES"}
		},
		resync: func(*exactConn, *exactConn, string) {},
		setup:  [][]string{{"SET", "s", "string"}, {"ZADD", "z", "1", "a", "-3", "b", "1e20", "c"}}}
	d.run(8, 400)
}

// nearReplies reports whether two replies are the same but for numbers
// that differ in their last digit or bits: a distance printed "%.4f"
// 0.0001 apart, a stored distance's 17 digits a few parts in 10^15 apart
// (value/geo's caveat: glibc's sin, cos and asin, which redis-server
// uses, round a bit differently from Go's in rare cases). Bulk lengths
// follow their strings.
func nearReplies(want, have string) bool {
	if want == have {
		return true
	}
	w, h := strings.Split(want, "\r\n"), strings.Split(have, "\r\n")
	if len(w) != len(h) {
		return false
	}
	for i := range w {
		if w[i] == h[i] || strings.HasPrefix(w[i], "$") && strings.HasPrefix(h[i], "$") {
			continue
		}
		a, err1 := strconv.ParseFloat(strings.TrimPrefix(w[i], ","), 64)
		b, err2 := strconv.ParseFloat(strings.TrimPrefix(h[i], ","), 64)
		if err1 != nil || err2 != nil || math.Abs(a-b) > 1.00001e-4 && math.Abs(a-b) > 1e-14*math.Abs(a) {
			return false
		}
	}
	return true
}
