package server

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestClientListKillErrorsMatchRedis: CLIENT LIST's, KILL's and NO-EVICT's
// refusals are redis-server's byte for byte, and those matching no
// connection answer as it does, in RESP2 and RESP3 (S54).
func TestClientListKillErrorsMatchRedis(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) { clientListKillMatchRedis(t, proto) })
	}
}

func clientListKillMatchRedis(t *testing.T, proto string) {
	p := newPeerPair(t)
	p.do("HELLO", proto) // the servers' own names and versions differ
	p.same([][]string{
		{"CLIENT", "LIST", "TYPE", "foo"}, {"CLIENT", "LIST", "ID", "x"}, {"CLIENT", "LIST", "FOO"},
		{"CLIENT", "LIST", "TYPE", "normal", "ID", "1"}, {"CLIENT", "LIST", "ID", "99999"}, {"CLIENT", "LIST", "TYPE", "master"},
		{"CLIENT", "KILL", "1.2.3.4:5"}, {"CLIENT", "KILL", "ID", "x"}, {"CLIENT", "KILL", "ID", "0"},
		{"CLIENT", "KILL", "ID", "99999"}, {"CLIENT", "KILL", "TYPE", "foo"}, {"CLIENT", "KILL", "USER", "nobody"},
		{"CLIENT", "KILL", "SKIPME", "maybe"}, {"CLIENT", "KILL", "ID"}, {"CLIENT", "KILL", "MAXAGE", "x"},
		{"CLIENT", "KILL", "FOO", "bar"}, {"CLIENT", "KILL", "ADDR", "x", "LADDR", "y"}, {"CLIENT", "KILL", "TYPE", "replica"},
		{"CLIENT", "NO-EVICT", "on"}, {"CLIENT", "NO-EVICT", "off"}, {"CLIENT", "NO-EVICT", "maybe"}, {"CLIENT", "NO-EVICT"},
		// Arguments are checked in order, a pair at a time; KILL without
		// one is refused (it killed every other client).
		{"CLIENT", "KILL"}, {"CLIENT", "KILL", "ID", "x", "TYPE"}, {"CLIENT", "KILL", "TYPE", "normal", "ID"},
		{"CLIENT", "KILL", "SKIPME", "maybe", "ID"}, {"CLIENT", "KILL", "USER", "nobody", "TYPE"},
		// LIST ID takes any integer; one no connection has matches nothing.
		{"CLIENT", "LIST", "ID", "0"}, {"CLIENT", "LIST", "ID", "-1"}, {"CLIENT", "LIST", "ID", "0", "x"},
	})
}

// clientLines are CLIENT LIST's lines (the rendered verbatim string), by
// id, each as its fields.
func clientLines(t *testing.T, reply string) map[int64]map[string]string {
	t.Helper()
	body := strings.TrimPrefix(reply, "=txt:")
	body = strings.TrimPrefix(body, "$")
	out := map[int64]map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if line == "" {
			continue
		}
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		id, err := strconv.ParseInt(f["id"], 10, 64)
		if err != nil {
			t.Fatalf("CLIENT LIST line without an id: %q", line)
		}
		out[id] = f
	}
	return out
}

// clientIDs are the ids of CLIENT LIST's lines, in order.
func clientIDs(t *testing.T, reply string) []int64 {
	t.Helper()
	var ids []int64
	for _, line := range strings.Split(strings.TrimSpace(strings.TrimPrefix(reply, "$")), "\n") {
		id, ok := strings.CutPrefix(strings.Fields(line)[0], "id=")
		n, err := strconv.ParseInt(id, 10, 64)
		if !ok || err != nil {
			t.Fatalf("CLIENT LIST line without an id: %q", line)
		}
		ids = append(ids, n)
	}
	return ids
}

