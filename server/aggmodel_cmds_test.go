package server

import (
	"strconv"
	"strings"
	"time"
)

// The commands TestAggregatesColdModel draws.

// key is one of the kind's keys (kind 0-3: hash, list, set, sorted set),
// now and then any key (a WRONGTYPE, or a command on another kind).
func (m *aggModel) key(kind int) string {
	if m.r.IntN(8) == 0 {
		kind = m.r.IntN(len(aggKeys))
	}
	ks := aggKeys[kind]
	return ks[m.r.IntN(len(ks))]
}

// elem is an element or field name: mostly short and from a small range
// (hits), now and then long: around the hot tier's largest value (4 KiB)
// and past it.
func (m *aggModel) elem() string {
	n := strconv.Itoa(m.r.IntN(60))
	if m.r.IntN(30) != 0 {
		return "e" + n
	}
	size := []int{1, 4095, 4096, 4097, 16 << 10, 70 << 10}[m.r.IntN(6)]
	return "e" + n + ":" + strings.Repeat("x", size)
}

// value is a hash field's value, of the sizes elem draws.
func (m *aggModel) value() string {
	if m.r.IntN(20) != 0 {
		return "v" + strconv.Itoa(m.r.IntN(1000))
	}
	return "v" + strings.Repeat("y", []int{0, 4000, 5000, 40 << 10, 200 << 10}[m.r.IntN(5)])
}

// bulk is n distinct elements (prefixed p) for a big aggregate.
func (m *aggModel) bulk(p string, n int) []string {
	out := make([]string, n)
	width := []int{0, 20, 200}[m.r.IntN(3)]
	for i := range out {
		out[i] = p + strconv.Itoa(i) + strings.Repeat("b", width)
	}
	return out
}

func (m *aggModel) index() string {
	return strconv.Itoa(m.r.IntN(60) - 30)
}

func (m *aggModel) score() string {
	return strconv.Itoa(m.r.IntN(200) - 100)
}

// command draws one command.
func (m *aggModel) command() []string {
	switch m.r.IntN(5) {
	case 0:
		return m.hashCommand()
	case 1:
		return m.listCommand()
	case 2:
		return m.setCommand()
	case 3:
		return m.zsetCommand()
	}
	return m.keyCommand()
}

func (m *aggModel) bigN() int {
	return []int{100, 700, 2000, 4000}[m.r.IntN(4)]
}

func (m *aggModel) hashCommand() []string {
	k := m.key(0)
	switch m.r.IntN(16) {
	case 0, 1, 2:
		cmd := []string{"HSET", k}
		for range 1 + m.r.IntN(3) {
			cmd = append(cmd, m.elem(), m.value())
		}
		return cmd
	case 3: // a big hash
		cmd := []string{"HSET", k}
		for _, f := range m.bulk("f", m.bigN()) {
			cmd = append(cmd, f, "v"+f)
		}
		return cmd
	case 4:
		return []string{"HDEL", k, m.elem(), m.elem()}
	case 5:
		return []string{"HGET", k, m.elem()}
	case 6:
		return []string{"HMGET", k, m.elem(), m.elem(), "f1", "f1999"}
	case 7:
		return []string{"HLEN", k}
	case 8:
		return []string{"HEXISTS", k, m.elem()}
	case 9: // errors too: a field not an integer, an overflow, a bad increment
		by := []string{"1", "7", "9223372036854775807", "x", "-9223372036854775808"}[m.r.IntN(5)]
		f := []string{"n0", "n1", "e1", "e2"}[m.r.IntN(4)]
		return []string{[]string{"HINCRBY", "HINCRBYFLOAT"}[m.r.IntN(2)], k, f, by}
	case 10:
		return []string{"HSETNX", k, m.elem(), m.value()}
	case 11:
		return []string{"HSTRLEN", k, m.elem()}
	case 12:
		return []string{"HGETALL", k}
	case 13:
		return []string{"HKEYS", k}
	case 14:
		return []string{"HGET", k, "f" + strconv.Itoa(m.r.IntN(4000))}
	}
	return []string{"HVALS", k}
}

func (m *aggModel) listCommand() []string {
	k := m.key(1)
	switch m.r.IntN(17) {
	case 0, 1:
		return []string{"RPUSH", k, m.elem(), m.elem()}
	case 2:
		return []string{"LPUSH", k, m.elem()}
	case 3: // a big list
		return append([]string{[]string{"RPUSH", "LPUSH"}[m.r.IntN(2)], k}, m.bulk("i", m.bigN())...)
	case 4:
		return []string{"LPOP", k, strconv.Itoa(m.r.IntN(5))}
	case 5:
		return []string{"RPOP", k}
	case 6:
		return []string{"LRANGE", k, m.index(), m.index()}
	case 7:
		return []string{"LINDEX", k, strconv.Itoa(m.r.IntN(4000) - 2000)}
	case 8: // an index past the end is an error
		return []string{"LSET", k, strconv.Itoa(m.r.IntN(4000) - 2000), m.elem()}
	case 9:
		return []string{"LINSERT", k, []string{"BEFORE", "AFTER"}[m.r.IntN(2)], m.elem(), m.elem()}
	case 10:
		return []string{"LREM", k, strconv.Itoa(m.r.IntN(5) - 2), m.elem()}
	case 11:
		return []string{"LTRIM", k, strconv.Itoa(m.r.IntN(10)), strconv.Itoa(-1 - m.r.IntN(2000))}
	case 12:
		return []string{"LLEN", k}
	case 13:
		return []string{"LPOS", k, m.elem(), "COUNT", "0"}
	case 14:
		return []string{"LMOVE", k, m.key(1), []string{"LEFT", "RIGHT"}[m.r.IntN(2)], []string{"LEFT", "RIGHT"}[m.r.IntN(2)]}
	case 15:
		return []string{"LRANGE", k, "1000", "1020"}
	}
	return []string{"LRANGE", k, "0", "-1"}
}

