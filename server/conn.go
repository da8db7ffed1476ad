package server

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/list"
)

// conn is one client connection; its goroutine owns every field.
type conn struct {
	s   *Server
	nc  net.Conn
	out *outConn // nc with unsent replies kept aside (S12); nil if nc is no socket
	rd  *resp.Reader
	w   *resp.Writer
	cmd *command // the command running (or last run): its name for error replies
	id  int64
	// meta is what CLIENT SETNAME, SETINFO and HELLO set, read by other
	// connections' CLIENT LIST: replaced whole, never changed in place.
	meta    atomic.Pointer[clientMeta]
	authed  bool
	quit    bool
	ready   bool // the server has its cache (loading.go); false: ask conn.loaded
	created time.Time
	scratch []byte             // reused GET buffer
	sortKey []byte             // SORT's pattern keys, built one at a time
	into    func(n int) []byte // c.w.BulkInto, made once (a method value allocates)
	coldGet bool               // the last GET read the cold device (see getBatch)
	batch   [][]byte           // reused keys of a getBatch
	setArgv [3][]byte          // a setRun's SET
	getArgv [2][]byte          // a getRun's last GET, for the slow log
	kvs     [][2][]byte        // reused MSET pairs
	num     [20]byte           // INCR's new value in decimal (a local would escape to the heap)
	// needAuth: c came through a listener that requires AUTH, which RESET
	// asks for again. reply is CLIENT REPLY's OFF and SKIP (clientreply.go).
	needAuth bool
	reply    replyFlags
	// chunks hold the values MGET replies name by reference (BulkShared),
	// given back once those replies were flushed; getChunks hold a GET
	// batch's values until they are copied into the reply.
	chunks, getChunks tier.Chunks
	// bigLent are the off-heap buffers big values read from cold were
	// sent from (getKey), given back once those replies were flushed.
	bigLent [][]byte
	agg     aggBuf    // reused buffers of the aggregate commands
	typed   typedBufs // the set and sorted-set commands' decoded values
	st      connCounters
	tx      txState
	watched map[string]bool // WATCHed keys: did each exist at WATCH (watch.go)
	dirty   atomic.Bool     // a watched key was written (set by other connections)
	noop    bool            // the write command running changed nothing (see runWrite)
	touched bool            // it touched the keys it changed itself: runWrite touches none (SMOVE, ZMPOP, BZMPOP)
	// refused is set by the command running when it answered an error
	// Redis gives before running a command (wrongArgs, unknownSubcommand).
	refused bool
	// errElsewhere is set by the command running when it gave another
	// client an error reply (CLIENT UNBLOCK ERROR): it failed (countCall).
	errElsewhere bool
	// blockCmd is a blocked command not observed yet, blockRan the time
	// it ran before it waited, blockEntry its slow log entry (nil: none)
	// (deferBlocked, observeBlocked).
	blockCmd   *command
	blockRan   time.Duration
	blockEntry *slowEntry
	// errMark is the Writer's error count when the running command
	// started, or when the last command run inside it ended (countCall).
	errMark uint64
	lists   listOps // the list commands' buffers
	// blocked is the waiter a blocking command registered, waited on for
	// at most blockFor (0: forever) once the command returns
	// (awaitBlocked); inExec is set while EXEC runs, where nothing blocks.
	blocked  *waiter
	blockFor time.Duration
	inExec   bool
	wakes    [][]byte // keys pushed onto inside EXEC, served after it
	// script is the connection c's scripts run their commands on
	// (cmd_script.go); scriptOf, on such a connection, is the client whose
	// script it serves.
	script   *scriptConn
	scriptOf *conn
	// push queues what other goroutines send c (pushes.go); subs counts
	// its channels, patterns and shard channels (cmd_pubsub.go); trk is
	// its tracking mode (tracking.go);
	// gone is set once it closed. events are the running write's keyspace
	// events (notify.go), evKeys their keys.
	push *pushQueue
	subs atomic.Int64
	trk  *trackState
	gone atomic.Bool
	// killed is closed by CLIENT KILL (killOnce), which also closes nc: a
	// blocked command ends on it as on a hangup (awaitBlocked), and no
	// command read after runs (serve).
	killed chan struct{}
	// waiter is the last waiter c registered (serveOrRegister), guarded
	// by the block registry's mu, for killWaiter.
	waiter   *waiter
	killOnce sync.Once
	// What CLIENT LIST shows of c to other connections (describe): its
	// descriptor; the commands it queued in MULTI (-1 outside); whether a
	// blocking command waits; when it last answered what it read
	// (Server.clock: the read of its latest command, ioReads that read's
	// count; showRead) and its last command (showIdle).
	fd         int
	multi      atomic.Int32
	blockedNow atomic.Bool
	lastIO     atomic.Int64
	ioReads    uint64
	readAt     time.Duration // the clock at read ioReads (showRead)
	lastCmd    atomic.Pointer[command]
	sub        *command // c.cmd's subcommand when it is a container's (CLIENT LIST's config|get), else nil
	events     []keyEvent
	evKeys     [][]byte
	servedTo   *conn    // the blocked client whose serve's events are being emitted (servedEvents)
	evServed   []*conn  // flushEvents' clients served so far
	pre        []bool   // the running write's keys existed before it (beforeWrite)
	newKeys    [][]byte // the keys it created ("new" events)
	// mark is when the last timed command ended (Server.clock), valid while
	// the Reader's read count is still timedReads.
	mark       time.Duration
	timedReads uint64
	timed      bool // a timed command runs: mark was read before it (now)
	// pending runs of pendingCmd ran since mark and are not observed yet
	// (observeLater); pendingSt are the commandstats they count in when
	// pendingCmd is a container (its subcommand's, statsOf).
	pending    int
	pendingCmd *command
	pendingSt  *cmdStats
	// kept are the first arguments of the last command of the pending
	// run, and keptArgc their count, for the slow log (keepArgs).
	kept     [][]byte
	keptArgc int
	// monitoring is set once c ran MONITOR (monitor.go); monLine is the
	// buffer c builds the monitors' lines of its commands in.
	monitoring atomic.Bool
	monLine    []byte
}

