package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
)

// Store is the remote tier: a backend.Shared on a Redis Cluster, a Valkey
// cluster or one Redis server, through rueidis.
type Store struct {
	cfg      Config
	maxValue int
	log      *zap.Logger
	name     string

	mu     sync.RWMutex
	client rueidis.Client // nil until a seed answered

	gen      atomic.Uint64
	genMu    sync.Mutex // a Clear and a reload of the generation, one at a time
	br       breaker
	st       counters
	lat      histogram
	watch    atomic.Pointer[func(backend.Change)]
	resync   atomic.Bool // invalidations may have been lost: tell Watch once every node answers
	redial   atomic.Bool // a node answered READONLY: connect to the seeds again (R10)
	redialed time.Time   // the last redial (health loop only)
	closed   atomic.Bool
	sweeping atomic.Bool
	stop     chan struct{}
	wg       sync.WaitGroup
}

type counters struct {
	errors, timeouts, skipped, foreign, torn, invalidations, resyncs, swept atomic.Uint64
	refused, oom, readOnly, redials                                         atomic.Uint64 // writes of a key refused (R7), new clients after READONLY (R10)
	bytesRead, bytesWritten                                                 atomic.Uint64
}

// connBuffer is each connection's read and write buffer (rueidis's
// default is 512 KiB each): a sidecar keeps one connection a node, and a
// value's pieces are read 1 MiB at a time through it.
const connBuffer = 256 << 10

// Open makes the remote tier for a cache that asks p of it. It returns at
// once: a store whose seeds do not answer (or refuse the credentials)
// starts unavailable, says so in the log, and keeps trying in the
// background (R5); reads miss and writes are refused meanwhile.
func Open(cfg Config, p backend.Params) (*Store, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if p.Logger != nil && cfg.Logger == zap.NewNop() {
		cfg.Logger = p.Logger
	}
	s := &Store{cfg: cfg, maxValue: p.MaxValue, log: cfg.Logger.Named("remote"), stop: make(chan struct{}),
		name: "remote:" + strings.Join(cfg.Addrs, ",")}
	if s.maxValue <= 0 {
		s.maxValue = 512 << 20
	}
	s.br.init(cfg.BreakerFailures, cfg.BreakerBackoff, s.log)
	s.lat.init()
	if err := s.connect(); err != nil {
		s.log.Warn("remote tier unavailable at start: "+startFailure(err, cfg.TLS != nil)+"; serving the local tiers, retrying in the background",
			zap.Strings("addrs", cfg.Addrs), zap.Error(err))
		s.br.open(err)
	}
	s.wg.Add(1)
	go s.health()
	return s, nil
}

// startFailure says in words why the first connect failed: the seeds
// refused the credentials (WRONGPASS, NOAUTH), or did not answer, which
// with TLS on is what a server without TLS looks like (the handshake
// waits for a reply that never comes).
func startFailure(err error, tls bool) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "invalid password"):
		return "the seeds refused the credentials (remote.username, remote.password)"
	case tls:
		return "no seed completed a TLS handshake (is remote.tls meant for these servers?) or answered"
	}
	return "no seed answered"
}

// connect makes the client and reads the generation; on failure nothing
// is kept.
func (s *Store) connect() error {
	opt := rueidis.ClientOption{
		InitAddress: s.cfg.Addrs, Username: s.cfg.Username, Password: s.cfg.Password, TLSConfig: s.cfg.TLS,
		Dialer:     net.Dialer{Timeout: s.cfg.DialTimeout, KeepAlive: 30 * time.Second},
		ClientName: "tiercache-remote",
		// Server-assisted tracking in the default mode: each node tells
		// this connection of a change to a key it read there (a value, a
		// write's PEXPIRETIME, the generation); NOLOOP leaves out this
		// connection's own writes (R3). Not BCAST: a replica would echo
		// every replicated write to the connections tracking a prefix on
		// it, the writer's own among them.
		ClientTrackingOptions: []string{"NOLOOP"},
		OnInvalidations:       s.onInvalidations,
		CacheSizeEachConn:     1 << 20, // the client's own cache is not used (no DoCache)
		ReadBufferEachConn:    connBuffer,
		WriteBufferEachConn:   connBuffer,
		PipelineMultiplex:     -1, // one connection a node: a write and its tracking share it
		ConnWriteTimeout:      max(s.cfg.Timeout*4, time.Second),
		ClusterOption:         rueidis.ClusterOption{ShardsRefreshInterval: time.Second},
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(s.cfg.Timeout, s.cfg.DialTimeout))
	defer cancel()
	gen, err := s.loadGen(ctx, c)
	if err != nil {
		c.Close()
		return err
	}
	// Every node answers now, or the store is not connected.
	if err := s.ping(c); err != nil {
		c.Close()
		return err
	}
	s.gen.Store(gen)
	s.mu.Lock()
	s.client = c
	s.mu.Unlock()
	s.log.Info("remote tier connected", zap.Strings("addrs", s.cfg.Addrs), zap.Int("nodes", len(c.Nodes())), zap.Uint64("generation", gen))
	return nil
}

