package server

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MONITOR, as redis-server 7.0's (replication.c replicationFeedMonitors,
// server.c call): a monitor receives, as a status line, every command a
// client ran: "+<unix seconds>.<µs> [0 <address>] "arg" ...", the
// arguments quoted as sdscatrepr quotes them, a Unix socket's client
// shown as "unix:<socket path>", a script's commands as "lua". A command
// is shown once it ran (an error it answered included), EVAL and the
// other skip_monitor commands before they run; commands refused before
// running (unknown, wrong arity, queued in MULTI) and Redis's admin
// commands are not shown; AUTH's and HELLO's passwords read "(redacted)"
// (redactedArgs). The lines go through the monitor's push queue
// (pushes.go): no client waits for a monitor, and one that does not read
// is closed at MaxOutputBytes (S60).

// monitors are the connections in MONITOR mode: a list replaced whole
// under mu, read with one atomic load per command (nil: none).
type monitors struct {
	mu   sync.Mutex
	list atomic.Pointer[[]*conn]
}

func (m *monitors) add(c *conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var l []*conn
	if p := m.list.Load(); p != nil {
		l = slices.Clone(*p)
	}
	l = append(l, c)
	m.list.Store(&l)
}

func (m *monitors) remove(c *conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.list.Load()
	if p == nil {
		return
	}
	l := slices.DeleteFunc(slices.Clone(*p), func(o *conn) bool { return o == c })
	if len(l) == 0 {
		m.list.Store(nil)
		return
	}
	m.list.Store(&l)
}

// cmdMonitor: MONITOR. Inside EXEC it answers Redis's refusal (MULTI
// queues it, as Redis does); a second MONITOR answers nothing, as Redis
// ignores it.
func (c *conn) cmdMonitor(args [][]byte) {
	switch {
	case c.inExec:
		c.w.Error(errMonitorInExec)
	case c.monitoring.Load():
	default:
		c.monitoring.Store(true)
		c.w.OK()
		c.s.mon.add(c)
	}
}

// leaveMonitor ends MONITOR mode as c closes.
func (c *conn) leaveMonitor() {
	if c.monitoring.Load() {
		c.s.mon.remove(c)
	}
}

// execMonitored runs cmd and shows it to the monitors: before it runs for
// Redis's skip_monitor commands (EVAL...), else once it ran. conn.run
// calls it when the monitors' list is not nil (one atomic load), else
// runs cmd itself.
func (c *conn) execMonitored(cmd *command, args [][]byte) {
	if cmd.monitorFirst {
		c.feedMonitors(cmd, args)
		cmd.run(c, args)
		return
	}
	cmd.run(c, args)
	c.feedMonitors(cmd, args)
}

// feedMonitors sends every monitor the line of cmd run with args, unless
// Redis shows no such command (admin ones: monitorHides).
func (c *conn) feedMonitors(cmd *command, args [][]byte) {
	p := c.s.mon.list.Load()
	if p == nil || c.refused || cmd.monitorHides(args) {
		return
	}
	line := c.monitorLine(cmd, args)
	for _, m := range *p {
		if !m.push.deliver(line, 0) { // '+' in RESP3 too, as Redis sends it
			c.s.mon.remove(m) // past its output limit: closed, counted (deliver)
		}
	}
	c.monLine = line[:0]
}

// monitorLine is the line a monitor receives for args, in c.monLine's
// buffer: Redis's "+%ld.%06ld [%d %s] " then each argument by
// sdscatrepr, space separated, then CRLF.
func (c *conn) monitorLine(cmd *command, args [][]byte) []byte {
	now := time.Now()
	b := append(c.monLine[:0], '+')
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := strconv.Itoa(now.Nanosecond() / 1000)
	b = append(b, "000000"[len(us):]...)
	b = append(b, us...)
	b = append(b, " [0 "...)
	switch {
	case c.scriptOf != nil:
		b = append(b, "lua"...)
	case isUnixAddr(c.nc.LocalAddr()):
		b = append(b, "unix:"...)
		b = append(b, c.nc.LocalAddr().String()...)
	default:
		b = append(b, c.nc.RemoteAddr().String()...)
	}
	b = append(b, "] "...)
	red := redactedArgs(cmd, args)
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		if red(i) {
			a = []byte(redactedText)
		}
		b = appendRepr(b, a)
	}
	return append(b, "\r\n"...)
}

