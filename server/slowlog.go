package server

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The slow log, as redis-server 7.0's (slowlog.c): the commands that took
// at least slowlog-log-slower-than microseconds (-1: none, 0: every one),
// at most slowlog-max-len of them, newest first. A command's time is the
// one its latency observation measures (timing.go, S51): no clock is read
// for the slow log, and a pipelined run of the same command, timed as a
// whole, is one entry with each command's share of the run's time and the
// run's last command's arguments (S59).

// Redis's limits of an entry (slowlog.h: SLOWLOG_ENTRY_MAX_ARGC,
// SLOWLOG_ENTRY_MAX_STRING): past 32 arguments the 32nd says how many
// more there were; an argument past 128 bytes is cut there and says how
// many more bytes it had.
const (
	slowlogMaxArgs  = 32
	slowlogMaxBytes = 128
)

// Redis's defaults of slowlog-log-slower-than and slowlog-max-len
// (redis.conf, config.c).
const (
	defaultSlowlogSlowerThan = 10000
	defaultSlowlogMaxLen     = 128
)

// slowlog is the server's slow log and its two settings.
type slowlog struct {
	// slowerThan is slowlog-log-slower-than in microseconds, as CONFIG GET
	// shows it; atLeast the time (ns) a command logged takes at least,
	// math.MaxInt64 when none is logged (-1), read once per observation.
	slowerThan, atLeast atomic.Int64
	maxLen              atomic.Int64
	n                   atomic.Int64 // entries held, for Stats

	mu     sync.Mutex
	ent    []slowEntry // oldest first, from head
	head   int
	nextID int64
}

// slowEntry is one entry: SLOWLOG GET's six fields.
type slowEntry struct {
	id, unix, micros int64
	args             [][]byte // copies, cut as Redis cuts them
	addr, name       string
}

// setSlowerThan sets slowlog-log-slower-than (µs; -1 logs nothing).
func (l *slowlog) setSlowerThan(us int64) {
	l.slowerThan.Store(us)
	switch {
	case us < 0:
		l.atLeast.Store(math.MaxInt64)
	case us > math.MaxInt64/int64(time.Microsecond):
		l.atLeast.Store(math.MaxInt64 - 1) // longer than a Duration holds: logged never, in practice
	default:
		l.atLeast.Store(us * int64(time.Microsecond))
	}
}

// setSlowlogSlowerThan sets slowlog-log-slower-than, and times commands
// while the slow log or another of their observers needs it (retime).
func (s *Server) setSlowlogSlowerThan(us int64) {
	s.slow.setSlowerThan(us)
	s.retime()
}

// on says whether commands may be logged (slowlog-log-slower-than >= 0).
func (l *slowlog) on() bool { return l.atLeast.Load() != math.MaxInt64 }

// add appends e with the next id and drops the oldest entries past
// slowlog-max-len (as Redis, at the push: a lowered max-len takes effect
// at the next entry).
func (l *slowlog) add(e slowEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.id = l.nextID
	l.nextID++
	l.ent = append(l.ent, e)
	for max := l.maxLen.Load(); int64(len(l.ent)-l.head) > max; l.head++ {
		l.ent[l.head] = slowEntry{}
	}
	if l.head > 64 && 2*l.head > len(l.ent) {
		n := copy(l.ent, l.ent[l.head:])
		clear(l.ent[n:])
		l.ent, l.head = l.ent[:n], 0
	}
	l.n.Store(int64(len(l.ent) - l.head))
}

// newest returns at most count entries, newest first (count < 0: all).
func (l *slowlog) newest(count int64) []slowEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.ent[l.head:]
	if count < 0 || count > int64(len(held)) {
		count = int64(len(held))
	}
	out := make([]slowEntry, count)
	for i := range out {
		out[i] = held[len(held)-1-i]
	}
	return out
}

func (l *slowlog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.ent)
	l.ent, l.head = l.ent[:0], 0
	l.n.Store(0)
}

