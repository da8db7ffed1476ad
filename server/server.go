package server

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/pubsub"
	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/hash"
	"github.com/tiercache/tiercache/value/set"
)

// Server serves the Redis protocol for a Cache on a Unix socket and,
// optionally, on TCP.
type Server struct {
	opts  Options
	cache *tier.Cache
	log   *zap.Logger
	cmds  map[string]*command
	get   *command // s.cmds["get"], for getBatch
	set   *command // s.cmds["set"], for setRun
	start time.Time

	mu        sync.Mutex
	listeners []net.Listener
	conns     map[*conn]struct{}
	closed    bool
	acceptWG  sync.WaitGroup
	connWG    sync.WaitGroup
	closeErr  error
	closeOnce sync.Once

	nextID atomic.Int64
	stats  counters
	tx     txLock      // MULTI/EXEC isolation and WATCH (watch.go)
	errs   errorCounts // error replies by code (INFO errorstats)
	spare  *spareFd    // a descriptor to refuse a client with when none is left
	// dropped counts the bytes of one-off buffers dropped since the last
	// reclaim (reclaim.go); reclaimStop and reclaimDone stop its loop.
	dropped                  atomic.Int64
	reclaimStop, reclaimDone chan struct{}
	// statBase is the counters at the last CONFIG RESETSTAT, which INFO
	// subtracts (resetstat.go); nil before one.
	statBase atomic.Pointer[Stats]
	inst     instMetrics // INFO's instantaneous_* (instmetrics.go)

	scr        *scripting // Lua scripts (cmd_script.go)
	ps         *pubsub.Registry
	trk        *tracker      // client tracking (tracking.go)
	evq        *eventQueue   // the cache's removals (events.go)
	push       *pusher       // writes idle connections' pushes (pushwrite.go)
	hfe        *hfeIndex     // hashes with field expiries, for the sweeper (fieldexpiry.go)
	conf       runtimeConfig // what CONFIG SET changes (config_set.go)
	knobs      knobValues    // Redis's encoding knobs, kept for CONFIG GET
	hashLimits hash.Limits
	setLimits  set.Limits     // sets and sorted sets
	blk        blockRegistry  // clients blocked on lists (block.go)
	pause      pauseState     // CLIENT PAUSE (pause.go)
	slow       slowlog        // SLOWLOG (slowlog.go)
	lat        latencyMonitor // LATENCY, latency tracking (latency.go)
	migr       migrateSockets // MIGRATE's connections (migrate_sockets.go)
	mon        monitors       // MONITOR (monitor.go)
	// timing is set while commands are timed: Options.ObserveLatency is
	// set, the slow log takes entries, latency tracking or the latency
	// monitor is on (timing.go, retime).
	timing atomic.Bool

	// loading is set while the server waits for its cache (NewLoading,
	// loading.go); cache is written once, before loading is cleared, and
	// read only after loading was seen clear. progress feeds INFO then.
	loading  atomic.Bool
	progress func() LoadProgress

	node clusterNode // the emulated cluster's node (Options.Cluster; cluster.go), set by Start
}

// counters are the server's cumulative statistics (INFO stats).
type counters struct {
	connsOpen     atomic.Int64
	connsTotal    atomic.Uint64
	rejected      atomic.Uint64
	protocolError atomic.Uint64
	outputLimit   atomic.Uint64 // connections closed at MaxOutputBytes
	pubsubLimit   atomic.Uint64 // subscribers closed at the pubsub output limit (pushes.go)
	reclaims      atomic.Uint64 // free heap pages returned to the OS (reclaim.go)
	// getBatches and getBatched count the cold GET batches (getBatch)
	// and the GETs they answered.
	getBatches, getBatched atomic.Uint64
	crossSlot              atomic.Uint64 // commands refused with CROSSSLOT (crossslot.go)
	// expired and evicted count the keys the cache removed by itself
	// (tierRemoval): INFO's expired_keys and evicted_keys.
	expired, evicted atomic.Uint64
	// closed holds the totals of closed connections; live ones are summed
	// from their conns (ioTotals).
	closed closedTotals
}