func clientID(t *testing.T, c *rawConn) int64 {
	t.Helper()
	c.cmd("CLIENT", "ID")
	id, err := strconv.ParseInt(strings.TrimPrefix(c.reply(), ":"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestClientListAndKill checks S54: CLIENT LIST has a line for each open
// connection with what it set (SETNAME, SETINFO, HELLO's protocol), TYPE
// and ID select, and read from other connections while they change it
// (run under -race); CLIENT KILL closes the connections its filters
// select (not the caller unless SKIPME no, which gets its reply first),
// ends a blocked BLPOP with nothing lost, and the old addr form answers
// +OK.
func TestClientListAndKill(t *testing.T) {
	_, path := startServer(t, nil)
	a, b, sub := dialRaw(t, path), dialRaw(t, path), dialRaw(t, path)
	ida, idb, idsub := clientID(t, a), clientID(t, b), clientID(t, sub)
	b.expect([]step{
		{[]string{"CLIENT", "SETNAME", "worker-b"}, "+OK"},
		{[]string{"CLIENT", "SETINFO", "LIB-NAME", "redis-py"}, "+OK"},
	})
	b.cmd("HELLO", "3")
	b.reply()
	sub.cmd("SUBSCRIBE", "ch")
	sub.reply()

	a.cmd("CLIENT", "LIST")
	all := clientLines(t, a.reply())
	if len(all) != 3 || all[idb]["name"] != "worker-b" || all[idb]["lib-name"] != "redis-py" || all[idb]["resp"] != "3" ||
		all[ida]["name"] != "" || all[ida]["resp"] != "2" || !strings.Contains(all[idsub]["flags"], "P") {
		t.Fatalf("CLIENT LIST: %v", all)
	}
	a.cmd("CLIENT", "LIST", "TYPE", "pubsub")
	if got := clientLines(t, a.reply()); len(got) != 1 || got[idsub] == nil {
		t.Errorf("CLIENT LIST TYPE pubsub: %v", got)
	}
	a.cmd("CLIENT", "LIST", "ID", fmt.Sprint(ida), fmt.Sprint(idb), "999999")
	if got := clientLines(t, a.reply()); len(got) != 2 || got[ida] == nil || got[idb] == nil {
		t.Errorf("CLIENT LIST ID: %v", got)
	}
	// CLIENT KILL with no filter is refused; it killed every other client.
	a.cmd("CLIENT", "KILL")
	if got := a.reply(); got != "-ERR wrong number of arguments for 'client|kill' command" {
		t.Errorf("CLIENT KILL: %q", got)
	}
	b.expect([]step{{[]string{"PING"}, "+PONG"}})
	// As Redis: a line per ID given, in their order.
	a.cmd("CLIENT", "LIST", "ID", fmt.Sprint(idb), fmt.Sprint(ida), fmt.Sprint(idb))
	if got, want := clientIDs(t, a.reply()), []int64{idb, ida, idb}; !slices.Equal(got, want) {
		t.Errorf("CLIENT LIST ID %d %d %d: lines of %v", idb, ida, idb, got)
	}

	// Names change while another connection lists them.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			b.cmd("CLIENT", "SETNAME", fmt.Sprintf("n%d", i))
			b.reply()
		}
	}()
	for i := 0; i < 50; i++ {
		a.cmd("CLIENT", "LIST")
		a.reply()
	}
	wg.Wait()

	// A blocked BLPOP is killed; the element pushed after stays.
	b.cmd("BLPOP", "q", "0")
	a.cmd("CLIENT", "KILL", "ID", fmt.Sprint(idb))
	if got := a.reply(); got != ":1" {
		t.Fatalf("CLIENT KILL ID of a blocked client: %q", got)
	}
	b.expectClosed()
	a.expect([]step{
		{[]string{"RPUSH", "q", "x"}, ":1"},
		{[]string{"LRANGE", "q", "0", "-1"}, "*[$x]"},
		{[]string{"CLIENT", "KILL", "TYPE", "normal"}, ":0"}, // SKIPME yes: not a itself
	})
	addr := clientLines(t, func() string { a.cmd("CLIENT", "INFO"); return a.reply() }())[ida]["addr"]
	if addr == "" {
		t.Fatal("CLIENT INFO without an addr")
	}
	a.cmd("CLIENT", "KILL", "TYPE", "pubsub")
	if got := a.reply(); got != ":1" {
		t.Fatalf("CLIENT KILL TYPE pubsub: %q", got)
	}
	sub.expectClosed()
	a.cmd("CLIENT", "KILL", "SKIPME", "no")
	if got := a.reply(); got != ":1" {
		t.Fatalf("CLIENT KILL SKIPME no: %q", got)
	}
	a.expectClosed()

	c := dialRaw(t, path)
	c.cmd("CLIENT", "KILL", addr) // the old form: every Unix socket client has the listener's path
	if got := c.reply(); got != "+OK" {
		t.Errorf("CLIENT KILL %s: %q", addr, got)
	}
	c.expectClosed()
}

// TestClientKillEndsPipeline checks S54: once CLIENT KILL answered, the
// client it killed runs nothing more. Its command then running finishes
// (here a script; in Redis a KILL cannot land inside one), but the SET it
// pipelined behind it never runs, and a second KILL finds it gone (:0),
// as in Redis, where the killed client is freed at once.
func TestClientKillEndsPipeline(t *testing.T) {
	srv, path := startServer(t, nil)
	a, b := dialRaw(t, path), dialRaw(t, path)
	idb := clientID(t, b)
	const busy = "local s = redis.call('TIME') repeat local n = redis.call('TIME') until (n[1]-s[1])*1000000 + (n[2]-s[2]) > 300000 return 1"
	b.send(fmt.Sprintf("*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$5\r\nafter\r\n$1\r\n1\r\n", len(busy), busy))
	deadline := time.Now().Add(10 * time.Second)
	for srv.scr.cur.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the script never started")
		}
		time.Sleep(time.Millisecond)
	}
	a.expect([]step{
		{[]string{"CLIENT", "KILL", "ID", fmt.Sprint(idb)}, ":1"},
		{[]string{"CLIENT", "KILL", "ID", fmt.Sprint(idb)}, ":0"},
		{[]string{"CLIENT", "LIST", "ID", fmt.Sprint(idb)}, "$"},
	})
	b.expectClosed()
	for srv.stats.connsOpen.Load() > 1 { // b's goroutine has ended: whatever it would run, it ran
		if time.Now().After(deadline) {
			t.Fatal("the killed connection did not end")
		}
		time.Sleep(time.Millisecond)
	}
	a.expect([]step{{[]string{"EXISTS", "after"}, ":0"}})
}

