package server

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clientMeta is what a client said of itself (CLIENT SETNAME, SETINFO,
// HELLO): a connection replaces it whole (setMeta), so that other
// connections' CLIENT LIST reads it without a lock.
type clientMeta struct {
	name, libName, libVer string
	proto                 int
	noEvict               bool // CLIENT NO-EVICT on: the e flag
}

// setMeta replaces c's clientMeta with a copy that change altered; only
// c's goroutine calls it.
func (c *conn) setMeta(change func(m *clientMeta)) {
	m := *c.meta.Load()
	change(&m)
	c.meta.Store(&m)
}

// clientAddr is an address as CLIENT LIST gives it: host:port, or for a
// Unix socket its path (local: the listener's, which both ends report in
// Redis) and port 0.
func clientAddr(a, local net.Addr) string {
	if _, ok := a.(*net.UnixAddr); ok {
		return local.String() + ":0"
	}
	return a.String()
}

// clientFilter is what CLIENT LIST and CLIENT KILL select connections by.
type clientFilter struct {
	ids         []int64
	typ         string // "", "normal" or "pubsub"
	addr, laddr string
	skip        *conn // SKIPME yes: the caller
	maxAge      time.Duration
}

func (f *clientFilter) matches(c *conn) bool {
	if c.isKilled() { // gone already, as a client Redis killed is
		return false
	}
	if len(f.ids) > 0 && !slices.Contains(f.ids, c.id) {
		return false
	}
	switch f.typ {
	case "normal":
		if c.subs.Load() > 0 {
			return false
		}
	case "pubsub":
		if c.subs.Load() == 0 {
			return false
		}
	}
	if f.addr != "" && clientAddr(c.nc.RemoteAddr(), c.nc.LocalAddr()) != f.addr {
		return false
	}
	if f.laddr != "" && clientAddr(c.nc.LocalAddr(), c.nc.LocalAddr()) != f.laddr {
		return false
	}
	if f.maxAge > 0 && time.Since(c.created) < f.maxAge {
		return false
	}
	return c != f.skip
}

// clientType checks a TYPE argument: master, replica and slave are
// Redis's types no connection here has.
func clientType(b []byte) (string, bool) {
	t := strings.ToLower(string(b))
	switch t {
	case "normal", "pubsub", "master", "replica", "slave":
		return t, true
	}
	return "", false
}

// clients are the server's connections that f selects, in id order.
func (s *Server) clients(f *clientFilter) []*conn {
	s.mu.Lock()
	var cs []*conn
	for c := range s.conns {
		if f.matches(c) {
			cs = append(cs, c)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(cs, func(a, b *conn) int { return int(a.id - b.id) })
	return cs
}

// clientList: CLIENT LIST [TYPE normal|master|replica|pubsub] | [ID id
// [id ...]], one filter as in Redis 7.0: a line a connection (describe).
func (c *conn) clientList(args [][]byte) {
	f := clientFilter{}
	switch {
	case len(args) == 2:
	case len(args) == 4 && strings.EqualFold(string(args[2]), "type"):
		t, ok := clientType(args[3])
		if !ok {
			c.w.Error(errUnknownClientType(args[3]))
			return
		}
		f.typ = t
	case len(args) > 3 && strings.EqualFold(string(args[2]), "id"):
		c.clientListIDs(args[3:])
		return
	default:
		c.w.Error(errSyntax)
		return
	}
	var b strings.Builder
	if f.typ != "master" && f.typ != "replica" && f.typ != "slave" {
		for _, o := range c.s.clients(&f) {
			b.WriteString(o.describe(c.cmdOf(o)))
			b.WriteByte('\n')
		}
	}
	c.w.Verbatim("txt", b.String())
}

// cmdOf is the cmd field of o's line in c's CLIENT LIST: c's own command
// is CLIENT LIST; "" for another connection (describe: its last command).
func (c *conn) cmdOf(o *conn) string {
	if o == c {
		return "client|list"
	}
	return ""
}

// clientListIDs: CLIENT LIST ID id [id ...], as Redis answers it: any
// integer is an ID (one no connection has matches nothing), and there is
// a line per ID given that a connection has, in their order.
func (c *conn) clientListIDs(args [][]byte) {
	ids := make([]int64, len(args))
	for i, a := range args {
		id, ok := parseInt(a)
		if !ok {
			c.w.Error(errInvalidClientID)
			return
		}
		ids[i] = id
	}
	byID := map[int64]*conn{}
	for _, o := range c.s.clients(&clientFilter{ids: ids}) {
		byID[o.id] = o
	}
	var b strings.Builder
	for _, id := range ids {
		if o := byID[id]; o != nil {
			b.WriteString(o.describe(c.cmdOf(o)))
			b.WriteByte('\n')
		}
	}
	c.w.Verbatim("txt", b.String())
}

// clientKill: CLIENT KILL addr:port (+OK, or an error if no connection
// has it), or CLIENT KILL with filters (ID, TYPE, USER, ADDR, LADDR,
// SKIPME, MAXAGE; every one must match; SKIPME yes by default): the count
// killed. A killed connection is closed at once; the caller, if it killed
// itself, after this reply.
func (c *conn) clientKill(args [][]byte) {
	if len(args) == 3 {
		f := clientFilter{addr: string(args[2])}
		cs := c.s.clients(&f)
		if len(cs) == 0 {
			c.w.Error(errNoSuchClient)
			return
		}
		c.w.OK()
		c.killAll(cs)
		return
	}
	if len(args) < 3 {
		c.wrongArgs("client|kill")
		return
	}
	f := clientFilter{skip: c}
	for i := 2; i < len(args); i += 2 {
		if i+1 == len(args) { // a filter without its value: as Redis, once the pairs before it are checked
			c.w.Error(errSyntax)
			return
		}
		v := args[i+1]
		switch strings.ToLower(string(args[i])) {
		case "id":
			id, ok := parseInt(v)
			if !ok || id <= 0 {
				c.w.Error(errClientIDPositive)
				return
			}
			f.ids = append(f.ids[:0], id)
		case "type":
			t, ok := clientType(v)
			if !ok {
				c.w.Error(errUnknownClientType(v))
				return
			}
			f.typ = t
		case "user":
			if string(v) != "default" {
				c.w.Error(errNoSuchUser(v))
				return
			}
		case "addr":
			f.addr = string(v)
		case "laddr":
			f.laddr = string(v)
		case "skipme":
			switch strings.ToLower(string(v)) {
			case "yes":
				f.skip = c
			case "no":
				f.skip = nil
			default:
				c.w.Error(errSyntax)
				return
			}
		case "maxage":
			n, ok := parseInt(v)
			if !ok {
				c.w.Error(errSyntax)
				return
			}
			f.maxAge = time.Duration(n) * time.Second
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	var cs []*conn
	if f.typ != "master" && f.typ != "replica" && f.typ != "slave" {
		cs = c.s.clients(&f)
	}
	c.w.Int(int64(len(cs)))
	c.killAll(cs)
}

// killAll kills cs; c itself, if among them, quits after its reply.
func (c *conn) killAll(cs []*conn) {
	for _, o := range cs {
		if o == c {
			c.quit = true
			continue
		}
		o.kill()
	}
}

// kill ends c from another connection (CLIENT KILL): its socket is closed,
// so a read or write it is in fails and it ends, killed wakes a blocked
// command, and a waiter it registered is taken out at once, so that no
// push after CLIENT KILL answered serves it.
func (c *conn) kill() {
	c.killOnce.Do(func() {
		close(c.killed)
		c.nc.Close()
		c.s.blk.killWaiter(c)
	})
}

// isKilled reports whether CLIENT KILL killed c.
func (c *conn) isKilled() bool {
	select {
	case <-c.killed:
		return true
	default:
		return false
	}
}

// clientNoEvict: CLIENT NO-EVICT on|off. Redis evicts clients only past
// maxmemory-clients; tiercache evicts none, so either answer is true; the
// line in CLIENT LIST shows it (e) as Redis's does.
func (c *conn) clientNoEvict(args [][]byte) {
	if len(args) != 3 {
		c.wrongArgs("client|no-evict")
		return
	}
	switch strings.ToLower(string(args[2])) {
	case "on":
		c.setMeta(func(m *clientMeta) { m.noEvict = true })
		c.w.OK()
	case "off":
		c.setMeta(func(m *clientMeta) { m.noEvict = false })
		c.w.OK()
	default:
		c.w.Error(errSyntax)
	}
}

// describe is the CLIENT INFO and CLIENT LIST line: redis-server 7.0's
// fields in its order (clients parse them: redis-py's client_info wants
// every integer one), then 7.2's lib-name and lib-ver. cmd is the command
// that lists c when c itself runs it, else "": then c's last command
// before it last waited for input or blocked (lastCmd; a container's
// subcommand, as "config|get"); idle counts from the read of its latest
// command. Other connections call it: it reads only what c never changes, atomics, and c's tracking under the tracker's lock. The
// memory fields are 0 but for omem and tot-mem, c's unsent replies
// (outConn, S12): tiercache's buffers are not tracked per client.
func (c *conn) describe(cmd string) string {
	m := c.meta.Load()
	var redir int64 = -1
	var tracking, broken, bcast bool
	c.s.trk.mu.Lock()
	if st := c.trk; st != nil && st.on {
		redir, tracking, broken, bcast = st.redirect, true, st.broken, st.bcast
	}
	c.s.trk.mu.Unlock()
	var sub, psub, ssub int
	if c.subs.Load() > 0 {
		own := c.s.ps.Of(c.push)
		sub, psub, ssub = len(own.Channels), len(own.Patterns), len(own.Shards)
	}
	multi := c.multi.Load()
	flags := "" // Redis's letters, in its order
	for _, f := range []struct {
		on bool
		l  string
	}{{c.monitoring.Load(), "O"}, {sub+psub+ssub > 0, "P"}, {multi >= 0, "x"}, {c.blockedNow.Load(), "b"}, {tracking, "t"}, {broken, "R"},
		{bcast, "B"}, {c.isUnix(), "U"}, {m.noEvict, "e"}} {
		if f.on {
			flags += f.l
		}
	}
	if flags == "" {
		flags = "N"
	}
	if cmd == "" {
		cmd = "NULL" // as Redis, before any command
		if lc := c.lastCmd.Load(); lc != nil {
			cmd = lc.name
		}
	}
	var omem int64
	events := "r"
	if c.out != nil {
		if omem = c.out.unsent.Load(); omem > 0 {
			events = "rw"
		}
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	return "id=" + itoa(c.id) + " addr=" + clientAddr(c.nc.RemoteAddr(), c.nc.LocalAddr()) +
		" laddr=" + clientAddr(c.nc.LocalAddr(), c.nc.LocalAddr()) + " fd=" + itoa(int64(c.fd)) +
		" name=" + m.name + " age=" + itoa(int64(time.Since(c.created)/time.Second)) +
		" idle=" + itoa((int64(c.s.clock())-c.lastIO.Load())/int64(time.Second)) + " flags=" + flags + " db=0" +
		" sub=" + itoa(int64(sub)) + " psub=" + itoa(int64(psub)) + " ssub=" + itoa(int64(ssub)) + " multi=" + itoa(int64(multi)) +
		" qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=" + itoa(omem) +
		" tot-mem=" + itoa(omem) + " events=" + events + " cmd=" + cmd + " user=default redir=" + itoa(redir) +
		" resp=" + strconv.Itoa(m.proto) + " lib-name=" + m.libName + " lib-ver=" + m.libVer
}

// fdOf is nc's file descriptor, -1 if it has none (a net.Pipe in tests).
func fdOf(nc net.Conn) int {
	fd := -1
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			rc.Control(func(f uintptr) { fd = int(f) })
		}
	}
	return fd
}

// isUnix reports whether c came through a Unix socket.
func (c *conn) isUnix() bool {
	_, ok := c.nc.LocalAddr().(*net.UnixAddr)
	return ok
}

// showRead records, for CLIENT LIST's idle, when c read the command it
// is about to run: the clock is read once per read from the socket, not
// per command, and run's timing starts from the same reading (readAt).
func (c *conn) showRead() {
	if r := c.rd.Reads(); r != c.ioReads {
		c.ioReads = r
		c.readAt = c.s.clock()
		c.lastIO.Store(int64(c.readAt))
	}
}

// showIdle records, for CLIENT LIST, c's last command once c has answered
// what it read (it waits for input or blocks).
func (c *conn) showIdle() {
	switch {
	case c.sub != nil:
		c.lastCmd.Store(c.sub) // Redis's lastcmd is the subcommand: config|get
	case c.cmd != nil:
		c.lastCmd.Store(c.cmd)
	}
}

// showMulti records, for CLIENT LIST, the commands c has queued in MULTI,
// -1 outside MULTI.
func (c *conn) showMulti() {
	if c.tx.active {
		c.multi.Store(int32(len(c.tx.cmds)))
	} else {
		c.multi.Store(-1)
	}
}