func (m *aggModel) setCommand() []string {
	k := m.key(2)
	switch m.r.IntN(14) {
	case 0, 1, 2:
		return []string{"SADD", k, m.elem(), m.elem()}
	case 3:
		return append([]string{"SADD", k}, m.bulk("s", m.bigN())...)
	case 4:
		return []string{"SREM", k, m.elem(), m.elem()}
	case 5:
		return []string{"SCARD", k}
	case 6:
		return []string{"SISMEMBER", k, m.elem()}
	case 7:
		return []string{"SMISMEMBER", k, m.elem(), "s1", "s3999"}
	case 8:
		return []string{"SMEMBERS", k}
	case 9:
		return []string{[]string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}[m.r.IntN(3)], m.key(2), k, m.key(2)}
	case 10:
		return []string{"SMOVE", k, m.key(2), m.elem()}
	case 11:
		return []string{[]string{"SINTER", "SUNION", "SDIFF"}[m.r.IntN(3)], k, m.key(2)}
	case 12:
		return []string{"SINTERCARD", "2", k, m.key(2)}
	}
	return []string{"SREM", k, "s" + strconv.Itoa(m.r.IntN(4000))}
}

func (m *aggModel) zsetCommand() []string {
	k := m.key(3)
	switch m.r.IntN(16) {
	case 0, 1, 2:
		cmd := []string{"ZADD", k}
		if m.r.IntN(4) == 0 {
			cmd = append(cmd, []string{"NX", "XX", "GT", "LT", "CH"}[m.r.IntN(5)])
		}
		return append(cmd, m.score(), m.elem(), m.score(), m.elem())
	case 3:
		cmd := []string{"ZADD", k}
		for _, e := range m.bulk("z", m.bigN()) {
			cmd = append(cmd, m.score(), e)
		}
		return cmd
	case 4:
		return []string{"ZREM", k, m.elem(), m.elem()}
	case 5: // errors too: NaN, not a number, INCR with two pairs, NX with GT
		switch m.r.IntN(5) {
		case 0:
			return []string{"ZINCRBY", k, []string{"nan", "x", "+inf", "-inf"}[m.r.IntN(4)], m.elem()}
		case 1:
			return []string{"ZADD", k, "INCR", m.score(), m.elem(), m.score(), m.elem()}
		case 2:
			return []string{"ZADD", k, "NX", "GT", m.score(), m.elem()}
		case 3:
			return []string{"ZADD", k, m.score(), m.elem(), "x", m.elem()}
		}
		return []string{"ZINCRBY", k, m.score(), m.elem()}
	case 6:
		return []string{"ZSCORE", k, m.elem()}
	case 7:
		return []string{"ZRANGE", k, m.index(), m.index(), "WITHSCORES"}
	case 8:
		return []string{"ZRANGEBYSCORE", k, m.score(), "+inf", "WITHSCORES", "LIMIT", "0", "20"}
	case 9:
		return []string{"ZCARD", k}
	case 10:
		return []string{"ZRANK", k, m.elem()}
	case 11:
		return []string{"ZPOPMIN", k, strconv.Itoa(m.r.IntN(4))}
	case 12:
		return []string{"ZREMRANGEBYRANK", k, strconv.Itoa(m.r.IntN(5)), strconv.Itoa(m.r.IntN(10))}
	case 13:
		return []string{"ZUNIONSTORE", m.key(3), "2", k, m.key(3)}
	case 14:
		return []string{"ZRANGESTORE", m.key(3), k, "0", strconv.Itoa(m.r.IntN(3000))}
	}
	return []string{"ZREVRANGE", k, "0", "10", "WITHSCORES"}
}

// keyCommand is a command on a key of any kind: deletes, renames, copies
// and expiries (an hour or in the past: both deterministic).
func (m *aggModel) keyCommand() []string {
	k := m.key(m.r.IntN(4))
	switch m.r.IntN(12) {
	case 0:
		return []string{"DEL", k}
	case 1, 2:
		return []string{"RENAME", k, m.key(m.r.IntN(4))}
	case 3:
		return []string{"RENAMENX", k, m.key(m.r.IntN(4))}
	case 4, 5:
		cmd := []string{"COPY", k, m.key(m.r.IntN(4))}
		if m.r.IntN(2) == 0 {
			cmd = append(cmd, "REPLACE")
		}
		return cmd
	case 6:
		return []string{"EXPIRE", k, "3600"}
	case 7: // in the past, or a few ms away (same waits for it)
		if m.r.IntN(3) == 0 {
			return []string{"PEXPIREAT", k, strconv.FormatInt(time.Now().Add(30*time.Millisecond).UnixMilli(), 10)}
		}
		return []string{"PEXPIREAT", k, "1"}
	case 8:
		return []string{"PERSIST", k}
	case 9:
		return []string{"EXISTS", k}
	case 10:
		return []string{"UNLINK", k}
	}
	return []string{"TYPE", k}
}
