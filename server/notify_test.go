package server

import (
	"strconv"
	"testing"
	"time"
)

// notifyCases are write commands of every class, each followed by the
// events it publishes.
var notifyCases = [][]string{
	{"SET", "a", "1"}, {"SET", "b", "2", "EX", "100"}, {"SET", "b", "3", "KEEPTTL"}, {"SET", "a", "x", "NX"},
	{"SETNX", "a", "1"}, {"SETNX", "n", "1"}, {"SETEX", "se", "10", "v"}, {"PSETEX", "pe", "10000", "v"},
	{"GETSET", "a", "2"}, {"MSET", "m1", "1", "m2", "2"}, {"MSETNX", "m3", "1", "m4", "2"},
	{"INCR", "i"}, {"DECR", "i"}, {"INCRBY", "i", "5"}, {"DECRBY", "i", "2"}, {"INCRBYFLOAT", "i", "1.5"},
	{"APPEND", "a", "x"}, {"SETRANGE", "a", "1", "yy"}, {"SETBIT", "bits", "7", "1"},
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
	{"MULTI"}, {"SET", "tx", "1"}, {"INCR", "tx"}, {"EXEC"},
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
					for p.sameRead(1, 30*time.Millisecond, "event of "+c[0]) != "" {
					}
				}
			})
		}
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