// loadGen reads the generation, making a fresh one if the key is absent:
// no sidecar made it yet, or the remote evicted it (maxmemory-policy
// allkeys-*) or lost it (a failover before it replicated). A fresh
// generation is above every one used before (R9), so that no key written
// before the loss is found again: not the 1 a first sidecar would make,
// which the keys of a generation cleared long ago may still be under.
func (s *Store) loadGen(ctx context.Context, c rueidis.Client) (uint64, error) {
	// A server refusing writes (maxmemory with noeviction, a replica)
	// still answers the GET: the generation another sidecar made is all a
	// store needs to read and to be told of changes (R7).
	fresh := strconv.FormatUint(s.freshGen(), 10)
	setErr := c.Do(ctx, c.B().Set().Key(s.genKey()).Value(fresh).Nx().Build()).Error()
	if setErr != nil && !rueidis.IsRedisNil(setErr) && refusedBy(setErr) == notRefused {
		return 0, fmt.Errorf("remote: set the generation: %w", setErr)
	}
	v, err := c.Do(ctx, c.B().Get().Key(s.genKey()).Build()).ToString()
	if rueidis.IsRedisNil(err) && setErr != nil {
		return 0, fmt.Errorf("remote: the generation key %q is absent and the remote refuses to make it: %w", s.genKey(), setErr)
	}
	if err != nil {
		return 0, fmt.Errorf("remote: read the generation: %w", err)
	}
	g, err := strconv.ParseUint(v, 10, 64)
	if err != nil || g == 0 {
		return 0, fmt.Errorf("remote: the generation key %q holds %q, not a generation: is another program using the prefix %q?", s.genKey(), v, s.cfg.Prefix)
	}
	if setErr == nil && v == fresh {
		// This store made the generation: the keys of any before it (the
		// key was evicted or lost) are its to sweep (R9).
		s.startSweep(c, g)
	}
	return g, nil
}

// freshGen is a generation above every one used before, as far as this
// store can tell (R9): the microseconds since 1970, which a generation
// made by a Clear (one more than the last) reaches only after a million
// Clears a second, and above the generation this store last saw, for a
// clock that went back.
func (s *Store) freshGen() uint64 {
	return max(uint64(time.Now().UnixMicro()), s.gen.Load()+1)
}

// conn is the client while the store is worth asking, else nil (counted
// as skipped).
func (s *Store) conn() rueidis.Client {
	if s.closed.Load() || !s.br.allow() {
		s.st.skipped.Add(1)
		return nil
	}
	s.mu.RLock()
	c := s.client
	s.mu.RUnlock()
	if c == nil {
		s.st.skipped.Add(1)
	}
	return c
}

// Available reports whether the store is worth asking now.
func (s *Store) Available() bool {
	if s.closed.Load() || !s.br.allow() {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.client != nil
}

// outcome records a round trip's result for the breaker and the counters.
func (s *Store) outcome(start time.Time, err error) {
	s.lat.observe(time.Since(start))
	switch {
	case err == nil:
		s.br.success()
	case errors.Is(err, context.DeadlineExceeded):
		s.st.timeouts.Add(1)
		s.br.failure(err)
	default:
		s.st.errors.Add(1)
		s.br.failure(err)
	}
}

// roundTripErr is the first error among res that is not a nil reply.
func roundTripErr(res []rueidis.RedisResult) error {
	for _, r := range res {
		if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
			return err
		}
	}
	return nil
}

// bulkTimeout bounds a round trip that moves n bytes (a write, a chunked
// value's pieces read): the deadline, plus time to move the bytes at
// 100 MB/s.
func (s *Store) bulkTimeout(n int) time.Duration {
	return s.cfg.Timeout + time.Duration(n)*10*time.Nanosecond
}

// Stats reports the store's counters (no I/O).
func (s *Store) Stats() backend.Stats {
	s.mu.RLock()
	c := s.client
	s.mu.RUnlock()
	rs := &backend.RemoteStats{Connected: c != nil, Breaker: s.br.state(), BreakerOpens: s.br.opens.Load(),
		Errors: s.st.errors.Load(), Timeouts: s.st.timeouts.Load(), Skipped: s.st.skipped.Load(), Foreign: s.st.foreign.Load(),
		Torn: s.st.torn.Load(), Invalidations: s.st.invalidations.Load(), Resyncs: s.st.resyncs.Load(),
		Generation: s.gen.Load(), Swept: s.st.swept.Load(),
		Refused: s.st.refused.Load(), OOM: s.st.oom.Load(), ReadOnly: s.st.readOnly.Load(), Redials: s.st.redials.Load()}
	if c != nil {
		rs.Nodes = len(c.Nodes())
		rs.ClientBytes = int64(rs.Nodes) * 2 * connBuffer
	}
	s.lat.fill(rs)
	return backend.Stats{Backend: s.name, Items: -1, BytesRead: s.st.bytesRead.Load(), BytesWritten: s.st.bytesWritten.Load(),
		MaxValue: s.maxValue, IndexNode: -1, IndexPlacement: -1, Remote: rs}
}

// Close stops the health loop and the sweep and closes the client.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.stop)
	s.wg.Wait()
	s.mu.Lock()
	c := s.client
	s.client = nil
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
	return nil
}
