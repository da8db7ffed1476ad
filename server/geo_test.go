package server

import (
	"testing"
)

// geoCases are the geo commands' edge cases: arguments of every kind,
// types, absent keys and members, points at the indexable limits, STORE
// and its destination, MULTI, scripts, WATCH and key positions; each
// followed where it matters by a ZRANGE showing the stored sorted set.
var geoCases = [][]string{
	{"GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"},
	{"ZRANGE", "g", "0", "-1", "WITHSCORES"}, {"GEOADD", "g", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw"},
	{"ZRANGE", "g", "0", "-1", "WITHSCORES"}, {"GEOPOS", "g", "ne", "sw", "Palermo", "nope"}, {"GEOHASH", "g", "ne", "sw", "Palermo", "nope"},
	{"GEOADD", "g", "CH", "XX", "13.361389", "38.115556", "Palermo", "1", "1", "new"}, {"GEOADD", "g", "ch", "1", "1", "Palermo"},
	{"GEOADD", "g", "NX", "2", "2", "Palermo", "2", "2", "n2"}, {"ZRANGE", "g", "0", "-1", "WITHSCORES"},
	{"GEOADD", "g", "NX", "XX", "1", "1", "x"}, {"GEOADD", "g", "GT", "1", "1", "x"}, {"GEOADD", "g", "1", "1"}, {"GEOADD", "g", "1", "1", "x", "2"},
	{"GEOADD", "g", "1", "1", "ok", "181", "1", "bad"}, {"GEOADD", "g", "1", "-85.05112879", "bad"}, {"GEOADD", "g", "x", "1", "bad"},
	{"GEOADD", "g", "-inf", "1", "bad"}, {"GEOADD", "g", "nan", "1", "bad"}, {"GEOADD", "g", "NX", "CH", "CH"}, {"ZCARD", "g"},
	{"GEODIST", "g", "Palermo", "Catania"}, {"GEODIST", "g", "Palermo", "Catania", "KM"}, {"GEODIST", "g", "Palermo", "Catania", "mi"},
	{"GEODIST", "g", "Palermo", "Catania", "ft"}, {"GEODIST", "g", "Palermo", "Catania", "yd"}, {"GEODIST", "g", "Palermo", "nope", "km"},
	{"GEODIST", "nokey", "a", "b", "yd"}, {"GEODIST", "nokey", "a", "b"}, {"GEODIST", "g", "a", "b", "km", "x"}, {"GEODIST", "g", "ne", "sw"},
	{"GEOPOS", "nokey", "a", "b"}, {"GEOHASH", "nokey", "a"}, {"GEOPOS", "g"}, {"GEOHASH", "g"},
	// types: a string, a sorted set of scores no GEOADD writes
	{"SET", "s", "x"}, {"GEOADD", "s", "1", "1", "m"}, {"GEOADD", "s", "1", "100", "m"}, {"GEOPOS", "s", "m"}, {"GEODIST", "s", "a", "b", "yd"},
	{"GEOHASH", "s", "m"}, {"GEOSEARCH", "s", "FROMLONLAT", "1", "100", "BYRADIUS", "1", "km"}, {"GEORADIUSBYMEMBER", "s", "m", "x", "km"},
	{"GEOSEARCHSTORE", "d", "s", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"}, {"GEOSEARCHSTORE", "s", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km"},
	{"ZADD", "z", "-1", "neg", "1e300", "huge", "4503599627370496", "top", "1.5", "frac", "-inf", "ninf", "inf", "pinf"},
	{"GEOPOS", "z", "neg", "huge", "top", "frac", "ninf", "pinf"}, {"GEOHASH", "z", "neg", "huge", "top", "frac", "ninf", "pinf"},
	{"GEODIST", "z", "neg", "huge"}, {"GEOSEARCH", "z", "FROMMEMBER", "frac", "BYRADIUS", "100", "km", "WITHHASH"},
	// searches
	{"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC", "WITHCOORD", "WITHDIST", "WITHHASH"},
	{"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "DESC"}, {"GEOSEARCH", "g", "FROMMEMBER", "Palermo", "BYBOX", "400", "400", "km", "COUNT", "1"},
	{"GEOSEARCH", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "0", "m", "WITHDIST"}, {"GEOSEARCH", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "inf", "km", "ASC"},
	{"GEOSEARCH", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "20000", "km", "COUNT", "2", "ANY"}, {"GEOSEARCH", "g", "FROMMEMBER", "ne", "BYBOX", "100", "100", "km"},
	{"GEOSEARCH", "g", "FROMMEMBER", "sw", "BYRADIUS", "1", "m", "WITHCOORD"},
	{"GEOSEARCH", "g", "BYRADIUS", "1", "km", "FROMLONLAT", "15", "37", "withdist", "count", "5", "desc"},
	{"GEOSEARCH", "g", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"}, {"GEOSEARCH", "nokey", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"},
	{"GEOSEARCH", "nokey", "FROMLONLAT", "1", "100", "BYRADIUS", "1", "km"}, {"GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "x", "km"},
	{"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "-1", "km"}, {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "yd"},
	{"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1", "-1", "km"}, {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "x", "1", "km"},
	{"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1", "x", "km"}, {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1", "1", "yd"},
	{"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT", "0"}, {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT", "-3"},
	{"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT", "x"}, {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "ANY"},
	{"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT"}, {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STORE", "d"},
	{"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STOREDIST"}, {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"},
	{"GEOSEARCH", "g", "FROMMEMBER", "Palermo", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km"}, {"geosearch", "g", "WITHDIST", "BYRADIUS", "1", "km", "ASC"},
	{"GeoSearch", "g", "FROMLONLAT", "15", "37", "WITHDIST", "ASC", "DESC"}, {"GEOSEARCH", "g", "FROMLONLAT", "15", "37"}, {"GEOSEARCH", "g"},
	{"GEOSEARCH", "g", "FROMMEMBER", "Palermo", "FROMMEMBER", "Catania", "BYRADIUS", "1", "m", "BYRADIUS", "2", "m", "WITHDIST"},
	// the deprecated searches
	{"GEORADIUS", "g", "15", "37", "200", "km", "WITHDIST", "WITHCOORD", "ASC"}, {"GEORADIUS_RO", "g", "15", "37", "200", "km", "COUNT", "1", "WITHHASH"},
	{"GEORADIUSBYMEMBER", "g", "Palermo", "200", "km", "WITHDIST"}, {"GEORADIUSBYMEMBER_RO", "g", "Palermo", "200", "km", "DESC"},
	{"GEORADIUS", "g", "200", "37", "200", "km"}, {"GEORADIUS", "nokey", "200", "37", "200", "km"}, {"GEORADIUS", "nokey", "15", "37", "x", "km"},
	{"GEORADIUSBYMEMBER", "nokey", "m", "x", "yd"}, {"GEORADIUSBYMEMBER", "nokey", "m", "1", "km", "BOGUS"}, {"GEORADIUSBYMEMBER", "g", "nope", "x", "km"},
	{"GEORADIUS", "g", "15", "37", "200", "km", "STORE", "d"}, {"ZRANGE", "d", "0", "-1", "WITHSCORES"},
	{"GEORADIUS", "g", "15", "37", "200", "km", "STOREDIST", "d"}, {"ZRANGE", "d", "0", "-1", "WITHSCORES"},
	{"GEORADIUS", "g", "15", "37", "200", "km", "STORE", "d", "STOREDIST", "d2"}, {"EXISTS", "d2"}, {"ZRANGE", "d2", "0", "-1", "WITHSCORES"},
	{"GEORADIUS", "g", "15", "37", "200", "km", "STORE", "d", "WITHDIST"}, {"GEORADIUS_RO", "g", "15", "37", "200", "km", "STORE", "d"},
	{"GEORADIUSBYMEMBER_RO", "g", "Palermo", "200", "km", "STOREDIST", "d"}, {"GEORADIUS", "g", "15", "37", "200", "km", "FROMMEMBER", "x"},
	{"GEORADIUS", "g", "0", "0", "1", "m", "STORE", "d"}, {"EXISTS", "d"}, {"GEORADIUSBYMEMBER", "nokey", "x", "1", "m", "STORE", "d2"}, {"EXISTS", "d2"},
	{"GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST", "COUNT", "1"}, {"ZRANGE", "d", "0", "-1", "WITHSCORES"},
	{"GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "WITHHASH"}, {"GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STORE", "x"},
	{"GEOSEARCHSTORE", "d", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km"}, {"EXISTS", "d"}, {"GEOSEARCHSTORE", "g2", "g", "FROMMEMBER", "ne", "BYRADIUS", "1", "km"},
	{"GEOSEARCHSTORE", "g", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"}, {"ZRANGE", "g", "0", "-1", "WITHSCORES"},
	{"GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"},
	// MULTI, scripts, WATCH, key positions
	{"MULTI"}, {"GEOADD", "t", "1", "1", "a"}, {"GEOPOS", "t", "a"}, {"GEOSEARCHSTORE", "t2", "t", "FROMMEMBER", "a", "BYRADIUS", "1", "km"},
	{"GEORADIUS", "t", "1", "1", "1", "km", "STORE", "t3"}, {"GEOSEARCH", "t", "FROMLONLAT", "1", "100", "BYRADIUS", "1", "km"}, {"EXEC"},
	{"MULTI"}, {"GEOADD", "t", "1", "1"}, {"EXEC"},
	{"WATCH", "g"}, {"GEOSEARCH", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "g"}, {"GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "d"}, {"GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "g"}, {"GEORADIUS", "g", "15", "37", "200", "km"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "g"}, {"GEOADD", "g", "13.361389", "38.115556", "Palermo"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "g"}, {"GEOADD", "g", "1", "2", "w"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"EVAL", "return redis.call('geoadd', KEYS[1], 1, 2, 'a')", "1", "e"}, {"EVAL", "return redis.call('geopos', KEYS[1], 'a')", "1", "e"},
	{"EVAL", "return redis.call('geodist', KEYS[1], 'a', 'a')", "1", "e"}, {"EVAL", "return redis.call('geosearch', KEYS[1], 'FROMMEMBER', 'a', 'BYRADIUS', 1, 'km', 'WITHCOORD')", "1", "e"},
	{"EVAL_RO", "return redis.pcall('geoadd', KEYS[1], 1, 2, 'b')", "1", "e"}, {"EVAL_RO", "return redis.pcall('georadius', KEYS[1], 1, 2, 1, 'km')", "1", "e"},
	{"EVAL_RO", "return redis.call('georadius_ro', KEYS[1], 1, 2, 1, 'km')", "1", "e"},
	{"COMMAND", "GETKEYS", "geoadd", "k", "1", "2", "m"}, {"COMMAND", "GETKEYS", "geosearchstore", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "km"},
	{"COMMAND", "GETKEYS", "georadius", "k", "0", "0", "1", "km", "STORE", "d", "STOREDIST", "e"},
	{"COMMAND", "GETKEYS", "georadius", "k", "0", "0", "1", "km", "storedist", "d", "store", "e"},
	{"COMMAND", "GETKEYS", "georadius", "k", "0", "0", "1", "store", "d", "store"}, {"COMMAND", "GETKEYS", "georadius", "k", "0", "0", "1", "km", "store"},
	{"COMMAND", "GETKEYS", "georadiusbymember", "k", "m", "store", "km", "store", "d"}, {"COMMAND", "GETKEYS", "georadius_ro", "k", "0", "0", "1", "km"},
	{"COMMAND", "GETKEYS", "geosearch", "k", "FROMMEMBER", "m", "BYRADIUS", "1", "km"}, {"COMMAND", "GETKEYS", "geodist", "k", "a", "b"},
}

// TestGeoMatchesRedis (S66): the geo commands answer geoCases as
// redis-server 7.0 does, byte for byte in RESP2 and RESP3, and leave the
// same sorted sets.
func TestGeoMatchesRedis(t *testing.T) { casesMatchRedis(t, geoCases) }

// TestGeoTrackingMatchesRedis (S66): a tracking client's searches
// remember their key and a GEOADD or a STORE onto it invalidates it, as
// in redis-server 7.0: GEORADIUS, a write command, remembers nothing, and
// a STORE invalidates its destination only.
func TestGeoTrackingMatchesRedis(t *testing.T) {
	trackingMatchesRedis(t, []trackingStep{
		{1, []string{"GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"}},
		{0, []string{"GEOSEARCH", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km"}},
		{1, []string{"GEOADD", "g", "NX", "13.361389", "38.115556", "Palermo"}}, {1, []string{"GEOADD", "g", "1", "1", "x"}},
		{0, []string{"GEOPOS", "g", "x"}}, {1, []string{"GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "x", "BYRADIUS", "1", "km"}},
		{1, []string{"GEOADD", "g", "2", "2", "y"}}, {0, []string{"GEODIST", "g", "x", "y"}}, {0, []string{"ZRANGE", "d", "0", "-1"}},
		{1, []string{"GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "x", "BYRADIUS", "1", "km"}},
		{0, []string{"GEORADIUS", "g", "1", "1", "1", "km"}}, {1, []string{"GEOADD", "g", "3", "3", "z"}},
		{0, []string{"GEORADIUS_RO", "g", "1", "1", "1", "km"}}, {0, []string{"GEOHASH", "d", "x"}},
		{1, []string{"GEORADIUS", "g", "1", "1", "1", "km", "STORE", "d"}}, {1, []string{"GEOADD", "g", "4", "4", "w"}},
		{0, []string{"GEOADD", "g", "5", "5", "own"}}, {0, []string{"GEOPOS", "g", "own"}},
		{1, []string{"EVAL", "return redis.call('geoadd', KEYS[1], 6, 6, 'v')", "1", "g"}},
	})
}

// TestGeoTenants (S66): the keys GEOADD and the STOREs make are their
// tenant's, as any write's.
func TestGeoTenants(t *testing.T) {
	_, path := startServerWith(t, newRagTenantCache(t), nil)
	r := dialRaw(t, path)
	r.expect([]step{
		{[]string{"GEOADD", "rag:g", "1", "1", "a", "1.001", "1", "b"}, ":2"},
		{[]string{"GEOSEARCHSTORE", "rag:d", "rag:g", "FROMMEMBER", "a", "BYRADIUS", "1", "km"}, ":2"},
		{[]string{"GEOADD", "other", "1", "1", "c"}, ":1"},
	})
	ragHoldsTwo(t, r, "rag:g and rag:d")
}

// TestGeoThroughRemote (S66, tier T39): what GEOADD and the STOREs write
// on one sidecar reaches another through the shared remote tier.
func TestGeoThroughRemote(t *testing.T) {
	a, b := remoteSidecarPair(t, "geo:")
	await := func(c *rawPeer, want string, cmd ...string) { t.Helper(); awaitReply(t, c, want, cmd...) }
	if r := b.do("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"); r != ":2\r\n" {
		t.Fatalf("GEOADD: %q", r)
	}
	await(a, "$11\r\n166274.1516\r\n", "GEODIST", "g", "Palermo", "Catania")
	a.do("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "100", "km", "STOREDIST")
	await(b, "*2\r\n$7\r\nCatania\r\n$18\r\n56.441257870158204\r\n", "ZRANGE", "d", "0", "-1", "WITHSCORES")
	b.do("GEORADIUS", "g", "0", "0", "1", "km", "STORE", "d")
	await(a, ":0\r\n", "EXISTS", "d")
}