// Stats is a snapshot of the server's counters.
type Stats struct {
	// Loading is set while the server waits for its cache (NewLoading).
	Loading           bool
	ConnectedClients  int64
	TotalConnections  uint64
	RejectedConns     uint64
	CommandsProcessed uint64
	KeyspaceHits      uint64
	KeyspaceMisses    uint64
	ProtocolErrors    uint64
	OutputLimitCloses uint64 // connections closed for unread replies past MaxOutputBytes
	// ColdGetBatches counts the pipelined GETs answered together after a
	// GET that read the cold device (Options.ColdGetBatch), and
	// ColdGetBatched the GETs so answered.
	ColdGetBatches, ColdGetBatched uint64
	// CrossSlotRefusals counts the commands (and EXECs) refused with
	// CROSSSLOT in cluster mode (Options.Cluster).
	CrossSlotRefusals uint64
	// Pub/sub, scripting and tracking (issue 33): channels, patterns and
	// shard channels with subscribers, subscribers closed at the pubsub
	// output limit, messages they refused; cached scripts, SCRIPT KILLs, scripts that
	// ran past busy-reply-threshold; tracking clients, keys in the
	// tracking table, invalidations sent; the cache's removals dropped
	// because the events goroutine fell behind.
	PubSubChannels, PubSubPatterns       int64
	PubSubShardChannels                  int64
	PubSubLimitCloses, PubSubDropped     uint64
	ScriptsCached                        int64
	ScriptsKilled, ScriptsBusy           uint64
	TrackingClients, TrackingKeys        int64
	TrackingItems, TrackingPrefixes      int64
	TrackingInvalidations, EventsDropped uint64
	// Hash field expiry: fields expired (Redis's expired_subkeys: by the
	// sweeper, by a write that dropped them, by a time in the past), the
	// hashes with field expiries the sweeper knows, and the notes it
	// refused at its bound (fieldexpiry.go).
	HashFieldsExpired     uint64
	HashFieldExpiryHashes int64
	HashFieldsUntracked   uint64
	// SlowlogLen is the entries SLOWLOG holds (SLOWLOG LEN);
	// MonitorClients the connections in MONITOR mode.
	SlowlogLen, MonitorClients int64
	// MigrateCachedSockets is the connections MIGRATE keeps to its
	// targets (migrate_sockets.go).
	MigrateCachedSockets int64
	// The client sockets' traffic (ioCounters): bytes read and written,
	// reads that returned bytes and writes that sent some.
	NetInputBytes, NetOutputBytes   uint64
	ReadsProcessed, WritesProcessed uint64
	// The instantaneous rates (instMetrics): commands per second and
	// kilobytes per second read and written, each the mean of the last
	// 16 samples taken 100 ms apart.
	InstOpsPerSec                 int64
	InstInputKbps, InstOutputKbps float64
	// ExpiredKeys counts the keys the expiry sweep removed, EvictedKeys
	// those the cache dropped because no tier holds them any more (tier
	// T46's Expired and Evicted removals), whether or not anyone listens.
	ExpiredKeys, EvictedKeys uint64
	// ErrorReplies counts the error replies sent (every errorstats code).
	ErrorReplies uint64
}

// New returns a Server for cache; it does not listen until Start.
func New(cache *tier.Cache, opts Options) (*Server, error) {
	if cache == nil {
		return nil, fmt.Errorf("%w: nil cache", ErrInvalidOptions)
	}
	return newServer(cache, opts)
}

// newServer is New, and NewLoading with a nil cache.
func newServer(cache *tier.Cache, opts Options) (*Server, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.MaxConns = capConns(opts.MaxConns, opts.Logger)
	s := &Server{opts: opts, cache: cache, log: opts.Logger, start: time.Now(), conns: make(map[*conn]struct{}),
		spare: newSpareFd(), reclaimStop: make(chan struct{}), reclaimDone: make(chan struct{})}
	s.scr = newScripting(&opts)
	s.ps = newPubSub()
	s.trk = newTracker(s)
	s.conf.init(&opts)
	s.slow.maxLen.Store(opts.SlowlogMaxLen)
	s.migr.init(migrateSocketTTL)
	s.lat.init(&opts) // before the timing is decided (retime)
	s.setSlowlogSlowerThan(opts.SlowlogLogSlowerThan)
	s.evq = newEventQueue(s)
	s.push = newPusher()
	s.hfe = newHFEIndex()
	if cache != nil {
		cache.OnRemoval(s.tierRemoval)
		cache.HoldSweep(s.pause.on.Load) // no expiry sweep while clients are paused (S98)
	}
	s.hashLimits = hash.Limits{MaxFields: opts.MaxHashFields, MaxBytes: opts.MaxValueBytes}
	s.setLimits = set.Limits{MaxMembers: opts.MaxSetMembers, MaxBytes: opts.MaxValueBytes}
	s.cmds = newCommandTable(opts.ObserveLatency)
	s.get = s.cmds["get"]
	s.set = s.cmds["set"]
	s.inst.init(s)
	go s.reclaimLoop()
	go s.hfeLoop()
	return s, nil
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	io := s.ioTotals()
	st := Stats{
		Loading:           s.loading.Load(),
		ConnectedClients:  s.stats.connsOpen.Load(),
		TotalConnections:  s.stats.connsTotal.Load(),
		RejectedConns:     s.stats.rejected.Load(),
		CommandsProcessed: io.commands,
		KeyspaceHits:      io.hits,
		KeyspaceMisses:    io.misses,
		ProtocolErrors:    s.stats.protocolError.Load(),
		OutputLimitCloses: s.stats.outputLimit.Load(),
		ColdGetBatches:    s.stats.getBatches.Load(),
		ColdGetBatched:    s.stats.getBatched.Load(),
		CrossSlotRefusals: s.stats.crossSlot.Load(),
		NetInputBytes:     io.inBytes,
		NetOutputBytes:    io.outBytes,
		ReadsProcessed:    io.reads,
		WritesProcessed:   io.writes,
		ExpiredKeys:       s.stats.expired.Load(),
		EvictedKeys:       s.stats.evicted.Load(),
		ErrorReplies:      s.errs.total.Load(),
	}
	st.InstOpsPerSec, st.InstInputKbps, st.InstOutputKbps = s.inst.rates()
	return st.withPushes(s)
}

