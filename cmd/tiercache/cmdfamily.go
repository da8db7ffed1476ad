package main

// commandFamilies groups the commands by what they do, for the per-family
// latency histogram (tiercache_command_family_duration_seconds, C17) and
// the dashboard's p50/p99 panels. Every command of server's table is in
// exactly one family (TestEveryCommandHasAFamily); one the table gains and
// this list lacks is timed as "other" until it is added here.
var commandFamilies = map[string][]string{
	"string_read": {"get", "mget", "strlen", "getrange", "substr", "getbit", "bitcount", "bitpos",
		"bitfield_ro", "lcs", "pfcount"},
	"string_write": {"set", "setex", "psetex", "setnx", "mset", "msetnx", "getset", "getdel", "getex",
		"incr", "decr", "incrby", "decrby", "incrbyfloat", "append", "setrange", "setbit", "bitfield", "bitop",
		"pfadd", "pfmerge"},
	"hash": {"hset", "hmset", "hsetnx", "hget", "hmget", "hgetall", "hdel", "hexists", "hlen", "hkeys",
		"hvals", "hstrlen", "hincrby", "hincrbyfloat", "hrandfield", "hscan",
		"hexpire", "hpexpire", "hexpireat", "hpexpireat", "httl", "hpttl", "hexpiretime", "hpexpiretime",
		"hpersist", "hgetdel", "hgetex", "hsetex"},
	"list": {"lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop", "lrange", "llen", "lindex", "lset",
		"linsert", "lrem", "ltrim", "lpos", "lmove", "rpoplpush", "lmpop"},
	"set": {"sadd", "srem", "smembers", "sismember", "smismember", "scard", "spop", "srandmember", "smove",
		"sinter", "sunion", "sdiff", "sinterstore", "sunionstore", "sdiffstore", "sintercard", "sscan"},
	"zset": {"zadd", "zincrby", "zrem", "zcard", "zscore", "zmscore", "zrank", "zrevrank", "zrange",
		"zrangestore", "zrangebyscore", "zrevrangebyscore", "zrangebylex", "zrevrangebylex", "zrevrange",
		"zcount", "zlexcount", "zremrangebyscore", "zremrangebyrank", "zremrangebylex", "zpopmin", "zpopmax",
		"zrandmember", "zscan", "zunionstore", "zinterstore", "zdiffstore", "zunion", "zinter", "zdiff",
		"zintercard", "zmpop"},
	"geo": {"geoadd", "geopos", "geodist", "geohash", "geosearch", "geosearchstore", "georadius", "georadiusbymember",
		"georadius_ro", "georadiusbymember_ro"},
	// The blocking pops' time includes their wait for a push (WAIT's its
	// timeout): apart, so they do not make the list family's p99 a timeout.
	"blocking": {"blpop", "brpop", "blmove", "brpoplpush", "bzpopmin", "bzpopmax", "bzmpop", "blmpop", "wait"},
	"keyspace": {"del", "unlink", "exists", "expire", "pexpire", "expireat", "pexpireat", "ttl", "pttl",
		"expiretime", "pexpiretime", "persist", "type", "touch", "rename", "renamenx", "move", "swapdb", "copy", "dump", "restore", "restore-asking", "migrate", "randomkey",
		"object", "memory", "tier", "dbsize", "scan", "keys", "sort", "sort_ro"},
	"transaction": {"multi", "exec", "discard", "watch", "unwatch"},
	"script":      {"eval", "evalsha", "eval_ro", "evalsha_ro", "script", "function", "fcall", "fcall_ro"},
	"pubsub": {"subscribe", "psubscribe", "unsubscribe", "punsubscribe", "publish", "pubsub",
		"ssubscribe", "sunsubscribe", "spublish"},
	"connection": {"ping", "echo", "time", "hello", "auth", "client", "command", "select", "quit", "reset", "readonly", "readwrite", "asking"},
	"admin": {"config", "info", "shutdown", "flushall", "flushdb", "cluster", "lastsave", "slowlog", "latency", "monitor",
		"pfdebug", "pfselftest"},
}

// otherFamily is the family of a command commandFamilies does not list.
const otherFamily = "other"

// familyOf maps each command (lower case) to its family.
var familyOf = func() map[string]string {
	m := map[string]string{}
	for fam, cmds := range commandFamilies {
		for _, c := range cmds {
			if prev, ok := m[c]; ok {
				panic("command " + c + " in families " + prev + " and " + fam)
			}
			m[c] = fam
		}
	}
	return m
}()

// commandFamily is cmd's family, otherFamily for one not listed.
func commandFamily(cmd string) string {
	if f, ok := familyOf[cmd]; ok {
		return f
	}
	return otherFamily
}
