package server

import (
	"regexp"
	"strconv"
	"testing"
)

// cmdstatSetUsec reads cmdstat_set's usec from an INFO commandstats reply.
var cmdstatSetUsec = regexp.MustCompile(`cmdstat_set:calls=1,usec=(\d+),`)

// TestScriptCommandTimedAlone is S111: a script's command is timed from
// its redis.call, not from the script's previous command, as Redis's
// call() times it. The script spins in Lua between two TIME calls and
// calls SET right after the spin; SET's commandstats time must be well
// under the spin's on both servers (without S111 tiercache counted the
// spin as SET's).
func TestScriptCommandTimedAlone(t *testing.T) {
	script := "local t = redis.call('TIME') local x = 0 for i = 1, 300000 do x = x + i end " +
		"redis.call('SET', 'k', x) local u = redis.call('TIME') " +
		"return (u[1] - t[1]) * 1000000 + (u[2] - t[2])"
	p := newPeers(t, 1, 2, nil)
	p.same(0, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	p.same(0, "CONFIG", "RESETSTAT")
	for side, c := range []*rawPeer{p.ours[0], p.peer[0]} {
		who := []string{"tiercache", "redis-server"}[side]
		r := c.do("EVAL", script, "0")
		spun, err := strconv.ParseInt(r[1:len(r)-2], 10, 64)
		if err != nil || r[0] != ':' {
			t.Fatalf("%s: EVAL %q", who, r)
		}
		m := cmdstatSetUsec.FindStringSubmatch(c.do("INFO", "commandstats"))
		if m == nil {
			t.Fatalf("%s: no cmdstat_set line with one call", who)
		}
		set, _ := strconv.ParseInt(m[1], 10, 64)
		if set*2 >= spun {
			t.Errorf("%s: SET timed %d us in a script whose spin and SET took %d us", who, set, spun)
		}
	}
}