// withPushes fills in the counters of pub/sub, scripting and tracking.
func (st Stats) withPushes(s *Server) Stats {
	ps := s.ps.Stats()
	st.PubSubChannels, st.PubSubPatterns = int64(ps.Channels), int64(ps.Patterns)
	st.PubSubShardChannels = int64(ps.ShardChannels)
	st.PubSubLimitCloses, st.PubSubDropped = s.stats.pubsubLimit.Load(), ps.Dropped
	st.ScriptsCached = int64(s.scr.eng.Stats().Scripts)
	st.ScriptsKilled, st.ScriptsBusy = s.scr.killed.Load(), s.scr.busy.Load()
	st.TrackingClients = s.trk.clients.Load()
	s.trk.mu.Lock()
	st.TrackingKeys = int64(len(s.trk.keys))
	st.TrackingItems, st.TrackingPrefixes = int64(s.trk.items), int64(s.trk.prefixesLocked())
	s.trk.mu.Unlock()
	st.TrackingInvalidations, st.EventsDropped = s.trk.sent.Load(), s.evq.dropped.Load()
	st.HashFieldsExpired, st.HashFieldsUntracked = s.hfe.expired.Load(), s.hfe.untracked.Load()
	st.HashFieldExpiryHashes = int64(s.hfe.len())
	st.SlowlogLen = s.slow.n.Load()
	st.MigrateCachedSockets = s.migr.count()
	if p := s.mon.list.Load(); p != nil {
		st.MonitorClients = int64(len(*p))
	}
	return st
}

// Start serves Options.Listeners, or else opens the configured listeners,
// in the background. It fails without serving anything if any listener
// cannot be opened.
func (s *Server) Start() error {
	var ls []net.Listener
	var auth []bool
	for _, l := range s.opts.Listeners { // served as given: nothing of our own is opened (S30)
		ls = append(ls, l.Listener)
		auth = append(auth, l.RequireAuth)
	}
	if len(ls) == 0 {
		var err error
		if ls, auth, err = s.listen(); err != nil {
			return err
		}
	}
	if err := s.startCluster(ls); err != nil {
		for _, l := range ls {
			l.Close()
		}
		return err
	}
	for i, l := range ls {
		if err := s.add(l); err != nil {
			for _, l := range ls[i:] {
				l.Close()
			}
			return err
		}
		go func() {
			defer s.acceptWG.Done()
			s.serve(l, auth[i])
		}()
	}
	return nil
}

// listen opens the Unix socket and the TCP listener the options name.
func (s *Server) listen() ([]net.Listener, []bool, error) {
	var ls []net.Listener
	var auth []bool
	if s.opts.UnixSocket != "" {
		l, err := listenUnix(s.opts.UnixSocket, s.opts.UnixMode, s.opts.UnixGroup)
		if err != nil {
			return nil, nil, err
		}
		ls = append(ls, l)
		auth = append(auth, s.opts.UnixRequireAuth)
	}
	if s.opts.TCPAddr != "" {
		l, err := net.Listen("tcp", s.opts.TCPAddr)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return nil, nil, fmt.Errorf("server: listen tcp %s: %w", s.opts.TCPAddr, err)
		}
		ls = append(ls, l)
		auth = append(auth, true)
	}
	return ls, auth, nil
}

// Addrs returns the addresses being served.
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	var a []net.Addr
	for _, l := range s.listeners {
		a = append(a, l.Addr())
	}
	return a
}

