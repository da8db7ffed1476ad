package server

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// slowlogTimes masks what differs between two servers in an entry: its
// unix time and its duration; slowlogAddr a Unix socket client's address
// (the socket's path, then ":0").
var (
	slowlogTimes = regexp.MustCompile(`(\*6\r\n:\d+\r\n):\d+\r\n:\d+\r\n`)
	slowlogAddr  = regexp.MustCompile(`\$\d+\r\n/[^\r]*:0\r\n`)
)

func maskSlowlog(r string) string {
	r = slowlogTimes.ReplaceAllString(r, "$1:T\r\n:D\r\n")
	return slowlogAddr.ReplaceAllString(r, "$$A\r\nADDR:0\r\n")
}

// TestSlowlogMatchesRedis checks S59 against redis-server 7.0, in RESP2
// and RESP3: with slowlog-log-slower-than 0 the same commands leave the
// same entries (ids, arguments cut at 32 and 128 bytes, AUTH's, HELLO's
// and CONFIG SET requirepass's redacted as Redis redacts them, EXEC's
// commands one by one and not EXEC, a script's commands as Redis's script
// client "?:0", the client's name), the times and socket paths masked;
// commands refused before running (arity, unknown subcommand) are not
// logged; SLOWLOG's subcommands, their errors, CONFIG GET and SET of both
// parameters and slowlog-max-len's trimming answer byte for byte.
func TestSlowlogMatchesRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+string(rune('0'+proto)), func(t *testing.T) {
			p := newPeers(t, 1, proto, func(o *Options) {
				o.SlowlogSet, o.SlowlogLogSlowerThan, o.SlowlogMaxLen = true, 1e9, 128
			}, "--slowlog-log-slower-than", "1000000000")
			for _, args := range [][]string{
				{"CONFIG", "GET", "slowlog-log-slower-than"}, {"CONFIG", "GET", "slowlog-max-len"},
				{"SLOWLOG", "LEN"},
				{"CONFIG", "SET", "slowlog-log-slower-than", "-2"},
				{"CONFIG", "SET", "slowlog-log-slower-than", "1kb"},
				{"CONFIG", "SET", "slowlog-max-len", "-1"},
				{"CONFIG", "SET", "slowlog-max-len", "9223372036854775808"},
				{"CONFIG", "SET", "slowlog-log-slower-than", "0"},
				{"SLOWLOG", "RESET"},
				{"SET", "a", "1"},
				{"AUTH", "foo"},
				{"AUTH", "a", "b", "c"},
				{"HELLO", "4", "AUTH", "default", "pw"},
				{"HELLO", strconv.Itoa(proto), "BAD", "AUTH", "default", "pw"},
				{"CLIENT", "SETNAME", "nm2"},
				{"SET", "big", strings.Repeat("x", 200)},
				{"DEL", "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12", "k13", "k14", "k15",
					"k16", "k17", "k18", "k19", "k20", "k21", "k22", "k23", "k24", "k25", "k26", "k27", "k28", "k29", "k30",
					"k31", "k32", "k33", "k34", "k35", "k36", "k37", "k38", "k39"},
				{"MULTI"}, {"SET", "x", "1"}, {"GET", "x"}, {"EXEC"},
				{"EVAL", "redis.call('set','k','v')", "0"},
				{"CONFIG", "SET", "nosuch", "v", "requirepass", "zz"},
				{"SLOWLOG"},
				{"SLOWLOG", "LEN", "x"},
				{"SLOWLOG", "Reset", "x"},
				{"SLOWLOG", "HELP", "x"},
				{"SLOWLOG", "FOO", "bar"},
				{"SLOWLOG", "GET", "1", "2"},
				{"SLOWLOG", "get", "-2"},
				{"SLOWLOG", "GET", "abc"},
				{"SLOWLOG", "GET", " 1"},
				{"SLOWLOG", "GET", "99999999999999999999"},
				{"SLOWLOG", "GET", "0"},
				{"SLOWLOG", "HELP"},
			} {
				p.same(0, args...)
				if args[0] == "HELLO" && args[2] == "BAD" { // its reply names the server: not compared
					p.ours[0].do("HELLO", strconv.Itoa(proto), "SETNAME", "nm", "AUTH", "default", "pw")
					p.peer[0].do("HELLO", strconv.Itoa(proto), "SETNAME", "nm", "AUTH", "default", "pw")
				}
			}
			for _, args := range [][]string{
				{"SLOWLOG", "GET"},
				{"SLOWLOG", "GET", "2"},
				{"SLOWLOG", "GET", "-1"},
				{"SLOWLOG", "LEN"},
				{"CONFIG", "SET", "slowlog-max-len", "3"},
				{"SLOWLOG", "LEN"}, // trimmed at the next entry, not at once
				{"SLOWLOG", "GET", "-1"},
				{"SLOWLOG", "LEN"},
				{"CONFIG", "SET", "slowlog-log-slower-than", "-1", "slowlog-max-len", "9223372036854775807"},
				{"SET", "a", "2"},
				{"CONFIG", "GET", "slowlog-log-slower-than"}, {"CONFIG", "GET", "slowlog-max-len"},
				{"SLOWLOG", "GET", "9223372036854775807"},
			} {
				a, b := p.ours[0].do(args...), p.peer[0].do(args...)
				if ma, mb := maskSlowlog(a), maskSlowlog(b); ma != mb {
					t.Errorf("%q:\n tiercache    %q\n redis-server %q", args, ma, mb)
				}
			}
		})
	}
}