func isUnixAddr(a net.Addr) bool {
	_, ok := a.(*net.UnixAddr)
	return ok
}

// appendRepr appends s quoted as Redis's sdscatrepr quotes it: \\ \"
// \n \r \t \a \b escaped, printable ASCII as it is, any other byte as
// \x followed by two lower-case hex digits.
func appendRepr(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range s {
		switch ch {
		case '\\', '"':
			b = append(b, '\\', ch)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\a':
			b = append(b, `\a`...)
		case '\b':
			b = append(b, `\b`...)
		default:
			if ch >= ' ' && ch <= '~' {
				b = append(b, ch)
			} else {
				b = append(b, '\\', 'x', hex[ch>>4], hex[ch&15])
			}
		}
	}
	return append(b, '"')
}

// monitorHides says whether Redis keeps args of cmd from monitors: an
// admin command, or an admin subcommand of a container (CONFIG GET, CLIENT
// LIST, SLOWLOG LEN...; CONFIG HELP and SLOWLOG HELP are shown), as
// redis-server 7.0's COMMAND INFO flags them (subcommandSpecs).
func (cmd *command) monitorHides(args [][]byte) bool {
	if cmd.subs == nil {
		return cmd.admin
	}
	sub := cmd.subcommand(args)
	return sub != nil && sub != cmd && sub.admin
}

// redactedText stands for an argument Redis redacts.
const redactedText = "(redacted)"

// redactedArgs says which of args Redis 7.0 shows as "(redacted)" in the
// slow log and to monitors, as its commands redact them while they parse
// (redactClientCommandArgument): AUTH's arguments unless it has more than
// two; HELLO's AUTH username and password, if its protocol version is 2
// or 3, up to an option it does not know; the value of CONFIG SET
// requirepass and masterauth (its sensitive parameters); MIGRATE's AUTH
// password and AUTH2 username and password.
func redactedArgs(cmd *command, args [][]byte) func(i int) bool {
	none := func(int) bool { return false }
	switch cmd.name {
	case "auth":
		if len(args) > 3 {
			return none
		}
		return func(i int) bool { return i > 0 }
	case "hello":
		if len(args) < 3 {
			return none
		}
		if v, ok := parseInt(args[1]); !ok || v != 2 && v != 3 {
			return none
		}
		var red []int
		for i := 2; i < len(args); i++ {
			more := len(args) - i - 1
			switch opt := strings.ToLower(string(args[i])); {
			case opt == "auth" && more >= 2:
				red = append(red, i+1, i+2)
				i += 2
			case opt == "setname" && more >= 1:
				i++
			default:
				i = len(args)
			}
		}
		return func(i int) bool { return slices.Contains(red, i) }
	case "migrate": // migrateCommand redacts AUTH's and AUTH2's arguments as it parses them
		var red []int
		for i := 6; i < len(args); i++ {
			more := len(args) - i - 1
			switch opt := strings.ToLower(string(args[i])); {
			case opt == "copy" || opt == "replace":
			case opt == "auth" && more >= 1:
				red = append(red, i+1)
				i++
			case opt == "auth2" && more >= 2:
				red = append(red, i+1, i+2)
				i += 2
			default: // KEYS, or a syntax error
				i = len(args)
			}
		}
		return func(i int) bool { return slices.Contains(red, i) }
	case "config":
		if len(args) < 4 || len(args)%2 != 0 || !strings.EqualFold(string(args[1]), "set") {
			return none
		}
		return func(i int) bool {
			if i < 3 || i%2 == 0 {
				return false
			}
			name := strings.ToLower(string(args[i-1]))
			return name == "requirepass" || name == "masterauth"
		}
	}
	return none
}