// TestClientInfoFieldsMatchRedis checks S54's line: CLIENT INFO and
// CLIENT LIST have redis-server 7.0's fields in its order (then 7.2's
// lib-name and lib-ver), each integer one an integer (redis-py's
// client_info reads qbuf, idle, sub... and fails without them), and what
// other connections see of a client is what it did: its subscriptions,
// the commands it queued in MULTI, a blocked command, tracking and its
// redirect, NO-EVICT.
func TestClientInfoFieldsMatchRedis(t *testing.T) {
	p := newPeerPair(t)
	keys := func(reply string) []string {
		var ks []string
		for _, kv := range strings.Fields(strings.TrimPrefix(reply, "$")) {
			k, _, _ := strings.Cut(kv, "=")
			ks = append(ks, k)
		}
		return ks
	}
	for _, args := range [][]string{{"CLIENT", "INFO"}, {"CLIENT", "LIST"}} {
		ours, peer := p.do(args...)
		if got, want := keys(ours), append(keys(peer), "lib-name", "lib-ver"); !slices.Equal(got, want) {
			t.Errorf("%v: fields %v, redis-server 7.0's %v", args, got, want)
		}
		line := clientLines(t, ours)
		for _, f := range line {
			for _, k := range []string{"id", "age", "idle", "db", "sub", "psub", "multi", "qbuf", "qbuf-free", "obl", "argv-mem", "oll", "omem", "tot-mem"} {
				if _, err := strconv.Atoi(f[k]); err != nil {
					t.Errorf("%v: %s=%q is no integer", args, k, f[k])
				}
			}
			if f["cmd"] != strings.ToLower(strings.Join(args, "|")) {
				t.Errorf("%v: cmd=%s", args, f["cmd"])
			}
		}
	}

	_, path := startServer(t, nil)
	a, sub, tx, blk, cfg := dialRaw(t, path), dialRaw(t, path), dialRaw(t, path), dialRaw(t, path), dialRaw(t, path)
	idcfg := clientID(t, cfg)
	cfg.cmd("CONFIG", "GET", "maxmemory")
	cfg.reply()
	ida := clientID(t, a)
	sub.expect([]step{{[]string{"CLIENT", "NO-EVICT", "on"}, "+OK"}})
	sub.cmd("SUBSCRIBE", "c1", "c2")
	sub.reply()
	sub.reply()
	sub.cmd("PSUBSCRIBE", "p*")
	sub.reply()
	tx.expect([]step{
		{[]string{"CLIENT", "TRACKING", "on", "REDIRECT", fmt.Sprint(ida)}, "+OK"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"SET", "k", "v"}, "+QUEUED"},
		{[]string{"GET", "k"}, "+QUEUED"},
	})
	idsub, idtx, idblk := clientID(t, a)+1, int64(0), clientID(t, blk)
	blk.cmd("BLPOP", "q", "0")
	var all map[int64]map[string]string
	deadline := time.Now().Add(10 * time.Second)
	for { // BLPOP shows once the command blocked
		a.cmd("CLIENT", "LIST")
		all = clientLines(t, a.reply())
		if all[idblk]["cmd"] == "blpop" || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for id, f := range all {
		switch {
		case f["sub"] == "2":
			idsub = id
		case f["multi"] == "2":
			idtx = id
		}
	}
	if f := all[idsub]; f["psub"] != "1" || f["flags"] != "PUe" || f["cmd"] != "psubscribe" {
		t.Errorf("the subscriber's line: %v", f)
	}
	if f := all[idtx]; f["flags"] != "xtU" || f["redir"] != fmt.Sprint(ida) || f["cmd"] != "get" {
		t.Errorf("the line of the client in MULTI, tracking: %v", f)
	}
	if f := all[idblk]; f["flags"] != "bU" || f["multi"] != "-1" || f["redir"] != "-1" {
		t.Errorf("the blocked client's line: %v", f)
	}
	if f := all[idcfg]; f["cmd"] != "config|get" { // Redis's lastcmd: the subcommand
		t.Errorf("the line of a client that ran CONFIG GET: %v", f)
	}
	if f := all[ida]; f["flags"] != "U" || f["cmd"] != "client|list" || f["sub"] != "0" {
		t.Errorf("the caller's line: %v", f)
	}
	// idle: the seconds since the client's latest command was read.
	time.Sleep(1100 * time.Millisecond)
	a.cmd("CLIENT", "LIST")
	all = clientLines(t, a.reply())
	if all[idblk]["idle"] == "0" || all[ida]["idle"] != "0" {
		t.Errorf("idle after 1.1 s: blocked client %s, caller %s", all[idblk]["idle"], all[ida]["idle"])
	}
}