// TestSlowlogPipelinedRun checks S59's runs: commands pipelined in one
// read are logged each with its own arguments, a run of the same command
// as one entry with its last command's, also when the run is observed
// only as the connection is about to read the rest of a command cut by
// the read (its arguments are read before the buffer is compacted).
func TestSlowlogPipelinedRun(t *testing.T) {
	_, path := startServer(t, func(o *Options) {
		o.SlowlogSet, o.SlowlogLogSlowerThan, o.SlowlogMaxLen = true, 0, 100
	})
	c := dialPeer(t, path)
	c.do("SLOWLOG", "RESET")
	cmd := func(args ...string) string {
		b := "*" + strconv.Itoa(len(args)) + "\r\n"
		for _, a := range args {
			b += "$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n"
		}
		return b
	}
	set := cmd("SET", "zkey", strings.Repeat("v", 2000)) // compacted over the commands before it
	batch := cmd("SET", "first", "1") + cmd("INCR", "run-a") + cmd("INCR", "run-b") + cmd("GET", "g1") + cmd("GET", "g2") +
		cmd("INCR", "run-c") + cmd("INCR", "run-d") + set[:len(set)-6]
	if _, err := c.nc.Write([]byte(batch)); err != nil {
		t.Fatal(err)
	}
	for range 7 {
		if r := c.read(10 * time.Second); r == "" {
			t.Fatal("no reply")
		}
	}
	if _, err := c.nc.Write([]byte(set[len(set)-6:])); err != nil {
		t.Fatal(err)
	}
	if r := c.read(10 * time.Second); r != "+OK\r\n" {
		t.Fatalf("SET: %q", r)
	}
	got := regexp.MustCompile(`\*6\r\n:\d+\r\n:\d+\r\n:\d+\r\n\*(\d+)\r\n((?:\$\d+\r\n[^\r]*\r\n)+?)\$\d+\r\n/`).
		FindAllStringSubmatch(c.do("SLOWLOG", "GET", "-1"), -1)
	var entries []string
	for _, m := range got {
		var args []string
		for i, l := range strings.Split(strings.TrimSuffix(m[2], "\r\n"), "\r\n") {
			if i%2 == 1 {
				args = append(args, l)
			}
		}
		entries = append(entries, strings.Join(args, " "))
	}
	want := []string{"SET zkey " + strings.Repeat("v", 128) + "... (1872 more bytes)", "INCR run-d", "GET g2", "INCR run-b", "SET first 1", "SLOWLOG RESET"}
	if strings.Join(entries, "|") != strings.Join(want, "|") {
		t.Errorf("entries %q, want %q", entries, want)
	}
}
