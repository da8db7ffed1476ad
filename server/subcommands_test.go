package server

import (
	"bufio"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// subcommandRefusals are container commands refused before they run: an
// unknown subcommand, a subcommand's or the container's own arity.
var subcommandRefusals = [][]string{
	{"CONFIG", "GET"}, {"CONFIG", "NOSUCH"}, {"CONFIG"}, {"config", "Set", "a"}, {"CONFIG", "SET", "a", "b", "c"}, {"CLIENT", "KILL", "a", "b"}, {"CLIENT", "TRACKING", "on", "redirect"}, {"CONFIG", "RESETSTAT", "x"},
	{"CLIENT", "ID", "x"}, {"CLIENT", "nosuch"}, {"CLIENT", "KILL"}, {"CLIENT", "SETNAME"}, {"CLIENT", "CACHING"},
	{"CLIENT", "TRACKING"}, {"CLIENT", "GETREDIR", "x"}, {"CLIENT", "INFO", "x"}, {"CLIENT", "HELP", "x"},
	{"CLIENT", strings.Repeat("x", 200)},
	{"COMMAND", "COUNT", "x"}, {"COMMAND", "GETKEYS", "get"}, {"COMMAND", "NOSUCH"},
	{"OBJECT"}, {"OBJECT", "ENCODING"}, {"OBJECT", "HELP", "x"}, {"OBJECT", "nosuch", "k"},
	{"MEMORY", "USAGE"}, {"MEMORY", "PURGE", "x"}, {"MEMORY", "HELP", "x"},
	{"SLOWLOG", "LEN", "x"}, {"SLOWLOG", "RESET", "x"}, {"SLOWLOG", "NOSUCH"},
	{"SCRIPT", "KILL", "x"}, {"SCRIPT", "LOAD"}, {"SCRIPT", "EXISTS"}, {"SCRIPT", "NOSUCH"},
	{"FUNCTION", "NOSUCH"}, {"FUNCTION", "DUMP", "x"}, {"FUNCTION", "DELETE"},
	{"PUBSUB", "NUMPAT", "x"}, {"PUBSUB", "NOSUCH"}, {"PUBSUB", "HELP", "x"},
	{"CLUSTER", "INFO", "x"}, {"CLUSTER", "KEYSLOT"}, {"CLUSTER", "NOSUCH"}, {"CLUSTER", "MEET", "a"},
}

// TestSubcommandRefusedWhenQueued checks S86: an unknown subcommand and
// a subcommand's wrong argument count are refused before the command
// runs, with redis-server 7.0's error, also inside MULTI, where the
// command is not queued and EXEC answers EXECABORT, in RESP2 and RESP3;
// an unknown subcommand before AUTH, as an unknown command, is answered
// before NOAUTH; a subscribed RESP2 connection's refusal names
// "config|get"; in a script, an unknown subcommand is an unknown command
// and a subcommand's noscript flag, not its container's, refuses it.
func TestSubcommandRefusedWhenQueued(t *testing.T) {
	for _, proto := range []int{2, 3} {
		p := newPeers(t, 1, proto, nil)
		for _, args := range subcommandRefusals {
			p.same(0, args...)
		}
		for _, args := range subcommandRefusals {
			p.same(0, "MULTI")
			p.same(0, "CLIENT", "GETNAME")
			p.same(0, args...)
			p.same(0, "EXEC")
		}
		// Well-formed subcommands are queued and run.
		p.same(0, "MULTI")
		p.same(0, "CLIENT", "GETNAME")
		p.same(0, "config", "get", "nosuchparameter")
		p.same(0, "OBJECT", "ENCODING", "nosuchkey")
		p.same(0, "EXEC")
		for _, script := range []string{
			"return redis.call('object','nosuch')", "return redis.call('object','encoding')", "return redis.call('object')",
			"return redis.call('object','encoding','nosuchkey')", "return redis.call('client','getname')",
			"return type(redis.pcall('client','help'))", "return type(redis.pcall('config','help'))",
		} {
			p.same(0, "EVAL", script, "0")
		}
	}
	// A subscribed RESP2 connection names the subcommand it refuses.
	p := newPeers(t, 1, 2, nil)
	p.same(0, "SUBSCRIBE", "x")
	p.same(0, "CONFIG", "GET", "x")
	p.same(0, "CLIENT", "nosuch")
	p = newPeers(t, 1, 2, func(o *Options) { o.RequirePass, o.UnixRequireAuth = "pw", true }, "--requirepass", "pw")
	p.same(0, "CONFIG", "NOSUCH")
	p.same(0, "CONFIG", "GET")
	p.same(0, "CONFIG", "GET", "x")
}

// cmdstatRE reads an INFO commandstats line: name (a subcommand's
// "client|list" too), calls, rejected and failed calls.
var cmdstatRE = regexp.MustCompile(`cmdstat_([^:]+):calls=(\d+),usec=\d+,usec_per_call=[\d.]+,rejected_calls=(\d+),failed_calls=(\d+)`)

// cmdstatsOf reads INFO commandstats: "calls/rejected/failed" by name.
func cmdstatsOf(info string) map[string]string {
	m := map[string]string{}
	for _, l := range cmdstatRE.FindAllStringSubmatch(info, -1) {
		m[l[1]] = l[2] + "/" + l[3] + "/" + l[4]
	}
	return m
}

// TestSubcommandStatsMatchRedis checks S87: INFO commandstats counts a
// container's calls, refusals and failures under its subcommand
// ("client|id"), its own arity refusal under the container, an unknown
// subcommand nowhere, as redis-server 7.0, commands run by EXEC and by a
// script too.
func TestSubcommandStatsMatchRedis(t *testing.T) {
	p := newPeers(t, 1, 2, nil)
	for _, args := range append(slices.Clone(subcommandRefusals),
		[]string{"CLIENT", "GETNAME"}, []string{"client", "getname"}, []string{"CLIENT", "LIST", "x", "y"},
		[]string{"OBJECT", "ENCODING", "nosuchkey"}, []string{"OBJECT", "FREQ", "a", "b"}, []string{"SLOWLOG", "LEN"},
		[]string{"PUBSUB", "NUMPAT"}, []string{"CONFIG", "GET", "nosuchparameter"}, []string{"MEMORY", "USAGE", "nosuchkey"},
		[]string{"COMMAND", "GETKEYS", "get", "k"}, []string{"CLIENT", "NO-EVICT", "maybe"},
		[]string{"MULTI"}, []string{"CONFIG", "GET"}, []string{"EXEC"},
		[]string{"MULTI"}, []string{"CLIENT", "GETNAME"}, []string{"OBJECT", "ENCODING", "k"}, []string{"EXEC"},
		[]string{"EVAL", "return redis.call('object','encoding','k')", "0"},
	) {
		p.same(0, args...)
	}
	ours, peer := cmdstatsOf(p.ours[0].do("INFO", "commandstats")), cmdstatsOf(p.peer[0].do("INFO", "commandstats"))
	compared := 0
	for _, m := range []map[string]string{ours, peer} {
		for n := range m {
			container, _, _ := strings.Cut(n, "|")
			if subcommandSpecs[container] == nil && n != "multi" && n != "exec" {
				continue // HELLO, INFO, EVAL...: not this test's
			}
			compared++
			if ours[n] != peer[n] {
				t.Errorf("cmdstat_%s calls/rejected/failed: tiercache %q, redis-server %q", n, ours[n], peer[n])
			}
		}
	}
	if compared < 40 || ours["client|getname"] == "" {
		t.Fatalf("compared %d lines: %v", compared, ours)
	}
}

// respNode is a parsed RESP reply: its type byte, its raw bytes, and its
// elements (an aggregate's).
type respNode struct {
	kind  byte
	raw   string
	elems []respNode
}

// parseRESP parses one raw reply (rawPeer.do's).
func parseRESP(t *testing.T, raw string) respNode {
	t.Helper()
	br := bufio.NewReader(strings.NewReader(raw))
	var node func() respNode
	node = func() respNode {
		var out []byte
		line, _ := br.ReadString('\n')
		n := respNode{kind: line[0]}
		out = append(out, line...)
		count, _ := strconv.Atoi(line[1 : len(line)-2])
		switch line[0] {
		case '$', '=', '!':
			if count >= 0 {
				b := make([]byte, count+2)
				io.ReadFull(br, b)
				out = append(out, b...)
			}
		case '*', '~', '>', '%':
			if line[0] == '%' {
				count *= 2
			}
			for range count {
				e := node()
				out = append(out, e.raw...)
				n.elems = append(n.elems, e)
			}
		}
		n.raw = string(out)
		return n
	}
	return node()
}

// compareInfo compares the COMMAND INFO entries of one command or
// subcommand: name, arity, flags and key positions byte for byte, the
// types of the ACL categories, tips, key specs and subcommands (tiercache
// has no ACL categories, tips nor key specs), and each subcommand
// tiercache has with redis-server's of the same name.
func compareInfo(t *testing.T, ours, peer respNode) {
	t.Helper()
	if len(ours.elems) != 10 || len(peer.elems) != 10 {
		t.Fatalf("entries of %d and %d elements: %q, %q", len(ours.elems), len(peer.elems), ours.raw, peer.raw)
	}
	name := ours.elems[0].raw
	for i := range 6 {
		if ours.elems[i].raw != peer.elems[i].raw {
			t.Errorf("%q element %d: tiercache %q, redis-server %q", name, i, ours.elems[i].raw, peer.elems[i].raw)
		}
	}
	for i := 6; i < 10; i++ {
		if ours.elems[i].kind != peer.elems[i].kind {
			t.Errorf("%q element %d: tiercache's type %c, redis-server's %c", name, i, ours.elems[i].kind, peer.elems[i].kind)
		}
	}
	theirs := map[string]respNode{}
	for _, sub := range peer.elems[9].elems {
		theirs[sub.elems[0].raw] = sub
	}
	for _, sub := range ours.elems[9].elems {
		if sub.elems[0].raw == "$14\r\nclient|setinfo\r\n" {
			continue // Redis 7.2's
		}
		ref, ok := theirs[sub.elems[0].raw]
		if !ok {
			t.Errorf("%q: subcommand %q unknown to redis-server", name, sub.elems[0].raw)
			continue
		}
		compareInfo(t, sub, ref)
	}
}

// TestSubcommandInfoMatchesRedis checks S88: COMMAND INFO of a container
// gives its subcommands in its 10th element, each an entry as redis-server
// 7.0's (name, arity, flags, keys; the other elements of the same types),
// in RESP2 and RESP3; COMMAND's entries are COMMAND INFO's; COMMAND INFO
// finds "config|get"; COMMAND LIST lists the subcommands after their
// container, all known to redis-server; COMMAND GETKEYS reads a
// subcommand's keys and arity; COMMAND COUNT still counts commands only.
func TestSubcommandInfoMatchesRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		p := newPeers(t, 1, proto, nil)
		for container, specs := range subcommandSpecs {
			ours := parseRESP(t, p.ours[0].do("COMMAND", "INFO", container))
			peer := parseRESP(t, p.peer[0].do("COMMAND", "INFO", container))
			compareInfo(t, ours.elems[0], peer.elems[0])
			if n := len(ours.elems[0].elems[9].elems); n != len(specs) {
				t.Errorf("COMMAND INFO %s: %d subcommands, want %d", container, n, len(specs))
			}
		}
		ours := parseRESP(t, p.ours[0].do("COMMAND", "INFO", "CONFIG|get", "object|encoding", "config|nosuch", "get"))
		peer := parseRESP(t, p.peer[0].do("COMMAND", "INFO", "CONFIG|get", "object|encoding", "config|nosuch", "get"))
		for i := range ours.elems {
			if ours.elems[i].kind == '*' && peer.elems[i].kind == '*' {
				compareInfo(t, ours.elems[i], peer.elems[i])
			} else if ours.elems[i].raw != peer.elems[i].raw {
				t.Errorf("COMMAND INFO's %d: tiercache %q, redis-server %q", i, ours.elems[i].raw, peer.elems[i].raw)
			}
		}
		all := parseRESP(t, p.ours[0].do("COMMAND"))
		info := map[string]string{}
		for _, e := range all.elems {
			info[e.elems[0].raw] = e.raw
		}
		// Every command both have: the same entry, flags in
		// redis-server's order.
		theirs := map[string]respNode{}
		for _, e := range parseRESP(t, p.peer[0].do("COMMAND")).elems {
			theirs[e.elems[0].raw] = e
		}
		for _, e := range all.elems {
			if ref, ok := theirs[e.elems[0].raw]; ok {
				compareInfo(t, e, ref)
			}
		}
		for container := range subcommandSpecs {
			one := parseRESP(t, p.ours[0].do("COMMAND", "INFO", container)).elems[0]
			if info[one.elems[0].raw] != one.raw {
				t.Errorf("COMMAND's %s entry is not COMMAND INFO's", container)
			}
		}
		list := parseRESP(t, p.ours[0].do("COMMAND", "LIST"))
		known := map[string]bool{}
		for _, e := range parseRESP(t, p.peer[0].do("COMMAND", "LIST")).elems {
			known[e.raw] = true
		}
		subs := 0
		for _, e := range list.elems {
			if strings.Contains(e.raw, "|") {
				subs++
				if !known[e.raw] && e.raw != "$14\r\nclient|setinfo\r\n" {
					t.Errorf("COMMAND LIST: %q unknown to redis-server", e.raw)
				}
			}
		}
		count := 0
		for _, specs := range subcommandSpecs {
			count += len(specs)
		}
		if subs != count || len(list.elems)-subs != len(all.elems) {
			t.Errorf("COMMAND LIST: %d subcommands of %d, %d commands of %d", subs, count, len(list.elems)-subs, len(all.elems))
		}
		for _, args := range [][]string{
			{"object", "encoding", "k"}, {"OBJECT", "nosuch", "k"}, {"object", "encoding"}, {"memory", "usage", "k"},
			{"memory", "usage"}, {"config", "get", "x"}, {"client", "list"}, {"object"},
		} {
			p.same(0, append([]string{"COMMAND", "GETKEYS"}, args...)...)
		}
		if got, want := p.ours[0].do("COMMAND", "COUNT"), ":"+strconv.Itoa(len(all.elems))+"\r\n"; got != want {
			t.Errorf("COMMAND COUNT %q, COMMAND has %s", got, want)
		}
	}
}