// TestClientKillWhileWaitingForLock checks S54 for commands a killed
// client had started but that wait for the transaction lock (another
// client's script holds it): a SET, an EXEC and an EVAL. None of them
// runs after CLIENT KILL answered, though the killed clients sent them
// before it.
func TestClientKillWhileWaitingForLock(t *testing.T) {
	srv, path := startServer(t, nil)
	a, killer := dialRaw(t, path), dialRaw(t, path)
	waiters := []*rawConn{dialRaw(t, path), dialRaw(t, path), dialRaw(t, path)}
	var ids []string
	for _, w := range waiters {
		ids = append(ids, fmt.Sprint(clientID(t, w)))
	}
	const busy = "local s = redis.call('TIME') repeat local n = redis.call('TIME') until (n[1]-s[1])*1000000 + (n[2]-s[2]) > 400000 return 1"
	a.cmd("EVAL", busy, "0")
	deadline := time.Now().Add(10 * time.Second)
	for srv.scr.cur.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the script never started")
		}
		time.Sleep(time.Millisecond)
	}
	waiters[0].cmd("SET", "set", "1")
	waiters[1].expect([]step{{[]string{"MULTI"}, "+OK"}, {[]string{"SET", "exec", "1"}, "+QUEUED"}})
	waiters[1].cmd("EXEC")
	waiters[2].cmd("EVAL", "redis.call('SET', 'eval', '1')", "0")
	time.Sleep(100 * time.Millisecond) // they reach the lock and wait (were they not there yet, the check before dispatch stops them)
	for _, id := range ids {
		killer.expect([]step{{[]string{"CLIENT", "KILL", "ID", id}, ":1"}})
	}
	if got := a.reply(); got != ":1" {
		t.Fatalf("the script: %q", got)
	}
	for srv.stats.connsOpen.Load() > 2 {
		if time.Now().After(deadline) {
			t.Fatal("the killed connections did not end")
		}
		time.Sleep(time.Millisecond)
	}
	a.expect([]step{{[]string{"EXISTS", "set", "exec", "eval"}, ":0"}})
}

// TestKilledClientPopsNothing (S54): a killed client's blocking pop whose
// goroutine lagged past its check before the command (here: run on the
// killed connection after its goroutine ended) serves nothing, not even an
// element pushed after the KILL answered, and registers no waiter; before,
// it popped the element and lost it with the closed connection (seen once
// in CI as TestClientListAndKill's "LRANGE q" reading empty).
func TestKilledClientPopsNothing(t *testing.T) {
	s, path := startServer(t, nil)
	a, b := dialRaw(t, path), dialRaw(t, path)
	idb := clientID(t, b)
	o := s.connByID(idb)
	a.cmd("CLIENT", "KILL", "ID", fmt.Sprint(idb))
	if got := a.reply(); got != ":1" {
		t.Fatalf("CLIENT KILL ID: %q", got)
	}
	b.expectClosed()
	for s.connByID(idb) != nil { // its goroutine has ended (untrack is its last step)
		time.Sleep(time.Millisecond)
	}
	a.expect([]step{{[]string{"RPUSH", "q", "x"}, ":1"}})
	w := &waiter{left: true, ch: make(chan blockResult, 1)}
	if out, _ := o.serveOrRegister(blockCmd{keys: [][]byte{[]byte("q")}, left: true}, w); out != blockNil {
		t.Errorf("the killed client's BLPOP: outcome %d, want blockNil (%d)", out, blockNil)
	}
	if n := s.blk.waiting.Load(); n != 0 {
		t.Errorf("%d waiters registered", n)
	}
	a.expect([]step{{[]string{"LRANGE", "q", "0", "-1"}, "*[$x]"}})
}
