package server

import (
	"strconv"
	"testing"
)

// notifyCases are write commands of every class, each followed by the
// events it publishes.
var notifyCases = [][]string{
	{"SET", "a", "1"}, {"SET", "b", "2", "EX", "100"}, {"SET", "b", "3", "KEEPTTL"}, {"SET", "a", "x", "NX"},
	{"SETNX", "a", "1"}, {"SETNX", "n", "1"}, {"SETEX", "se", "10", "v"}, {"PSETEX", "pe", "10000", "v"},
	{"GETSET", "a", "2"}, {"MSET", "m1", "1", "m2", "2"}, {"MSETNX", "m3", "1", "m4", "2"},
	{"INCR", "i"}, {"DECR", "i"}, {"INCRBY", "i", "5"}, {"DECRBY", "i", "2"}, {"INCRBYFLOAT", "i", "1.5"},
	{"APPEND", "a", "x"}, {"SETRANGE", "a", "1", "yy"}, {"SETBIT", "bits", "7", "1"}, {"SETBIT", "bits", "7", "1"},
	{"SETBIT", "bits", "6", "0"}, {"SETBIT", "bits", "20", "0"}, {"SETBIT", "bits0", "0", "0"},
	{"BITFIELD", "bf", "SET", "u8", "0", "5"}, {"BITFIELD", "bf", "SET", "u8", "0", "5"}, {"BITFIELD", "bf", "GET", "u8", "0"},
	{"BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"}, {"BITFIELD", "bf2", "OVERFLOW", "FAIL", "SET", "u8", "0", "300"},
	{"BITFIELD", "bf", "SET", "u8", "8", "0"}, {"BITFIELD", "bf", "SET", "u8", "8", "0"}, {"BITFIELD", "bf", "GET", "u65", "0"},
	{"BITOP", "OR", "bo", "bf", "bits"}, {"BITOP", "NOT", "bo", "bo"}, {"BITOP", "AND", "bo", "nokey"}, {"BITOP", "AND", "bo", "nokey"},
	{"BITOP", "NOT", "bo", "bf", "bits"}, {"LCS", "bf", "bits"},
	{"PFADD", "hl", "a", "b"}, {"PFADD", "hl", "a"}, {"PFADD", "hl"}, {"PFADD", "hl2"}, {"PFCOUNT", "hl"}, {"PFCOUNT", "hl", "hl2"},
	{"PFMERGE", "hl3", "hl", "hl2"}, {"PFMERGE", "hl3"}, {"PFADD", "bits", "x"}, {"PFMERGE", "hl3", "bits"},
	{"GETEX", "se", "PERSIST"}, {"GETEX", "se", "EX", "100"}, {"GETEX", "se"}, {"GETDEL", "se"},
	{"EXPIRE", "a", "100"}, {"PEXPIRE", "a", "100000"}, {"PERSIST", "a"}, {"EXPIRE", "a", "-1"},
	{"DEL", "m1", "nope", "m2", "m1"}, {"UNLINK", "m3"}, {"SET", "r", "v"}, {"RENAME", "r", "r2"},
	{"RENAMENX", "r2", "m4"}, {"COPY", "m4", "c2"},
	{"LPUSH", "l", "1", "2", "3"}, {"RPUSH", "l", "4"}, {"LPUSHX", "nol", "1"}, {"RPUSHX", "l", "5"},
	{"LSET", "l", "0", "x"}, {"LINSERT", "l", "BEFORE", "x", "y"}, {"LREM", "l", "1", "y"}, {"LTRIM", "l", "0", "2"},
	{"LPOP", "l"}, {"RPOP", "l"}, {"LMOVE", "l", "l2", "LEFT", "RIGHT"}, {"RPUSH", "s", "a", "b"},
	{"RPOPLPUSH", "s", "d"}, {"LMOVE", "s", "d", "RIGHT", "LEFT"}, {"LTRIM", "d", "5", "6"},
	{"HSET", "h", "f", "1", "g", "2"}, {"HSETNX", "h", "f", "3"}, {"HSETNX", "h", "k", "3"}, {"HMSET", "h", "z", "1"},
	{"HINCRBY", "h", "f", "2"}, {"HINCRBYFLOAT", "h", "f", "0.5"}, {"HDEL", "h", "f", "g"}, {"HDEL", "h", "k", "z"},
	{"EVAL", "redis.call('set', 'sc', '1'); redis.call('del', 'sc')", "0"},
	// sets
	{"SADD", "st", "a", "b", "c"}, {"SADD", "st", "a"}, {"SREM", "st", "zz"}, {"SREM", "st", "a"},
	{"SREM", "st", "b"}, {"SPOP", "st", "0"}, {"SPOP", "st"}, {"SPOP", "st"}, {"SADD", "st", "d"}, {"SPOP", "st", "5"}, {"SPOP", "st", "1"},
	{"SADD", "s1", "a", "b"}, {"SADD", "s2", "b", "c"}, {"SMOVE", "s1", "s2", "b"}, {"SMOVE", "s1", "s3", "a"},
	{"SMOVE", "s1", "s2", "zz"}, {"SADD", "s1", "x"}, {"SMOVE", "s2", "s2", "c"},
	{"SINTERSTORE", "sd", "s2", "s3"}, {"SUNIONSTORE", "sd", "s2", "s3"}, {"SDIFFSTORE", "sd", "s2", "s3"},
	{"SINTERSTORE", "sd", "s2", "nokey"}, {"SINTERSTORE", "sd", "s2", "nokey"}, {"SREM", "s2", "b", "c"},
	// sorted sets
	{"ZADD", "z", "1", "a", "2", "b", "3", "c"}, {"ZADD", "z", "1", "a"}, {"ZADD", "z", "XX", "CH", "5", "a"},
	{"ZADD", "z", "GT", "1", "a"}, {"ZADD", "z", "INCR", "2", "b"}, {"ZADD", "z", "NX", "INCR", "2", "b"},
	{"ZINCRBY", "z", "1", "c"}, {"ZADD", "z", "1", "incr"}, {"ZREM", "z", "incr", "zz"}, {"ZREM", "z", "zz"},
	{"ZADD", "z", "4", "d", "6", "e", "7", "f"}, {"ZREMRANGEBYSCORE", "z", "6", "6"}, {"ZREMRANGEBYSCORE", "z", "100", "200"},
	{"ZREMRANGEBYRANK", "z", "0", "0"}, {"ZREMRANGEBYLEX", "z", "[a", "[b"}, {"ZADD", "zl", "0", "a", "0", "b"},
	{"ZREMRANGEBYLEX", "zl", "-", "+"}, {"ZPOPMIN", "z"}, {"ZPOPMAX", "z", "2"}, {"ZPOPMIN", "z", "0"},
	{"ZADD", "z", "1", "x", "2", "y", "3", "w"}, {"ZADD", "z2", "5", "y", "9", "q"},
	{"ZUNIONSTORE", "zd", "2", "z", "z2"}, {"ZINTERSTORE", "zd", "2", "z", "z2"}, {"ZDIFFSTORE", "zd", "2", "z", "z2"},
	{"ZINTERSTORE", "zd", "2", "z", "nokey"}, {"ZINTERSTORE", "zd", "2", "z", "nokey"},
	{"ZRANGESTORE", "zr", "z", "0", "1"}, {"ZRANGESTORE", "zr", "z", "5", "9"}, {"ZRANGESTORE", "zr", "z", "5", "9"},
	{"BZPOPMIN", "nokey", "z", "1"}, {"BZPOPMAX", "z", "1"}, {"BZPOPMAX", "z", "1"}, {"ZPOPMAX", "z2", "5"},
	{"ZADD", "zm", "1", "a", "2", "b", "3", "c"}, {"ZMPOP", "2", "nokey", "zm", "MIN"}, {"ZMPOP", "1", "nokey", "MAX"},
	{"BZMPOP", "1", "1", "zm", "MAX", "COUNT", "1"}, {"BZMPOP", "1", "2", "nokey", "zm", "MIN", "COUNT", "5"},
	{"RPUSH", "bl", "1", "2"}, {"BLPOP", "bl", "1"}, {"BRPOP", "nokey", "bl", "1"},
	{"RPUSH", "lm", "1", "2", "3"}, {"LMPOP", "2", "nokey", "lm", "LEFT"}, {"LMPOP", "1", "nokey", "RIGHT"},
	{"LMPOP", "1", "lm", "RIGHT", "COUNT", "5"}, {"RPUSH", "lm", "a", "b"}, {"BLMPOP", "1", "2", "nokey", "lm", "LEFT", "COUNT", "1"},
	{"BLMPOP", "1", "1", "lm", "RIGHT", "COUNT", "3"}, {"LMPOP", "1", "lm", "LEFT"},
	// geo (S66): GEOADD is a ZADD; the searches' STORE "georadiusstore"
	// and "geosearchstore", or "del" for an empty result
	{"GEOADD", "geo", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"},
	{"GEOADD", "geo", "NX", "13.361389", "38.115556", "Palermo"}, {"GEOADD", "geo", "XX", "CH", "13", "38", "Palermo"},
	{"GEOADD", "geo", "200", "38", "bad"}, {"GEOSEARCH", "geo", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"},
	{"GEOSEARCHSTORE", "gd", "geo", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"},
	{"GEOSEARCHSTORE", "gd", "geo", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST"},
	{"GEORADIUS", "geo", "15", "37", "200", "km", "STORE", "gd2"}, {"GEORADIUS", "geo", "15", "37", "200", "km"},
	{"GEORADIUSBYMEMBER", "geo", "Palermo", "100", "km", "STOREDIST", "gd2"}, {"GEORADIUS", "geo", "0", "0", "1", "m", "STORE", "gd2"},
	{"GEOSEARCHSTORE", "gd", "nokey", "FROMMEMBER", "x", "BYBOX", "1", "1", "m"}, {"GEOSEARCHSTORE", "gd", "nokey", "FROMMEMBER", "x", "BYBOX", "1", "1", "m"},
	{"MULTI"}, {"SET", "tx", "1"}, {"INCR", "tx"}, {"EXEC"},
	// writes that change nothing send nothing; an LTRIM of a list sends
	// "ltrim" even when it keeps every element; RENAME and COPY ... REPLACE
	// onto an existing key make it anew ("new")
	{"SET", "nr", "1"}, {"SETRANGE", "nr", "0", ""}, {"SETRANGE", "nope", "0", ""}, {"GETEX", "nr", "PERSIST"},
	{"RENAME", "nr", "nr"}, {"RENAMENX", "nr", "nr"}, {"RPUSH", "lt", "a"}, {"LTRIM", "lt", "0", "-1"},
	{"LTRIM", "nope", "0", "-1"}, {"SET", "nr2", "x"}, {"RENAME", "nr", "nr2"}, {"SET", "cp", "y"},
	{"COPY", "nr2", "cp", "REPLACE"}, {"COPY", "nr2", "cp"},
}

// TestKeyspaceNotificationsMatchRedis (S33): with notify-keyspace-events
// KEA (and with KEA plus n, and with a few classes), every command's
// events reach a pattern subscriber as redis-server 7.0 publishes them, in
// its order, in RESP2 and RESP3.
func TestKeyspaceNotificationsMatchRedis(t *testing.T) {
	for _, flags := range []string{"KEA", "KEAn", "Kl$", "Egh"} {
		for _, proto := range []int{2, 3} {
			if proto == 3 && flags != "KEA" {
				continue // RESP3 changes only the framing, which KEA checks
			}
			t.Run(flags+"/RESP"+strconv.Itoa(proto), func(t *testing.T) {
				p := newPeers(t, 2, proto, nil)
				p.same(0, "CONFIG", "SET", "notify-keyspace-events", flags)
				p.same(0, "CONFIG", "GET", "notify-keyspace-events")
				p.same(1, "PSUBSCRIBE", "__key*__:*")
				for _, c := range notifyCases {
					p.same(0, c...)
					p.events(1, "event of "+c[0])
				}
			})
		}
	}
}

// TestBlockedPopEventsMatchRedis (S33): a blocked BLPOP, BLMOVE, BZPOPMIN,
// BZMPOP or BLMPOP served by another client's push publishes, after the push's
// events, its pop (the move's push first) and "del" when it emptied the
// key, as redis-server 7.0 does; also when the push ran in EXEC.
func TestBlockedPopEventsMatchRedis(t *testing.T) {
	p := newPeers(t, 3, 2, nil)
	p.same(0, "CONFIG", "SET", "notify-keyspace-events", "KEA")
	p.same(1, "PSUBSCRIBE", "__key*__:*")
	for _, tc := range []struct {
		block []string
		push  [][]string
	}{
		{[]string{"BLPOP", "bk", "5"}, [][]string{{"RPUSH", "bk", "a"}}},
		{[]string{"BRPOP", "bk", "5"}, [][]string{{"RPUSH", "bk", "a", "b"}}},
		{[]string{"BLMOVE", "bm", "bdst", "LEFT", "RIGHT", "5"}, [][]string{{"LPUSH", "bm", "x"}}},
		{[]string{"BZPOPMIN", "bz", "5"}, [][]string{{"ZADD", "bz", "1", "a", "2", "b"}}},
		{[]string{"BZPOPMAX", "bz2", "5"}, [][]string{{"ZADD", "bz2", "1", "a"}}},
		{[]string{"BZPOPMIN", "bz3", "5"}, [][]string{{"MULTI"}, {"ZADD", "bz3", "1", "a"}, {"SET", "other", "1"}, {"EXEC"}}},
		{[]string{"BZMPOP", "5", "2", "bz4", "bz5", "MAX", "COUNT", "2"}, [][]string{{"ZADD", "bz5", "1", "a", "2", "b", "3", "c"}}},
		{[]string{"BZMPOP", "5", "1", "bz6", "MIN", "COUNT", "9"}, [][]string{{"ZADD", "bz6", "1", "a", "2", "b"}}},
		{[]string{"BLMPOP", "5", "2", "bl4", "bl5", "RIGHT", "COUNT", "2"}, [][]string{{"RPUSH", "bl5", "a", "b", "c"}}},
		{[]string{"BLMPOP", "5", "1", "bl6", "LEFT", "COUNT", "9"}, [][]string{{"RPUSH", "bl6", "a", "b"}}},
		{[]string{"BLMPOP", "5", "1", "bl7", "LEFT"}, [][]string{{"MULTI"}, {"RPUSH", "bl7", "a"}, {"SET", "other", "1"}, {"EXEC"}}},
	} {
		p.blockThenPush(2, tc.block, tc.push...)
		p.events(1, "events of "+tc.block[0]+" served")
	}
}

// TestNotifyConfigRefusesBadClasses (S33): a letter that is no class is
// refused with Redis's text and changes nothing.
func TestNotifyConfigRefusesBadClasses(t *testing.T) {
	p := newPeers(t, 1, 2, nil)
	p.same(0, "CONFIG", "SET", "notify-keyspace-events", "KEx")
	p.same(0, "CONFIG", "SET", "notify-keyspace-events", "KEQ")
	p.same(0, "CONFIG", "GET", "notify-keyspace-events")
	p.same(0, "CONFIG", "SET", "notify-keyspace-events", "")
	p.same(0, "CONFIG", "GET", "notify-keyspace-events")
}
