package server

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTime: TIME answers the server's clock as Redis does, two bulk
// strings: the Unix time in seconds (between the clock read before and
// after the command) and the microseconds within it (0 to 999999); inside
// a script and while the server loads (TestLoading) too.
func TestTime(t *testing.T) {
	_, path := startServer(t, nil)
	c := dialRaw(t, path)
	check := func(reply string, before, after time.Time) {
		t.Helper()
		// rendered as *[$<seconds> $<micros>]
		f := strings.Fields(strings.Trim(reply, "*[]"))
		if len(f) != 2 || f[0][0] != '$' || f[1][0] != '$' {
			t.Fatalf("TIME: %q", reply)
		}
		sec, err1 := strconv.ParseInt(f[0][1:], 10, 64)
		us, err2 := strconv.ParseInt(f[1][1:], 10, 64)
		if err1 != nil || err2 != nil || us < 0 || us > 999999 {
			t.Fatalf("TIME: %q", reply)
		}
		got := time.Unix(sec, us*1000)
		if got.Before(before.Truncate(time.Microsecond)) || got.After(after) {
			t.Errorf("TIME %v, not between %v and %v", got, before, after)
		}
	}
	before := time.Now()
	c.cmd("TIME")
	check(c.reply(), before, time.Now())
	before = time.Now()
	c.cmd("EVAL", "return redis.call('TIME')", "0")
	check(c.reply(), before, time.Now())
	c.cmd("TIME", "now")
	if got := c.reply(); got != "-ERR wrong number of arguments for 'time' command" {
		t.Errorf("TIME now: %q", got)
	}
}
