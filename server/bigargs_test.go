package server

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
)

// TestBigArgumentsOutliveTheirBuffers (S50): every command that keeps an
// argument is sent big ones (received into off-heap buffers, resp R6)
// with Options.PoisonBigBuffers set, so each buffer is overwritten when it
// goes back at the flush after its command; every key, value, field,
// member, script, name and message is then read back intact.
func TestBigArgumentsOutliveTheirBuffers(t *testing.T) {
	_, path := startServer(t, func(o *Options) { o.PoisonBigBuffers = true })
	r := dialRaw(t, path)
	sub := dialRaw(t, path)
	sub.cmd("SUBSCRIBE", "news")
	if got := sub.reply(); got != "*[$subscribe $news :1]" {
		t.Fatalf("SUBSCRIBE: %q", got)
	}

	// Each big argument is 100 KiB of its own letter: over the read
	// buffer's half, so it is received on its own (a big bulk), small
	// enough for a DRAM record, so into a recycled off-heap buffer.
	letter := byte('a')
	big := func() string {
		s := strings.Repeat(string(letter), 100<<10)
		letter++
		return s
	}
	bigKey := big()
	v := make([]string, 23)
	for i := range v {
		v[i] = big()
	}
	script := "return redis.call('SET', KEYS[1], ARGV[1]) -- " + big()
	name := big()
	sum := sha1.Sum([]byte(script))
	sha := hex.EncodeToString(sum[:])

	writes := []step{
		{[]string{"SET", "s1", v[0]}, "+OK"},
		{[]string{"SET", bigKey, "small"}, "+OK"},
		{[]string{"SET", "s2", v[1], "EX", "1000"}, "+OK"},
		{[]string{"SETEX", "s3", "1000", v[2]}, "+OK"},
		{[]string{"SETNX", "s4", v[3]}, ":1"},
		{[]string{"GETSET", "s5", v[4]}, "nil"},
		{[]string{"MSET", "s6", v[5], "s7", v[6]}, "+OK"},
		{[]string{"APPEND", "s8", v[7]}, ":" + strconv.Itoa(len(v[7]))},
		{[]string{"SETRANGE", "s9", "0", v[8]}, ":" + strconv.Itoa(len(v[8]))},
		{[]string{"RPUSH", "l", v[9], "x"}, ":2"},
		{[]string{"LPUSH", "l", v[10]}, ":3"},
		{[]string{"LINSERT", "l", "BEFORE", "x", v[11]}, ":4"},
		{[]string{"LSET", "l", "-1", v[12]}, "+OK"},
		{[]string{"HSET", "h", "f", v[13], v[14], "g"}, ":2"},
		{[]string{"HSETNX", "h", "n", v[15]}, ":1"},
		{[]string{"SADD", "set", v[16]}, ":1"},
		{[]string{"ZADD", "z", "1", v[17]}, ":1"},
		{[]string{"EVAL", script, "1", "e", v[18]}, "+OK"},
		{[]string{"SCRIPT", "LOAD", script}, "$" + sha},
		{[]string{"CLIENT", "SETNAME", name}, "+OK"},
		{[]string{"RENAME", "s1", v[19]}, "+OK"},
		{[]string{"PUBLISH", "news", v[20]}, ":1"},
	}
	r.expect(writes)
	r.expect([]step{{[]string{"MULTI"}, "+OK"}, {[]string{"SET", "m", v[21]}, "+QUEUED"}})
	// +QUEUED was flushed: SET's buffer went back before EXEC runs it.
	r.expect([]step{{[]string{"EXEC"}, "*[+OK]"}})
	r.expect([]step{{[]string{"ECHO", v[22]}, "$" + v[22]}}) // one more big bulk recycled

	if got := sub.reply(); got != "*[$message $news $"+v[20]+"]" {
		t.Errorf("the message published arrived changed (%d bytes)", len(got))
	}
	reads := []step{
		{[]string{"GET", v[19]}, "$" + v[0]},
		{[]string{"GET", bigKey}, "$small"},
		{[]string{"GET", "s2"}, "$" + v[1]},
		{[]string{"GET", "s3"}, "$" + v[2]},
		{[]string{"GET", "s4"}, "$" + v[3]},
		{[]string{"MGET", "s5", "s6", "s7", "s8", "s9"}, "*[$" + v[4] + " $" + v[5] + " $" + v[6] + " $" + v[7] + " $" + v[8] + "]"},
		{[]string{"LRANGE", "l", "0", "-1"}, "*[$" + v[10] + " $" + v[9] + " $" + v[11] + " $" + v[12] + "]"},
		{[]string{"HMGET", "h", "f", v[14], "n"}, "*[$" + v[13] + " $g $" + v[15] + "]"},
		{[]string{"SMEMBERS", "set"}, "*[$" + v[16] + "]"},
		{[]string{"ZRANGE", "z", "0", "-1"}, "*[$" + v[17] + "]"},
		{[]string{"GET", "e"}, "$" + v[18]},
		{[]string{"EVALSHA", sha, "1", "e2", "y"}, "+OK"},
		{[]string{"CLIENT", "GETNAME"}, "$" + name},
		{[]string{"GET", "m"}, "$" + v[21]},
	}
	for _, s := range reads {
		r.cmd(s.args...)
		if got := r.reply(); got != s.want {
			t.Errorf("%.20q: read back changed (%d bytes, want %d; poisoned bytes: %v)",
				s.args, len(got), len(s.want), strings.Contains(got, "\xa5\xa5\xa5\xa5"))
		}
	}
}
