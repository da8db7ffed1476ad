package server

import (
	"strconv"
	"strings"
	"testing"
)

// TestInfoSections: every section a client asks for is answered, alone,
// several at once, and in all and everything, and but commandstats and
// latencystats in default; an unknown one is left out; errorstats counts the error replies by code.
func TestInfoSections(t *testing.T) {
	_, path := startServer(t, func(o *Options) { o.DataDir, o.Durability = "/var/lib/tc", "drain" })
	c := dialRaw(t, path)
	c.cmd("GET")
	c.reply()
	c.cmd("INFO", "default")
	all := c.reply()
	for _, sec := range infoSections {
		head := "# " + strings.ToUpper(sec[:1]) + sec[1:]
		if sec == "cpu" {
			head = "# CPU"
		}
		c.cmd("INFO", sec)
		got := c.reply()
		if !strings.HasPrefix(got, "$"+head+"\r\n") {
			t.Errorf("INFO %s = %.60q, want it to start with %q", sec, got, head)
		}
		if strings.Contains(all, head+"\r\n") != (sec != "commandstats" && sec != "latencystats") {
			t.Errorf("INFO default shows %q: %v (only commandstats and latencystats are left out)", head, strings.Contains(all, head+"\r\n"))
		}
	}
	for _, want := range []string{"cluster_enabled:0", "role:master", "loading:0", "aof_enabled:0", "tier_durability:drain",
		"tier_data_dir:/var/lib/tc", "used_cpu_user:", "errorstat_ERR:count=1"} {
		if !strings.Contains(all, want) {
			t.Errorf("INFO default has no %q", want)
		}
	}
	for _, arg := range []string{"all", "everything", ""} {
		args := []string{"INFO", arg}
		if arg == "" {
			args = args[:1]
		}
		c.cmd(args...)
		want := len(infoSections)
		if arg == "" {
			want -= 2 // commandstats, latencystats
		}
		if got := c.reply(); strings.Count(got, "# ") != want {
			t.Errorf("INFO %s has %d sections, want %d", arg, strings.Count(got, "# "), want)
		}
	}
	c.cmd("INFO", "cpu", "CLUSTER", "nosuchsection")
	if got := c.reply(); !strings.Contains(got, "# CPU") || !strings.Contains(got, "# Cluster") || strings.Count(got, "# ") != 2 {
		t.Errorf("INFO cpu CLUSTER nosuchsection = %q", got)
	}
}

func TestConfig(t *testing.T) {
	_, path := startServer(t, func(o *Options) { o.DataDir, o.MaxConns = "/var/lib/tc", 77 })
	c := dialRaw(t, path)
	c.expect([]step{
		{[]string{"CONFIG", "GET", "maxclients"}, "*[$maxclients $77]"},
		{[]string{"CONFIG", "GET", "dir", "databases"}, "*[$databases $1 $dir $/var/lib/tc]"},
		{[]string{"CONFIG", "GET", "maxmemory*"}, "*[$maxmemory $" + strconv.Itoa(testHotBytes) + " $maxmemory-policy $allkeys-lfu]"},
		{[]string{"CONFIG", "GET", "save"}, "*[$save $]"},
		{[]string{"CONFIG", "GET", "nosuch"}, "*[]"},
		{[]string{"CONFIG", "GET"}, "-ERR wrong number of arguments for 'config|get' command"},
		{[]string{"CONFIG", "SET", "maxclients", "77"}, "+OK"},
		{[]string{"CONFIG", "SET", "maxclients", "78"}, "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - tiercache cannot change it at runtime; set it in the configuration file and restart"},
		{[]string{"CONFIG", "SET", "foo", "bar"}, "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'"},
		{[]string{"CONFIG", "SET", "maxclients"}, "-ERR wrong number of arguments for 'config|set' command"},
		{[]string{"CONFIG", "RESETSTAT", "x"}, "-ERR wrong number of arguments for 'config|resetstat' command"},
		{[]string{"CONFIG", "REWRITE"}, "-ERR CONFIG REWRITE is not supported by tiercache: it does not write its configuration file; edit the file and restart"},
		{[]string{"CONFIG", "NOPE"}, "-ERR unknown subcommand 'NOPE'. Try CONFIG HELP."},
		{[]string{"PING"}, "+PONG"},
	})
}

// TestInfoKeyspaceExpires (S20): INFO keyspace's expires counts the keys
// with a TTL, as redis-server 7.0's does, through EXPIRE, PERSIST, SET
// without KEEPTTL and DEL.
func TestInfoKeyspaceExpires(t *testing.T) {
	p := newPeers(t, 1, 2, nil)
	expires := func(info string) string {
		_, rest, _ := strings.Cut(info, "db0:")
		_, rest, _ = strings.Cut(rest, "expires=")
		n, _, _ := strings.Cut(rest, ",")
		return n
	}
	for _, c := range [][]string{
		{"SET", "a", "1"}, {"SET", "b", "1", "EX", "100"}, {"SET", "c", "1", "PX", "100000"},
		{"HSET", "h", "f", "v"}, {"EXPIRE", "h", "100"}, {"SET", "d", "1", "EX", "100"},
		{"PERSIST", "c"}, {"SET", "d", "2"}, {"SET", "e", "1", "EX", "100"}, {"DEL", "e"},
	} {
		p.same(0, c...)
		ours, peer := p.ours[0].do("INFO", "keyspace"), p.peer[0].do("INFO", "keyspace")
		if o, r := expires(ours), expires(peer); o != r {
			t.Errorf("after %q: expires=%s, redis-server %s", c, o, r)
		}
	}
}
