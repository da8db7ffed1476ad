package server

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// freePort is a loopback TCP port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startRedisCluster runs a redis-server in cluster mode that alone owns
// every slot (CLUSTER ADDSLOTSRANGE 0 16383 on a lone node), announcing
// 127.0.0.1 as its address: what the emulated cluster answers as. It
// returns a connection on its Unix socket and its port and bus port.
func startRedisCluster(t *testing.T) (conn *rawConn, port, bus string) {
	t.Helper()
	conn, _, port, bus = startRedisClusterAt(t)
	return conn, port, bus
}

// startRedisClusterAt is startRedisCluster that also returns the Unix
// socket's path, for more connections.
func startRedisClusterAt(t *testing.T) (conn *rawConn, sock, port, bus string) {
	t.Helper()
	port, bus = strconv.Itoa(freePort(t)), strconv.Itoa(freePort(t))
	sock = startRedis(t, "--port", port, "--cluster-enabled", "yes", "--cluster-port", bus,
		"--cluster-announce-ip", "127.0.0.1")
	conn = dialRaw(t, sock)
	conn.expect([]step{{[]string{"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}, "+OK"}})
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn.cmd("CLUSTER", "INFO")
		info := conn.reply()
		if strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the one-node redis cluster is not ok: %q", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return conn, sock, port, bus
}

// startClusterServer starts a Server in cluster mode with a TCP listener
// on loopback; it returns the server, its Unix socket and its TCP port.
func startClusterServer(t *testing.T, mod func(*Options)) (*Server, string, string) {
	t.Helper()
	s, sock := startServerWith(t, newTierCache(t), func(o *Options) {
		o.Cluster, o.TCPAddr, o.RequirePass = true, "127.0.0.1:0", "pw"
		if mod != nil {
			mod(o)
		}
	})
	for _, a := range s.Addrs() {
		if ta, ok := a.(*net.TCPAddr); ok {
			return s, sock, strconv.Itoa(ta.Port)
		}
	}
	t.Fatal("no TCP address served")
	return nil, "", ""
}

// myID is CLUSTER MYID's answer on r.
func myID(t *testing.T, r *rawConn) string {
	t.Helper()
	r.cmd("CLUSTER", "MYID")
	id := strings.TrimPrefix(r.reply(), "$")
	if len(id) != 40 {
		t.Fatalf("CLUSTER MYID = %q", id)
	}
	return id
}

// clusterNorm writes a node's own id, port and bus port as placeholders,
// so that two nodes' replies compare.
func clusterNorm(s, id, port, bus string) string {
	s = strings.ReplaceAll(s, id, "<id>")
	s = strings.ReplaceAll(s, "127.0.0.1:"+port+"@"+bus+" ", "127.0.0.1:<port>@<bus> ")
	return strings.ReplaceAll(s, " :"+port+" ", " :<port> ")
}

// TestClusterMatchesRedis checks CL1 and CL2 against a redis-server 7.0 in
// cluster mode that alone owns every slot: CLUSTER's replies, READONLY,
// READWRITE, ASKING, SELECT, the CROSSSLOT refusals of multi-key commands,
// WATCH and transactions, and COMMAND GETKEYS, in RESP2 and RESP3, are
// its replies byte for byte but for the node's id, port and bus port.
func TestClusterMatchesRedis(t *testing.T) {
	peer, pPort, pBus := startRedisCluster(t)
	_, sock, port := startClusterServer(t, nil)
	ours := dialRaw(t, sock) // the Unix socket: cluster rules hold on every connection
	pID, oID := myID(t, peer), myID(t, ours)
	p := &peerPair{t: t, ours: ours, peer: peer}
	same := func(cmds [][]string) {
		t.Helper()
		for _, args := range cmds {
			o, r := p.do(args...)
			if no, nr := clusterNorm(o, oID, port, "0"), clusterNorm(r, pID, pPort, pBus); no != nr {
				t.Errorf("%q:\n tiercache    %q\n redis-server %q", args, no, nr)
			}
		}
	}
	// The topology, and the subcommands that take a node's id, each
	// given its own node's.
	topology := func() {
		t.Helper()
		same([][]string{{"CLUSTER", "INFO"}, {"CLUSTER", "SLOTS"}, {"CLUSTER", "SHARDS"}, {"CLUSTER", "NODES"},
			{"CLUSTER", "MYID"}, {"CLUSTER", "LINKS"}})
		for _, sub := range []string{"REPLICAS", "SLAVES", "COUNT-FAILURE-REPORTS"} {
			ours.cmd("CLUSTER", sub, oID)
			peer.cmd("CLUSTER", sub, pID)
			if o, r := ours.reply(), peer.reply(); o != r {
				t.Errorf("CLUSTER %s <id>: tiercache %q, redis-server %q", sub, o, r)
			}
		}
	}
	topology()
	same([][]string{
		{"CLUSTER", "KEYSLOT", "foo"}, {"CLUSTER", "KEYSLOT", "{user1}:a"}, {"CLUSTER", "KEYSLOT", ""},
		{"CLUSTER", "KEYSLOT", "{}x"}, {"CLUSTER", "KEYSLOT", "x{}{y}"}, {"CLUSTER", "KEYSLOT", "{a"},
		{"CLUSTER", "KEYSLOT"}, {"CLUSTER", "KEYSLOT", "a", "b"}, {"cluster", "foo"}, {"CLUSTER"},
		{"CLUSTER", "MYID", "x"}, {"CLUSTER", "INFO", "x"}, {"CLUSTER", "SLOTS", "x"}, {"CLUSTER", "SHARDS", "x"},
		{"CLUSTER", "NODES", "x"}, {"CLUSTER", "REPLICAS", "0123456789012345678901234567890123456789"},
		{"CLUSTER", "SLAVES", "x"}, {"CLUSTER", "COUNT-FAILURE-REPORTS", "x"}, {"CLUSTER", "MEET", "1.2.3.4"},
		{"CLUSTER", "ADDSLOTS"},
		{"SET", "b", "1"}, {"SET", "{b}x", "2"}, {"SET", "k2", "3"},
		{"CLUSTER", "COUNTKEYSINSLOT", "3300"}, {"CLUSTER", "COUNTKEYSINSLOT", "449"}, {"CLUSTER", "COUNTKEYSINSLOT", "0"},
		{"CLUSTER", "COUNTKEYSINSLOT", "16384"}, {"CLUSTER", "COUNTKEYSINSLOT", "-1"}, {"CLUSTER", "COUNTKEYSINSLOT", "x"},
		{"CLUSTER", "GETKEYSINSLOT", "449", "10"}, {"CLUSTER", "GETKEYSINSLOT", "3300", "0"}, {"CLUSTER", "GETKEYSINSLOT", "3300", "-1"},
		{"CLUSTER", "GETKEYSINSLOT", "16384", "1"}, {"CLUSTER", "GETKEYSINSLOT", "x", "1"}, {"CLUSTER", "GETKEYSINSLOT", "1", "x"},
		{"CLUSTER", "GETKEYSINSLOT", "-1", "-1"}, {"CLUSTER", "GETKEYSINSLOT", "1"},
		{"READONLY"}, {"READWRITE"}, {"ASKING"}, {"READONLY", "x"}, {"ASKING", "x"},
		{"SELECT", "1"}, {"SELECT", "0"}, {"SELECT", "x"}, {"SELECT", "-1"}, {"CONFIG", "GET", "cluster-enabled"},
		{"MOVE", "b", "0"}, {"MOVE", "b", "1"}, {"MOVE", "b", "x"}, {"SWAPDB", "0", "0"}, {"SWAPDB", "0", "x"},
		// CROSSSLOT: b (3300), f (3168), k2 (449); {b}x is b's slot.
		{"MGET", "b", "f"}, {"MGET", "b", "b"}, {"MGET", "b", "{b}x"}, {"MGET", "{b}x", "b", "f"}, {"MGET"},
		{"DEL", "f", "b"}, {"UNLINK", "f", "b"}, {"EXISTS", "b", "f"}, {"TOUCH", "b", "f"}, {"RENAME", "b", "f"},
		{"RENAMENX", "b", "f"}, {"COPY", "b", "f"}, {"MSET", "b", "1", "f", "2"}, {"MSET", "b", "1", "f"},
		{"MSETNX", "b", "1", "f", "2"}, {"BLPOP", "b", "f", "1"}, {"BRPOP", "f", "b", "1"}, {"LMOVE", "b", "f", "LEFT", "LEFT"},
		{"RPOPLPUSH", "b", "f"}, {"BLMOVE", "b", "f", "LEFT", "LEFT", "1"}, {"BRPOPLPUSH", "b", "f", "1"},
		{"BITOP", "AND", "b", "f"}, {"BITOP", "OR", "b", "{b}x", "f"}, {"BITOP", "OR", "b", "{b}x"}, {"LCS", "b", "f"}, {"LCS", "b", "{b}x"},
		{"BITFIELD", "b", "GET", "u8", "0"}, {"BITFIELD_RO", "f", "GET", "u8", "0"},
		{"PFCOUNT", "b", "f"}, {"PFCOUNT", "b", "{b}x"}, {"PFMERGE", "b", "f"}, {"PFMERGE", "{b}x", "b"}, {"PFADD", "f", "x"},
		{"COMMAND", "GETKEYS", "PFMERGE", "b", "f"}, {"COMMAND", "GETKEYS", "PFCOUNT", "b", "f", "k2"},
		{"LMPOP", "2", "b", "f", "LEFT"}, {"BLMPOP", "1", "2", "f", "b", "RIGHT"}, {"LMPOP", "2", "b", "{b}x", "LEFT"},
		{"LMPOP", "0", "b", "LEFT"}, {"LMPOP", "3", "b", "LEFT"}, {"BLMPOP", "x", "2", "f", "b", "LEFT"}, {"WAIT", "0", "0"},
		{"NOSUCH", "b", "f"}, {"GET", "b"}, {"MGET", "b", "{b}x"}, {"EXISTS", "b", "f", "k2"},
		{"WATCH", "b", "f"}, {"WATCH", "b", "{b}x"}, {"UNWATCH"},
		// Transactions: a refused command makes EXEC abort; commands of
		// several slots make EXEC itself refused, and the transaction is gone.
		{"MULTI"}, {"SET", "b", "1"}, {"MGET", "b", "f"}, {"SET", "b", "2"}, {"EXEC"}, {"GET", "b"},
		{"MULTI"}, {"SET", "b", "3"}, {"SET", "f", "4"}, {"EXEC"}, {"EXEC"}, {"MGET", "b", "{b}x"}, {"EXISTS", "f"},
		{"MULTI"}, {"SET", "b", "5"}, {"SET", "{b}x", "6"}, {"MGET", "b", "{b}x"}, {"EXEC"},
		{"MULTI"}, {"WATCH", "b", "f"}, {"SET", "b", "7"}, {"EXEC"},
		{"MULTI"}, {"SET", "b", "8"}, {"MGET", "f", "k2"}, {"SET", "f", "9"}, {"EXEC"}, {"MGET", "b", "{b}x"},
		{"MULTI"}, {"EXEC"}, {"WATCH", "b"}, {"MULTI"}, {"SET", "f", "10"}, {"EXEC"}, {"GET", "f"},
		{"MULTI"}, {"NOSUCH"}, {"SET", "b", "1"}, {"SET", "f", "1"}, {"EXEC"},
		// COMMAND GETKEYS, which cluster clients ask for movable keys.
		{"COMMAND", "GETKEYS", "mget", "a", "b"}, {"COMMAND", "GETKEYS", "get", "a", "b"}, {"COMMAND", "GETKEYS", "nosuch", "a"},
		{"COMMAND", "GETKEYS", "ping", "x"}, {"COMMAND", "GETKEYS", "mset", "a", "1", "b"}, {"COMMAND", "GETKEYS", "blpop", "a", "b", "0"},
		{"COMMAND", "GETKEYS", "blpop", "0"}, {"COMMAND", "GETKEYS", "object", "encoding", "k"},
		{"COMMAND", "GETKEYS", "copy", "a", "b", "db", "0"}, {"COMMAND", "GETKEYS", "watch", "a", "b"},
		{"COMMAND", "GETKEYS", "mget"}, {"COMMAND", "GETKEYS"}, {"COMMAND", "GETKEYS", "select", "0", "1"},
		{"COMMAND", "GETKEYS", "Mget", "A"},
		{"COMMAND", "GETKEYS", "bitop", "and", "d", "a", "b"}, {"COMMAND", "GETKEYS", "lcs", "a", "b"}, {"COMMAND", "GETKEYS", "bitfield", "a", "get", "u8", "0"},
		{"COMMAND", "GETKEYS", "lmpop", "2", "a", "b", "left"}, {"COMMAND", "GETKEYS", "lmpop", "0", "a", "left"},
		{"COMMAND", "GETKEYS", "blmpop", "0", "1", "a", "left"}, {"COMMAND", "GETKEYS", "blmpop", "0", "3", "a", "left"},
		{"COMMAND", "GETKEYS", "wait", "0", "0"},
	})
	// RESP3: the topology again.
	p.do("HELLO", "3")
	topology()
	o, r := p.do("INFO", "errorstats")
	if got, want := lineWith(o, "errorstat_CROSSSLOT"), lineWith(r, "errorstat_CROSSSLOT"); got != want || got == "" {
		t.Errorf("INFO errorstats: tiercache %q, redis-server %q", got, want)
	}
	for _, sec := range []string{"server", "cluster"} {
		o, r := p.do("INFO", sec)
		for _, f := range []string{"redis_mode:cluster", "cluster_enabled:1"} {
			if strings.Contains(r, f) != strings.Contains(o, f) {
				t.Errorf("INFO %s: redis-server has %s: %v, tiercache: %v", sec, f, strings.Contains(r, f), strings.Contains(o, f))
			}
		}
	}
	ours.cmd("HELLO", "3")
	if h := ours.reply(); !strings.Contains(h, "$mode $cluster") {
		t.Errorf("HELLO: %q, want mode cluster", h)
	}
}

// lineWith is the line of s that starts with prefix, "" if none.
func lineWith(s, prefix string) string {
	for _, l := range strings.Split(strings.TrimPrefix(s, "$"), "\r\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// dialTCP connects to addr over TCP and authenticates with password pw.
func dialTCP(t *testing.T, addr, pw string) *rawConn {
	t.Helper()
	r := dialNet(t, "tcp", addr)
	r.expect([]step{{[]string{"AUTH", pw}, "+OK"}})
	return r
}

// TestClusterOff checks CL3: without cluster mode CLUSTER, READONLY,
// READWRITE and ASKING answer as a redis-server without cluster support,
// INFO says cluster_enabled:0, and multi-key commands and transactions
// over several slots run.
func TestClusterOff(t *testing.T) {
	p := newPeerPair(t)
	p.same([][]string{
		{"CLUSTER", "INFO"}, {"CLUSTER", "SLOTS"}, {"CLUSTER", "KEYSLOT", "x"}, {"CLUSTER", "KEYSLOT"},
		{"CLUSTER", "FOO"}, {"CLUSTER", "HELP"}, {"CLUSTER", "MEET", "1.2.3.4", "1"}, {"CLUSTER"},
		{"READONLY"}, {"READWRITE"}, {"ASKING"}, {"READONLY", "x"},
		{"INFO", "cluster"}, {"CONFIG", "GET", "cluster-enabled"}, {"MSET", "b", "1", "f", "2"}, {"MGET", "b", "f"}, {"DEL", "b", "f", "x"},
		{"MULTI"}, {"SET", "b", "1"}, {"SET", "f", "2"}, {"EXEC"}, {"EXISTS", "b", "f"},
		{"COMMAND", "GETKEYS", "mset", "b", "1", "f", "2"},
	})
	if o, _ := p.do("INFO", "server"); !strings.Contains(o, "redis_mode:standalone") {
		t.Errorf("INFO server: %q", o)
	}
}

// TestClusterAnnounce checks CL1's address: a node listening on one
// address announces it; one listening on every address announces the
// address each client reached it by (the loopback address to a client
// of the Unix socket, and a script its client's); Options.ClusterAnnounce
// replaces the IP, the port, or both.
func TestClusterAnnounce(t *testing.T) {
	slots := func(r *rawConn) string {
		t.Helper()
		r.cmd("CLUSTER", "SLOTS")
		return r.reply()
	}
	_, sock, port := startClusterServer(t, func(o *Options) { o.TCPAddr = "0.0.0.0:0" })
	for _, host := range []string{"127.0.0.1", "127.0.0.2"} {
		r := dialTCP(t, net.JoinHostPort(host, port), "pw")
		if s := slots(r); !strings.HasPrefix(s, "*[*[:0 :16383 *[$"+host+" :"+port+" $") {
			t.Errorf("listening on 0.0.0.0, reached at %s: CLUSTER SLOTS = %q", host, s)
		}
		r.cmd("CLUSTER", "NODES")
		if s := r.reply(); !strings.Contains(s, " "+host+":"+port+"@0 myself,master ") {
			t.Errorf("reached at %s: CLUSTER NODES = %q", host, s)
		}
		// A script's CLUSTER is told its client's address.
		r.cmd("EVAL", "return redis.call('cluster', 'slots')", "0")
		if s := r.reply(); !strings.HasPrefix(s, "*[*[:0 :16383 *[$"+host+" :"+port+" $") {
			t.Errorf("reached at %s: CLUSTER SLOTS from a script = %q", host, s)
		}
	}
	if s := slots(dialRaw(t, sock)); !strings.HasPrefix(s, "*[*[:0 :16383 *[$127.0.0.1 :"+port+" $") {
		t.Errorf("on the Unix socket: CLUSTER SLOTS = %q", s)
	}
	for _, tc := range []struct{ announce, ip, port string }{
		{"10.9.8.7:7001", "10.9.8.7", "7001"},
		{"10.9.8.7", "10.9.8.7", ""},
		{":7002", "127.0.0.1", "7002"},
		{"::1", "::1", ""},
		{"[fd00::1]:7003", "fd00::1", "7003"},
	} {
		_, sock, port := startClusterServer(t, func(o *Options) { o.ClusterAnnounce = tc.announce })
		if tc.port == "" {
			tc.port = port
		}
		r := dialRaw(t, sock)
		want := "*[*[:0 :16383 *[$" + tc.ip + " :" + tc.port + " $"
		if s := slots(r); !strings.HasPrefix(s, want) {
			t.Errorf("announce %q: CLUSTER SLOTS = %q, want %s...", tc.announce, s, want)
		}
		r.cmd("CLUSTER", "SHARDS")
		if s := r.reply(); !strings.Contains(s, "$port :"+tc.port+" $ip $"+tc.ip+" $endpoint $"+tc.ip+" ") {
			t.Errorf("announce %q: CLUSTER SHARDS = %q", tc.announce, s)
		}
		r.cmd("INFO", "cluster")
		if s := r.reply(); !strings.Contains(s, "cluster_announce_port:"+tc.port+"\r\n") {
			t.Errorf("announce %q: INFO cluster = %q", tc.announce, s)
		}
	}
}

// TestClusterNodeID checks CL1's id: 40 hex digits, the same for a
// server that restarts on the same address, another on another port.
func TestClusterNodeID(t *testing.T) {
	id := func(addr string) string {
		t.Helper()
		s, sock := startServerWith(t, newTierCache(t), func(o *Options) {
			o.Cluster, o.TCPAddr, o.RequirePass = true, addr, "pw"
		})
		defer s.Close()
		return myID(t, dialRaw(t, sock))
	}
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	first := id(addr)
	if again := id(addr); again != first {
		t.Errorf("restarted on %s: id %s, was %s", addr, again, first)
	}
	if other := id("127.0.0.1:" + strconv.Itoa(freePort(t))); other == first {
		t.Errorf("another port, the same id %s", other)
	}
	for _, r := range first {
		if !strings.ContainsRune("0123456789abcdef", r) {
			t.Fatalf("id %q is not lower-case hex", first)
		}
	}
}

// TestClusterOptions checks that cluster mode without a TCP listener, an
// announce address that is no IP or port, and an announce address
// without cluster mode are refused, each saying why.
func TestClusterOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{UnixSocket: "/tmp/x.sock", Cluster: true}, "cluster mode needs a TCP listener"},
		{Options{TCPAddr: "127.0.0.1:0", RequirePass: "pw", Cluster: true, ClusterAnnounce: "cache.local:7000"}, "is not an IP address"},
		{Options{TCPAddr: "127.0.0.1:0", RequirePass: "pw", Cluster: true, ClusterAnnounce: "10.0.0.1:0"}, "is not 1-65535"},
		{Options{TCPAddr: "127.0.0.1:0", RequirePass: "pw", Cluster: true, ClusterAnnounce: "10.0.0.1:x"}, "is not 1-65535"},
		{Options{TCPAddr: "127.0.0.1:0", RequirePass: "pw", ClusterAnnounce: "10.0.0.1"}, "cluster mode is off"},
	} {
		o := tc.o
		o.EnsureDefaults()
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	o := Options{TCPAddr: "127.0.0.1:0", RequirePass: "pw", Cluster: true, ClusterAnnounce: "10.0.0.1:7000"}
	s, err := New(newTierCache(t), o)
	if err != nil {
		t.Fatalf("valid cluster options refused: %v", err)
	}
	defer s.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(l, true); err == nil || !strings.Contains(err.Error(), "cluster mode serves the listeners Start") {
		t.Errorf("Serve in cluster mode: %v", err)
	}
}

// TestCrossSlotCounted checks CL2's counters: each refusal, a command's or
// an EXEC's, counts once in INFO stats crossslot_refusals.
func TestCrossSlotCounted(t *testing.T) {
	s, sock, _ := startClusterServer(t, nil)
	r := dialRaw(t, sock)
	r.expect([]step{
		{[]string{"MGET", "b", "f"}, "-" + errCrossSlot},
		{[]string{"MGET", "b", "{b}x"}, "*[nil nil]"},
		{[]string{"MULTI"}, "+OK"}, {[]string{"SET", "b", "1"}, "+QUEUED"}, {[]string{"SET", "f", "1"}, "+QUEUED"},
		{[]string{"EXEC"}, "-" + errCrossSlot},
		{[]string{"EXISTS", "b", "f"}, "-" + errCrossSlot},
	})
	if n := s.Stats().CrossSlotRefusals; n != 3 {
		t.Errorf("CrossSlotRefusals = %d, want 3", n)
	}
	r.cmd("INFO", "stats")
	if l := lineWith(r.reply(), "crossslot_refusals:"); l != "crossslot_refusals:3" {
		t.Errorf("INFO stats: %q", l)
	}
}

// commandInfoRE reads a rendered COMMAND INFO entry: name, arity, flags,
// first key, last key, step.
var commandInfoRE = regexp.MustCompile(`^\*\[\*\[\$(\S+) :(-?\d+) [*~]\[([^\]]*)\] :(-?\d+) :(-?\d+) :(-?\d+) `)

// TestKeySpecsMatchRedis checks CL4: every command of the table that
// redis-server 7.0 has names its keys where redis-server's COMMAND INFO
// says (first key, last key, step), and has a numkeys argument (keyNum,
// reported as movablekeys) exactly where redis-server's keys move, so
// that the cluster rules (CL2) and the cluster clients that route by
// COMMAND see the keys Redis would.
func TestKeySpecsMatchRedis(t *testing.T) {
	p := newPeerPair(t)
	s, _ := startServerWith(t, newTierCache(t), nil)
	compared := 0
	for name := range s.cmds {
		o, r := p.do("COMMAND", "INFO", name)
		if r == "*[nil]" {
			continue // not a Redis command (TIER)
		}
		om, rm := commandInfoRE.FindStringSubmatch(o), commandInfoRE.FindStringSubmatch(r)
		if om == nil || rm == nil {
			t.Errorf("COMMAND INFO %s: tiercache %q, redis-server %q", name, o, r)
			continue
		}
		compared++
		if strings.Contains(r, "$"+name+"|") {
			// A container (OBJECT): Redis gives the keys of each
			// subcommand, OBJECT's is its third argument, as here.
			continue
		}
		if om[4] != rm[4] || om[5] != rm[5] || om[6] != rm[6] {
			t.Errorf("%s: keys %s %s %s, redis-server's %s %s %s", name, om[4], om[5], om[6], rm[4], rm[5], rm[6])
		}
		if om, rm := strings.Contains(om[3], "movablekeys"), strings.Contains(rm[3], "movablekeys"); om != rm {
			t.Errorf("%s: movablekeys %v, redis-server's %v (set keyNum)", name, om, rm)
		}
	}
	if compared < 90 {
		t.Fatalf("compared %d commands", compared)
	}
}

// TestEachKey checks the key positions CL2 and COMMAND GETKEYS read: a
// range with a step, the last argument counted from the end, and keys
// after a numkeys argument, none for a numkeys out of range (commands of
// issue 32 and 33 have them: EVAL, ZUNIONSTORE).
func TestEachKey(t *testing.T) {
	keys := func(cmd *command, args ...string) string {
		var in [][]byte
		for _, a := range args {
			in = append(in, []byte(a))
		}
		var out []string
		cmd.eachKey(in, func(k []byte) bool { out = append(out, string(k)); return true })
		return strings.Join(out, " ")
	}
	mset := &command{first: 1, last: -1, step: 2}
	blpop := &command{first: 1, last: -2, step: 1}
	eval := &command{keyNum: 2}
	zunionstore := &command{first: 1, last: 1, step: 1, keyNum: 2}
	for _, tc := range []struct {
		cmd  *command
		args []string
		want string
	}{
		{mset, []string{"mset", "a", "1", "b", "2"}, "a b"},
		{mset, []string{"mset", "a", "1", "b"}, "a b"},
		{blpop, []string{"blpop", "a", "b", "0"}, "a b"},
		{eval, []string{"eval", "s", "2", "a", "b", "x"}, "a b"},
		{eval, []string{"eval", "s", "0", "x"}, ""},
		{eval, []string{"eval", "s", "3", "a", "b"}, ""},
		{eval, []string{"eval", "s", "x", "a"}, ""},
		{eval, []string{"eval", "s"}, ""},
		{zunionstore, []string{"zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"}, "d a b"},
		{zunionstore, []string{"zunionstore", "d", "0", "a"}, ""},
	} {
		if got := keys(tc.cmd, tc.args...); got != tc.want {
			t.Errorf("%q: keys %q, want %q", tc.args, got, tc.want)
		}
	}
	if !eval.multiKey() || !mset.multiKey() || (&command{first: 1, last: 1, step: 1}).multiKey() {
		t.Error("multiKey")
	}
}

// TestClusterWhileLoading checks CL1's caveat: while the cache loads the
// topology is served (a cluster client connects), COUNTKEYSINSLOT and
// GETKEYSINSLOT answer -LOADING, and CROSSSLOT comes before -LOADING, as
// Redis checks the cluster before loading; once loaded they count keys.
func TestClusterWhileLoading(t *testing.T) {
	o := Options{UnixSocket: shortSocket(t), ShutdownTimeout: 2 * time.Second, Cluster: true, TCPAddr: "127.0.0.1:0", RequirePass: "pw"}
	s, err := NewLoading(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	startClosed(t, s)
	const loading = "-" + errLoading
	c := dialRaw(t, o.UnixSocket)
	c.expect([]step{
		{[]string{"CLUSTER", "INFO"}, "$cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:1\r\ncluster_size:1\r\ncluster_current_epoch:0\r\ncluster_my_epoch:0\r\ncluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\ntotal_cluster_links_buffer_limit_exceeded:0\r\n"},
		{[]string{"CLUSTER", "KEYSLOT", "foo"}, ":12182"},
		{[]string{"READONLY"}, "+OK"},
		{[]string{"CLUSTER", "COUNTKEYSINSLOT", "1"}, loading},
		{[]string{"CLUSTER", "GETKEYSINSLOT", "1", "1"}, loading},
		{[]string{"MGET", "b", "f"}, "-" + errCrossSlot},
		{[]string{"MGET", "b", "{b}x"}, loading},
	})
	if err := s.Loaded(newTierCache(t)); err != nil {
		t.Fatal(err)
	}
	c.expect([]step{
		{[]string{"SET", "{b}x", "1"}, "+OK"},
		{[]string{"CLUSTER", "COUNTKEYSINSLOT", "3300"}, ":1"},
		{[]string{"CLUSTER", "GETKEYSINSLOT", "3300", "5"}, "*[${b}x]"},
		{[]string{"MSET", "{b}y", "2", "{b}z", "3", "b", "4"}, "+OK"},
		{[]string{"CLUSTER", "COUNTKEYSINSLOT", "3300"}, ":4"},
	})
	c.cmd("CLUSTER", "GETKEYSINSLOT", "3300", "2")
	if r := c.reply(); strings.Count(r, "$") != 2 {
		t.Errorf("GETKEYSINSLOT 3300 2 of 4 keys: %q", r)
	}
}
