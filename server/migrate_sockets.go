package server

import (
	"bufio"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// MIGRATE's connection cache, as Redis 7.0's (cluster.c: migrateGetSocket,
// migrateCloseSocket, migrateCloseTimedoutSockets, and serverCron, which
// calls the last once a second). The facts taken from there:
//   - one connection per target, named host ":" port as the client wrote
//     them (so "localhost" and "127.0.0.1" are two), at most
//     MIGRATE_SOCKET_CACHE_ITEMS (64); a new target when the cache is full
//     closes one cached connection chosen at random;
//   - a connection unused for more than MIGRATE_SOCKET_CACHE_TTL (10 s) is
//     closed by the once-a-second cron (here the reclaim loop's tick);
//   - a connection that failed (a socket error or a timeout) is closed and
//     dropped from the cache; one whose target answered an error is kept;
//   - each connection remembers the database it last selected (last_dbid:
//     -1 when new, and again after the target answered an error); SELECT is
//     sent only when the call's database differs from it, and a call that
//     succeeded makes its database the remembered one.
// AUTH is sent on every call that gives it, as Redis does; a connection a
// call authenticated stays authenticated for the next calls.

// migrateSocketCacheItems is MIGRATE_SOCKET_CACHE_ITEMS.
const migrateSocketCacheItems = 64

// migrateSocketTTL is MIGRATE_SOCKET_CACHE_TTL: a cached connection unused
// for longer is closed at the next tick. A variable so that a test can
// shorten it; a server takes its value when it is made.
var migrateSocketTTL = 10 * time.Second

// migrateSocket is one connection to a MIGRATE target.
type migrateSocket struct {
	name    string // host:port, the cache's key
	nc      net.Conn
	br      *bufio.Reader
	lastDB  int64         // Redis's last_dbid: -1 none known
	lastUse time.Time     // the start of the call that used it last
	busy    bool          // a MIGRATE is using it: the cron leaves it
	timeout time.Duration // the call's: each write and reply line within it
	cached  bool          // in the cache (false: closed once the call is done)
}

// migrateSockets is the cache of one Server.
type migrateSockets struct {
	mu     sync.Mutex
	m      map[string]*migrateSocket
	loose  map[*migrateSocket]struct{} // in use and not cached: abort closes them too
	ttl    time.Duration
	closed bool // the server closed: nothing more is cached

	// stop ends dials in progress (abort); set by init.
	stop   context.Context
	cancel context.CancelFunc
}

// errMigrateAborted fails a dial after abort.
var errMigrateAborted = errors.New("server: MIGRATE's connections closed at shutdown")

// init readies ms for its server; ttl is the idle time after which a
// cached connection is closed.
func (ms *migrateSockets) init(ttl time.Duration) {
	ms.ttl = ttl
	ms.stop, ms.cancel = context.WithCancel(context.Background())
}

// get returns name's cached connection, or dials addr within timeout.
// MIGRATE holds the transaction lock exclusively, so a cached connection
// is never busy here; if one were, the call gets a connection of its own
// that is not cached.
func (ms *migrateSockets) get(name, addr string, timeout time.Duration) (*migrateSocket, error) {
	now := time.Now()
	ms.mu.Lock()
	if cs := ms.m[name]; cs != nil && !cs.busy {
		cs.busy, cs.lastUse = true, now
		ms.mu.Unlock()
		return cs, nil
	}
	ms.mu.Unlock()
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ms.stop, "tcp", addr) // each address the name has, in turn, as anetTcpGenericConnect
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	cs := &migrateSocket{name: name, nc: nc, br: bufio.NewReaderSize(nc, migrateLine), lastDB: -1, lastUse: now, busy: true}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.stop.Err() != nil { // aborted while dialing
		nc.Close()
		return nil, errMigrateAborted
	}
	if ms.closed || ms.m[name] != nil {
		if ms.loose == nil {
			ms.loose = map[*migrateSocket]struct{}{}
		}
		ms.loose[cs] = struct{}{}
		return cs, nil
	}
	if len(ms.m) >= migrateSocketCacheItems { // full: one at random goes (dictGetRandomKey)
		ms.evictOneLocked()
	}
	if ms.m == nil {
		ms.m = map[string]*migrateSocket{}
	}
	cs.cached = true
	ms.m[name] = cs
	return cs, nil
}

// evictOneLocked closes a cached connection chosen at random, not one in use.
func (ms *migrateSockets) evictOneLocked() {
	var idle []*migrateSocket
	for _, cs := range ms.m {
		if !cs.busy {
			idle = append(idle, cs)
		}
	}
	if len(idle) == 0 {
		return
	}
	cs := idle[rand.IntN(len(idle))]
	delete(ms.m, cs.name)
	cs.nc.Close()
}

// done ends a call on cs: failed (a socket error or a timeout) closes it
// and drops it from the cache (migrateCloseSocket), as does a connection
// that was not cached; otherwise it stays for the next call.
func (ms *migrateSockets) done(cs *migrateSocket, failed bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	cs.busy = false
	delete(ms.loose, cs)
	if failed || !cs.cached || ms.closed {
		if cs.cached && ms.m[cs.name] == cs {
			delete(ms.m, cs.name)
		}
		cs.nc.Close()
	}
}

// closeIdle closes the connections unused for longer than the TTL
// (migrateCloseTimedoutSockets), at each tick of the reclaim loop.
func (ms *migrateSockets) closeIdle(now time.Time) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for name, cs := range ms.m {
		if !cs.busy && now.Sub(cs.lastUse) > ms.ttl {
			delete(ms.m, name)
			cs.nc.Close()
		}
	}
}

// close closes every cached connection not in use (one in use is closed
// when its call ends) and caches nothing more.
func (ms *migrateSockets) close() { ms.shut(false) }

// abort closes every connection, those in use too, and ends dials in
// progress: a MIGRATE waiting on a target that does not answer (its
// timeout is the client's, unbounded) fails at once with IOERR, so that
// Close ends within ShutdownTimeout.
func (ms *migrateSockets) abort() { ms.shut(true) }

// shut ends the cache: dials are cancelled, nothing more is cached, and
// the cached connections not in use are closed, with busy those in use
// (cached or not) too.
func (ms *migrateSockets) shut(busy bool) {
	ms.cancel()
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.closed = true
	for name, cs := range ms.m {
		if busy || !cs.busy {
			delete(ms.m, name)
			cs.nc.Close()
		}
	}
	if busy {
		for cs := range ms.loose {
			cs.nc.Close()
		}
	}
}

// count is INFO's migrate_cached_sockets.
func (ms *migrateSockets) count() int64 {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return int64(len(ms.m))
}