// connCounters are one connection's statistics: written by its goroutine
// only (no cache line shared between connections), summed by Server.Stats.
type connCounters struct {
	commands, hits, misses atomic.Uint64
}

// maxScratch is the largest GET buffer kept between commands.
const maxScratch = 1 << 20

func (s *Server) newConn(nc net.Conn, requireAuth bool) *conn {
	c := &conn{s: s, nc: nc, id: s.nextID.Add(1), authed: !requireAuth, needAuth: requireAuth, created: time.Now(), ready: !s.loading.Load(),
		killed: make(chan struct{})}
	c.meta.Store(&clientMeta{proto: 2})
	c.fd = fdOf(nc)
	c.multi.Store(-1)
	c.lastIO.Store(int64(s.clock()))
	var rw io.ReadWriter = nc
	if c.out = newOutConn(nc, s.opts.MaxOutputBytes, s.opts.ShutdownTimeout); c.out != nil {
		rw = c.out
	}
	c.rd = resp.NewReader(rw, resp.Limits{BufferBytes: s.opts.ReadBufferBytes, MaxBulkBytes: s.opts.MaxBulkBytes,
		MaxArgs: s.opts.MaxArgs, MaxInlineBytes: s.opts.MaxInlineBytes, MaxQueryBytes: s.opts.MaxQueryBytes})
	c.rd.SetPreAuth(requireAuth)
	c.out.SetPreAuth(requireAuth)
	c.w = resp.NewWriter(rw, s.opts.WriteBufferBytes)
	c.into = c.w.BulkInto
	c.w.CountError = s.errs.count
	c.lists = listOps{limits: list.Limits{MaxElements: s.opts.MaxListElements, MaxBytes: s.opts.MaxValueBytes}}
	if c.ready { // else conn.loaded sets it: s.cache may be being written (Server.Loaded)
		c.lists.cache = s.cache
	}
	c.pushes()
	c.rd.BeforeBlock = c.beforeRead
	c.rd.MayKeep = c.mayKeep
	c.rd.PoisonBig = s.opts.PoisonBigBuffers
	c.rd.Dropped = &s.dropped
	return c
}

// mayKeep says whether a SET would give the cache a big value of n bytes
// (tier.Cache.KeepsOwned): the Reader receives it on the Go heap, and any
// other big bulk into an off-heap buffer that it recycles (resp R6).
func (c *conn) mayKeep(n int) bool {
	return c.ready && c.lists.cache.KeepsOwned(n)
}

func (c *conn) flush() error {
	if c.push.pending.Load() {
		c.drainPushes()
	}
	if c.w.Buffered() == 0 {
		c.chunks.Release() // flushed inside the reply (Writer.BulkShared)
		c.rd.Recycle()
		c.giveBackBig()
		return c.w.Err() // which may have failed
	}
	err := c.w.Flush()
	c.chunks.Release() // every byte is with the socket or copied aside
	c.rd.Recycle()     // so no reply refers to an earlier command's big bulk
	c.giveBackBig()
	if err != nil {
		return err
	}
	// The client has just been sent its replies and has not answered yet,
	// so reading now would fail with EAGAIN (a wasted syscall) and park.
	// Let the other connections run first: by the time this one runs again
	// its next request has often arrived. With nothing else to run this
	// returns at once.
	runtime.Gosched()
	return nil
}

func (c *conn) serve() {
	defer c.s.untrack(c)
	defer c.leavePushes()
	defer c.unwatch()
	defer c.rd.Release()
	defer c.nc.Close()
	defer func() {
		if c.out != nil {
			c.out.Flush() // replies still unsent go out before the socket closes
		}
		c.chunks.Release()
		c.giveBackBig()
	}()
	defer func() {
		// A bug behind one command must not take the whole sidecar down:
		// log it, tell the client, drop only this connection.
		if r := recover(); r != nil {
			c.s.log.Error("panic while serving a command; closing the connection",
				zap.Int64("client", c.id), zap.Any("panic", r), zap.Stack("stack"))
			c.observePending(nil)
			c.out.own() // the pusher does not write past this reply
			c.w.Error(errInternal)
			c.flush()
		}
	}()
	for !c.quit {
		args, err := c.rd.ReadCommand()
		if err != nil {
			c.readFailed(err)
			return
		}
		if c.isKilled() { // what it sent after CLIENT KILL answered never runs (S54)
			break
		}
		c.showRead()
		c.dispatch(args)
		if c.reply != 0 {
			c.replied()
		}
	}
	c.observePending(nil)
	c.flush()
}

func (c *conn) readFailed(err error) {
	c.dropKept() // a failed read may have moved them
	c.observePending(nil)
	c.out.own() // a reply made here goes out before any later push (S32)
	switch {
	case isProtocolError(err):
		c.s.stats.protocolError.Add(1)
		c.w.Error(errorReply(err))
		c.flush()
		c.s.log.Debug("protocol error, closing connection", zap.Int64("client", c.id), zap.Error(err))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.flush() // shutting down: replies already produced still go out
	case errors.Is(err, errOutputLimit):
		c.s.stats.outputLimit.Add(1)
		c.s.log.Warn("client output buffer limit reached: it wrote requests without reading the replies; closing the connection",
			zap.Int64("client", c.id), zap.Error(err))
	default:
		c.s.log.Debug("connection read failed", zap.Int64("client", c.id), zap.Error(err))
	}
}