// Serve serves connections from l until l or the server is closed. The
// server owns l from then on. requireAuth makes its clients AUTH first.
// In cluster mode use Start: the node announces its TCP listener's
// address, known when Start opens or takes the listeners.
func (s *Server) Serve(l net.Listener, requireAuth bool) error {
	if s.opts.Cluster {
		l.Close()
		return fmt.Errorf("%w: cluster mode serves the listeners Start opens or takes (Options.Listeners), not Serve's", ErrInvalidOptions)
	}
	if requireAuth && s.opts.RequirePass == "" {
		l.Close()
		return fmt.Errorf("%w: a listener that requires auth needs requirepass", ErrInvalidOptions)
	}
	if err := s.add(l); err != nil {
		return err
	}
	defer s.acceptWG.Done()
	s.serve(l, requireAuth)
	return nil
}

// add registers l and counts its accept loop (under mu, so Close's Wait
// never races with the Add); the caller must call acceptWG.Done.
func (s *Server) add(l net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		l.Close()
		return ErrClosed
	}
	s.listeners = append(s.listeners, l)
	s.acceptWG.Add(1)
	return nil
}

func (s *Server) serve(l net.Listener, requireAuth bool) {
	var backoff time.Duration
	failed := 0
	for {
		nc, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || s.isClosed() {
				return
			}
			// Out of descriptors: the spare one takes a waiting client
			// (refusing it while none is free), so that nobody hangs in
			// the backlog; it waits for one at most spareWait.
			if fdExhausted(err) {
				var used bool
				if nc, used = s.spare.acceptSpare(l, s.refuse); used && nc == nil {
					continue
				}
			}
		}
		if nc == nil {
			// Any other failure, or no spare: wait, then try again, as
			// net/http does; one warning per episode.
			if failed++; failed == 1 {
				s.log.Warn("accept failed; retrying with backoff", zap.Error(err))
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		if failed > 0 {
			s.log.Info("accept works again", zap.Int("failed_accepts", failed))
			failed, backoff = 0, 0
		}
		s.stats.connsTotal.Add(1)
		// The limit is checked before the connection's buffers exist.
		if s.stats.connsOpen.Add(1) > int64(s.opts.MaxConns) {
			s.stats.connsOpen.Add(-1)
			s.refuse(nc)
			continue
		}
		c := s.newConn(nc, requireAuth)
		if !s.track(c) {
			s.stats.connsOpen.Add(-1)
			nc.Close()
			return
		}
		go c.serve()
	}
}

// refuse answers a connection over the limit with Redis's error and closes it.
func (s *Server) refuse(nc net.Conn) {
	s.stats.rejected.Add(1)
	nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	nc.Write(resp.AppendError(nil, errMaxClients))
	nc.Close()
}

func (s *Server) track(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	s.connWG.Add(1)
	return true
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.stats.closed.add(c)
	s.mu.Unlock()
	s.stats.connsOpen.Add(-1)
	s.dropped.Add(closedConnBytes)
	s.connWG.Done()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops the listeners, lets each connection finish the command it is
// running and flush its replies (up to ShutdownTimeout, then closes them
// hard), and waits for every goroutine. It does not close the Cache.
// Close is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		ls := s.listeners
		s.listeners = nil
		var errs []error
		for _, l := range ls {
			if err := l.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				errs = append(errs, fmt.Errorf("server: close listener %s: %w", l.Addr(), err))
			}
		}
		// A read deadline in the past wakes every reader; a connection in the
		// middle of a command finishes it and flushes before it sees it.
		for c := range s.conns {
			if c.out != nil {
				c.out.closing.Store(true) // before the deadline: see outConn.interrupted
			}
			c.nc.SetReadDeadline(time.Now())
		}
		s.mu.Unlock()
		s.blk.shutdown()   // blocked clients end too
		s.pause.shutdown() // and those a pause holds
		s.acceptWG.Wait()
		s.spare.close()

		done := make(chan struct{})
		go func() { s.connWG.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(s.opts.ShutdownTimeout):
			if rs := s.scr.cur.Load(); rs != nil && s.scr.kill(rs) { // a script that never ends (one that wrote cannot be killed otherwise)
				s.log.Warn("stopped a script still running at shutdown", zap.String("sha", rs.sha))
			}
			s.mu.Lock()
			n := len(s.conns)
			for c := range s.conns {
				c.nc.Close()
			}
			s.mu.Unlock()
			s.migr.abort() // a MIGRATE waiting on its target
			s.log.Warn("closed connections that did not finish in time", zap.Int("connections", n))
			<-done
		}
		close(s.reclaimStop)
		<-s.reclaimDone
		s.migr.close()
		s.inst.close()
		close(s.hfe.stop)
		<-s.hfe.done
		if s.cache != nil && !s.loading.Load() {
			s.cache.OnRemoval(nil)
			s.cache.HoldSweep(nil)
		}
		s.evq.close()
		s.push.close()
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