// slowEntryOf is the entry of cmd run with args (argc arguments in all:
// args may hold only the first slowlogMaxArgs) by c, taking d: the
// arguments copied and cut as Redis cuts them, those Redis redacts
// replaced, the client's address and name as CLIENT LIST gives them (a
// script's commands: Redis's script client's "?:0" and no name).
func (c *conn) slowEntryOf(cmd *command, args [][]byte, argc int, d time.Duration) slowEntry {
	e := slowEntry{unix: time.Now().Unix(), micros: int64(d / time.Microsecond), addr: "?:0"}
	if c.scriptOf == nil {
		e.addr = clientAddr(c.nc.RemoteAddr(), c.nc.LocalAddr())
		e.name = c.meta.Load().name
	}
	n := min(argc, slowlogMaxArgs, len(args))
	e.args = make([][]byte, n)
	red := redactedArgs(cmd, args)
	for i := range n {
		a := args[i]
		switch {
		case argc > slowlogMaxArgs && i == slowlogMaxArgs-1:
			a = []byte("... (" + strconv.Itoa(argc-slowlogMaxArgs+1) + " more arguments)")
		case red(i):
			a = []byte(redactedText)
		case len(a) > slowlogMaxBytes:
			a = append(a[:slowlogMaxBytes:slowlogMaxBytes], "... ("+strconv.Itoa(len(a)-slowlogMaxBytes)+" more bytes)"...)
		default:
			a = append([]byte(nil), a...)
		}
		e.args[i] = a
	}
	return e
}

// keepArgs remembers the arguments of a command whose observation waits
// for the commands pipelined behind it (observeLater), for the slow log:
// at most slowlogMaxArgs of them, and their count. They point into the
// read buffer, which stays as it is until the Reader's BeforeBlock
// (resp's fill), where the run is observed; a read without it drops them
// (run).
func (c *conn) keepArgs(args [][]byte) {
	if !c.s.slow.on() {
		return
	}
	c.kept = append(c.kept[:0], args[:min(len(args), slowlogMaxArgs)]...)
	c.keptArgc = len(args)
}

// dropKept forgets the kept arguments.
func (c *conn) dropKept() {
	if len(c.kept) > 0 {
		clear(c.kept)
		c.kept = c.kept[:0]
	}
}

// logSlow adds the entry of a run of cmd observed at d per command, if
// the slow log takes it: args are the run's last command's (nil: the kept
// ones, or, if none, its name alone). EXEC, whose commands are logged one
// by one, is not (Redis's skip_slowlog flag).
func (c *conn) logSlow(cmd *command, args [][]byte, d time.Duration) {
	if cmd.skipSlowlog || c.refused {
		return
	}
	argc := len(args)
	if args == nil {
		args, argc = c.kept, c.keptArgc
		if len(args) == 0 {
			args, argc = [][]byte{[]byte(cmd.name)}, 1
		}
	}
	c.s.slow.add(c.slowEntryOf(cmd, args, argc, d))
}

// cmdSlowlog: SLOWLOG GET [count] | LEN | RESET | HELP, with Redis 7.0's
// arities and errors (slowlogCommand): each subcommand's own arity, GET's
// count read as getRangeLongFromObjectOrReply reads it (-1: every entry).
func (c *conn) cmdSlowlog(args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	switch {
	case sub != "get" && sub != "len" && sub != "reset" && sub != "help":
		c.unknownSubcommand("slowlog", args[1])
	case sub != "get" && len(args) != 2:
		c.wrongArgs("slowlog|" + sub)
	case sub == "get" && len(args) > 3:
		c.w.Error(errSubcommandSyntax("SLOWLOG", args[1]))
	case sub == "help":
		c.w.Array(len(slowlogHelp))
		for _, l := range slowlogHelp {
			c.w.Simple(l)
		}
	case sub == "len":
		c.w.Int(c.s.slow.n.Load())
	case sub == "reset":
		c.s.slow.reset()
		c.w.OK()
	default:
		count := int64(10)
		if len(args) == 3 {
			n, ok := parseInt(args[2])
			if !ok || n < -1 {
				c.w.Error(errSlowlogCount)
				return
			}
			count = n
		}
		ent := c.s.slow.newest(count)
		c.w.Array(len(ent))
		for _, e := range ent {
			c.w.Array(6)
			c.w.Int(e.id)
			c.w.Int(e.unix)
			c.w.Int(e.micros)
			c.w.Array(len(e.args))
			for _, a := range e.args {
				c.w.Bulk(a)
			}
			c.w.BulkString(e.addr)
			c.w.BulkString(e.name)
		}
	}
}

// slowlogHelp is SLOWLOG HELP's answer, redis-server 7.0's.
var slowlogHelp = []string{
	"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET [<count>]",
	"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
	"    Entries are made of:",
	"    id, timestamp, time in microseconds, arguments array, client IP and port,",
	"    client name",
	"LEN",
	"    Return the length of the slowlog.",
	"RESET",
	"    Reset the slowlog.",
	"HELP",
	"    Prints this help.",
}
