package remote

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
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
	br       breaker
	st       counters
	lat      histogram
	watch    atomic.Pointer[func(keys [][]byte, all bool)]
	resync   atomic.Bool // invalidations may have been lost: tell Watch once every node answers
	closed   atomic.Bool
	sweeping atomic.Bool
	stop     chan struct{}
	wg       sync.WaitGroup
}

type counters struct {
	errors, timeouts, skipped, foreign, torn, invalidations, resyncs, swept atomic.Uint64
	bytesRead, bytesWritten                                                 atomic.Uint64
}

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
		s.log.Warn("remote tier unreachable at start: serving the local tiers, retrying in the background",
			zap.Strings("addrs", cfg.Addrs), zap.Error(err))
		s.br.open(err)
	}
	s.wg.Add(1)
	go s.health()
	return s, nil
}

// connect makes the client and reads the generation; on failure nothing
// is kept.
func (s *Store) connect() error {
	opt := rueidis.ClientOption{
		InitAddress: s.cfg.Addrs, Username: s.cfg.Username, Password: s.cfg.Password, TLSConfig: s.cfg.TLS,
		Dialer:     net.Dialer{Timeout: s.cfg.DialTimeout, KeepAlive: 30 * time.Second},
		ClientName: "tiercache-remote",
		// Invalidations of every value and of the generation, from every
		// node, on the connections the client already has; NOLOOP leaves
		// out this sidecar's own writes (R3).
		ClientTrackingOptions: []string{"BCAST", "PREFIX", s.cfg.Prefix + "d", "PREFIX", s.cfg.Prefix + "g", "NOLOOP"},
		OnInvalidations:       s.onInvalidations,
		CacheSizeEachConn:     1 << 20, // the client's own cache is not used (no DoCache)
		PipelineMultiplex:     -1,      // one connection a node: every invalidation arrives once
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
	// A connection to every node now: each enables tracking as it opens,
	// so this store hears of every change made from here on (R3).
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

// loadGen reads the generation, making it 1 if no sidecar did.
func (s *Store) loadGen(ctx context.Context, c rueidis.Client) (uint64, error) {
	if err := c.Do(ctx, c.B().Set().Key(s.genKey()).Value("1").Nx().Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
		return 0, fmt.Errorf("remote: set the generation: %w", err)
	}
	v, err := c.Do(ctx, c.B().Get().Key(s.genKey()).Build()).ToString()
	if err != nil {
		return 0, fmt.Errorf("remote: read the generation: %w", err)
	}
	g, err := strconv.ParseUint(v, 10, 64)
	if err != nil || g == 0 {
		return 0, fmt.Errorf("remote: the generation key %q holds %q, not a generation: is another program using the prefix %q?", s.genKey(), v, s.cfg.Prefix)
	}
	return g, nil
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

// writeTimeout bounds a write of n bytes: the deadline, plus time to move
// the bytes at 100 MB/s.
func (s *Store) writeTimeout(n int) time.Duration {
	return s.cfg.Timeout + time.Duration(n)*10*time.Nanosecond
}

// Get appends key's value to dst (size is ignored: a record says its
// length).
func (s *Store) Get(ctx context.Context, dst, key []byte, _ int) ([]byte, backend.Meta, bool, error) {
	r := s.GetMany(ctx, [][]byte{key}, nil, [][]byte{dst})[0]
	if !r.Found {
		return dst, backend.Meta{}, false, r.Err
	}
	return r.Value, r.Meta, true, nil
}

// GetMany reads keys in one round trip to each node they live on (keys of
// one slot in one MGET, each key's PEXPIRETIME beside them), and chunked
// values' pieces in a second; a key
// whose round trip failed or timed out is a miss with its error (R1, R2).
func (s *Store) GetMany(ctx context.Context, keys [][]byte, _ []int, dsts [][]byte) []backend.Result {
	out := make([]backend.Result, len(keys))
	c := s.conn()
	if c == nil {
		for i := range out {
			out[i].Err = ErrUnavailable
		}
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	gen := s.gen.Load()
	// Group by slot: one MGET a slot, one pipeline a node (DoMulti).
	slots := make(map[uint16][]int, len(keys))
	var order []uint16
	dk := make([]string, len(keys))
	for i, k := range keys {
		dk[i] = s.dataKey(gen, k)
		sl := KeySlot([]byte(dk[i]))
		if _, ok := slots[sl]; !ok {
			order = append(order, sl)
		}
		slots[sl] = append(slots[sl], i)
	}
	cmds := make(rueidis.Commands, len(order), len(order)+len(keys))
	for j, sl := range order {
		idx := slots[sl]
		if len(idx) == 1 {
			cmds[j] = c.B().Get().Key(dk[idx[0]]).Build()
			continue
		}
		ks := make([]string, len(idx))
		for n, i := range idx {
			ks[n] = dk[i]
		}
		cmds[j] = c.B().Mget().Key(ks...).Build()
	}
	// The expiry is the key's own (PXAT): asked in the same pipelines.
	for i := range keys {
		cmds = append(cmds, c.B().Pexpiretime().Key(dk[i]).Build())
	}
	res := c.DoMulti(ctx, cmds...)
	exps := res[len(order):]
	now := time.Now().UnixNano()
	var chunked []pending
	var firstErr error
	for j, sl := range order {
		idx := slots[sl]
		var vals []rueidis.RedisMessage
		var err error
		if len(idx) == 1 {
			var m rueidis.RedisMessage
			if m, err = res[j].ToMessage(); rueidis.IsRedisNil(err) {
				continue
			}
			if wrongType(err) {
				s.st.foreign.Add(1) // another type of value under our key: not ours (MGET answers nil for it)
				continue
			}
			vals = []rueidis.RedisMessage{m}
		} else {
			vals, err = res[j].ToArray()
		}
		if err != nil && !rueidis.IsRedisNil(err) {
			firstErr = cmp(firstErr, err)
			for _, i := range idx {
				out[i].Err = err
			}
			continue
		}
		for n, i := range idx {
			if n >= len(vals) || vals[n].IsNil() {
				continue
			}
			b, err := vals[n].AsBytes()
			if err != nil {
				s.st.foreign.Add(1)
				continue
			}
			s.st.bytesRead.Add(uint64(len(b)))
			h, ok := decodeHeader(b)
			if !ok || h.length > uint64(s.maxValue) {
				s.st.foreign.Add(1)
				continue
			}
			ms, err := exps[i].AsInt64()
			if err != nil {
				out[i].Err = err
				firstErr = cmp(firstErr, err)
				continue
			}
			var exp int64
			switch {
			case ms == -2: // gone between the two replies: replaced or expired just now
				continue
			case ms > 0:
				if exp = ms * int64(time.Millisecond); exp <= now {
					continue
				}
			}
			m := backend.Meta{Expiry: exp, Flags: h.flags}
			if h.chunked {
				chunked = append(chunked, pending{i: i, h: h, m: m})
				continue
			}
			v := b[HeaderBytes:]
			if crc32.Checksum(v, castagnoli) != h.crc {
				s.st.foreign.Add(1)
				continue
			}
			out[i] = backend.Result{Value: appendTo(dsts, i, v), Meta: m, Found: true}
		}
	}
	if len(chunked) > 0 {
		firstErr = cmp(firstErr, s.readPieces(ctx, c, gen, chunked, dsts, out))
	}
	s.outcome(start, firstErr)
	return out
}

// pending is a chunked value whose pieces are still to be read.
type pending struct {
	i int
	h header
	m backend.Meta
}

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// appendTo appends v to dsts[i] (fresh memory when dsts is nil).
func appendTo(dsts [][]byte, i int, v []byte) []byte {
	var dst []byte
	if dsts != nil {
		dst = dsts[i]
	}
	return append(dst, v...)
}

// readPieces reads the pieces of every chunked value in one pipeline a
// node, and fills out for those whose pieces match their header (put ID,
// index, the value's CRC); the others are misses (torn: replaced or
// deleted as they were read).
func (s *Store) readPieces(ctx context.Context, c rueidis.Client, gen uint64, vals []pending, dsts [][]byte, out []backend.Result) error {
	var cmds rueidis.Commands
	for _, p := range vals {
		for n := uint32(0); n < p.h.chunks; n++ {
			cmds = append(cmds, c.B().Get().Key(s.chunkKey(gen, p.h.putID, n)).Build())
		}
	}
	res := c.DoMulti(ctx, cmds...)
	var firstErr error
	at := 0
	for _, p := range vals {
		var dst []byte
		if dsts != nil {
			dst = dsts[p.i]
		}
		base := len(dst)
		ok := true
		for n := uint32(0); n < p.h.chunks; n++ {
			r := res[at]
			at++
			if !ok {
				continue
			}
			b, err := r.AsBytes()
			if err != nil {
				if !rueidis.IsRedisNil(err) {
					firstErr = cmp(firstErr, err)
					out[p.i].Err = err
				}
				ok = false
				continue
			}
			s.st.bytesRead.Add(uint64(len(b)))
			piece, good := chunkPiece(b, p.h.putID, n)
			if !good {
				ok = false
				continue
			}
			dst = append(dst, piece...)
		}
		v := dst[base:]
		if !ok || uint64(len(v)) != p.h.length || crc32.Checksum(v, castagnoli) != p.h.crc {
			if out[p.i].Err == nil {
				s.st.torn.Add(1)
			}
			continue
		}
		out[p.i] = backend.Result{Value: dst, Meta: p.m, Found: true}
	}
	return firstErr
}

// PutMany stores every item (a put: Key, Value, Expiry, Flags; the
// Version is the writer's and is not kept): the pieces of chunked values
// first, then every record with SET ... GET in one pipeline a node, and
// the pieces of the chunked records they replaced get a short expiry (R4).
// items[i].Err is its outcome.
func (s *Store) PutMany(ctx context.Context, items []*flusher.Item) error {
	c := s.conn()
	if c == nil {
		for _, it := range items {
			it.Err = ErrUnavailable
		}
		return ErrUnavailable
	}
	bytes := 0
	for _, it := range items {
		bytes += len(it.Value)
	}
	ctx, cancel := context.WithTimeout(ctx, s.writeTimeout(bytes))
	defer cancel()
	start := time.Now()
	gen := s.gen.Load()
	var pieces rueidis.Commands
	var pieceOf []int
	var sets rueidis.Commands
	var setOf []int
	var plain []func() rueidis.Completed // each SET without GET, for a key of another type
	for i, it := range items {
		it.Err = nil
		if len(it.Value) > s.maxValue {
			it.Err = fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(it.Value), s.maxValue)
			continue
		}
		var rec []byte
		if len(it.Value) <= s.cfg.ChunkBytes {
			rec = inlineRecord(it.Value, it.Flags)
		} else {
			h := header{chunked: true, flags: it.Flags, crc: crc32.Checksum(it.Value, castagnoli), length: uint64(len(it.Value)),
				putID: newPutID(), chunkBytes: uint32(s.cfg.ChunkBytes)}
			h.chunks = uint32((len(it.Value) + s.cfg.ChunkBytes - 1) / s.cfg.ChunkBytes)
			for n := uint32(0); n < h.chunks; n++ {
				lo := int(n) * s.cfg.ChunkBytes
				piece := chunkRecord(h.putID, n, it.Value[lo:min(lo+s.cfg.ChunkBytes, len(it.Value))])
				set := c.B().Set().Key(s.chunkKey(gen, h.putID, n)).Value(rueidis.BinaryString(piece))
				if it.Expiry != 0 { // a piece outlives its header by the grace
					pieces = append(pieces, set.Pxat(time.UnixMilli(pxatMs(it.Expiry, chunkGrace))).Build())
				} else {
					pieces = append(pieces, set.Build())
				}
				pieceOf = append(pieceOf, i)
				s.st.bytesWritten.Add(uint64(len(piece)))
			}
			rec = make([]byte, HeaderBytes)
			h.encode(rec)
		}
		s.st.bytesWritten.Add(uint64(len(rec)))
		dk, val, exp := s.dataKey(gen, it.Key), rueidis.BinaryString(rec), it.Expiry
		build := func(get bool) rueidis.Completed {
			set := c.B().Set().Key(dk).Value(val)
			switch {
			case get && exp != 0:
				return set.Get().PxatMillisecondsTimestamp(pxatMs(exp, 0)).Build()
			case get:
				return set.Get().Build()
			case exp != 0:
				return set.PxatMillisecondsTimestamp(pxatMs(exp, 0)).Build()
			}
			return set.Build()
		}
		sets = append(sets, build(true))
		plain = append(plain, func() rueidis.Completed { return build(false) })
		setOf = append(setOf, i)
	}
	var firstErr error
	if len(pieces) > 0 {
		for j, r := range s.doMany(ctx, c, pieces) {
			if err := r.Error(); err != nil {
				items[pieceOf[j]].Err = cmp(items[pieceOf[j]].Err, err)
				firstErr = cmp(firstErr, err)
			}
		}
		// A value whose pieces did not all land gets no header.
		k := 0
		for j, i := range setOf {
			if items[i].Err == nil {
				sets[k], setOf[k], plain[k] = sets[j], i, plain[j]
				k++
			}
		}
		sets, setOf, plain = sets[:k], setOf[:k], plain[:k]
	}
	var olds []header
	var foreign []int
	for j, r := range s.doMany(ctx, c, sets) {
		if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
			if wrongType(err) {
				foreign = append(foreign, j) // a key of another type, not ours: replaced below
				continue
			}
			items[setOf[j]].Err = err
			firstErr = cmp(firstErr, err)
			continue
		}
		if h, ok := chunkedHeader(r); ok {
			olds = append(olds, h)
		}
	}
	if len(foreign) > 0 {
		var again rueidis.Commands
		for _, j := range foreign {
			again = append(again, c.B().Unlink().Key(s.dataKey(gen, items[setOf[j]].Key)).Build(), plain[j]())
		}
		res := s.doMany(ctx, c, again)
		for n, j := range foreign {
			if err := res[2*n+1].Error(); err != nil {
				items[setOf[j]].Err = err
				firstErr = cmp(firstErr, err)
			}
		}
	}
	s.outcome(start, firstErr)
	s.expirePieces(ctx, c, gen, olds)
	return firstErr
}

// wrongType reports a WRONGTYPE reply: the key holds another type of value
// than a string, so it is not a record of ours.
func wrongType(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && strings.HasPrefix(re.Error(), "WRONGTYPE")
}

// chunkedHeader is the header of a chunked record r's reply holds (SET
// ... GET's or GETDEL's old value, or GETRANGE's first bytes).
func chunkedHeader(r rueidis.RedisResult) (header, bool) {
	b, err := r.AsBytes()
	if err != nil || len(b) < HeaderBytes {
		return header{}, false
	}
	h, ok := decodeHeader(b[:HeaderBytes])
	return h, ok && h.chunked
}

// maxPipeline is the most commands one DoMulti sends: rueidis sends a
// larger one on a pooled connection of its own, whose writes this store's
// tracking connections would hear of (NOLOOP covers the connection that
// writes).
const maxPipeline = 1000

// doMany is DoMulti in pieces of at most maxPipeline commands.
func (s *Store) doMany(ctx context.Context, c rueidis.Client, cmds rueidis.Commands) []rueidis.RedisResult {
	if len(cmds) <= maxPipeline {
		return c.DoMulti(ctx, cmds...)
	}
	out := make([]rueidis.RedisResult, 0, len(cmds))
	for len(cmds) > 0 {
		n := min(len(cmds), maxPipeline)
		out = append(out, c.DoMulti(ctx, cmds[:n]...)...)
		cmds = cmds[n:]
	}
	return out
}

// pxatMs is the millisecond at or after exp (unix ns) + extra.
func pxatMs(exp int64, extra time.Duration) int64 {
	return (exp + int64(extra) + int64(time.Millisecond) - 1) / int64(time.Millisecond)
}

// expirePieces gives the pieces of replaced or deleted chunked records
// chunkGrace to live: a reader that read the old header still finds them
// (best effort; a piece left over expires with its value's expiry, if
// any, or is swept with its generation).
func (s *Store) expirePieces(ctx context.Context, c rueidis.Client, gen uint64, hs []header) {
	var cmds rueidis.Commands
	for _, h := range hs {
		for n := uint32(0); n < h.chunks; n++ {
			cmds = append(cmds, c.B().Pexpire().Key(s.chunkKey(gen, h.putID, n)).Milliseconds(chunkGrace.Milliseconds()).Build())
		}
	}
	if len(cmds) > 0 {
		c.DoMulti(ctx, cmds...)
	}
}

// Delete removes key (an absent key is not an error, B1).
func (s *Store) Delete(ctx context.Context, key []byte) error {
	return s.DeleteMany(ctx, [][]byte{key})[0]
}

// DeleteMany removes keys with GETDEL in one pipeline a node; the pieces
// of chunked values get a short expiry (R4).
func (s *Store) DeleteMany(ctx context.Context, keys [][]byte) []error {
	errs := make([]error, len(keys))
	c := s.conn()
	if c == nil {
		for i := range errs {
			errs[i] = ErrUnavailable
		}
		return errs
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	gen := s.gen.Load()
	cmds := make(rueidis.Commands, len(keys))
	for i, k := range keys {
		cmds[i] = c.B().Getdel().Key(s.dataKey(gen, k)).Build()
	}
	var olds []header
	var firstErr error
	for i, r := range s.doMany(ctx, c, cmds) {
		if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
			if wrongType(err) {
				c.Do(ctx, c.B().Unlink().Key(s.dataKey(gen, keys[i])).Build()) // not ours: remove it all the same
				continue
			}
			errs[i] = err
			firstErr = cmp(firstErr, err)
			continue
		}
		if h, ok := chunkedHeader(r); ok {
			olds = append(olds, h)
		}
	}
	s.outcome(start, firstErr)
	s.expirePieces(ctx, c, gen, olds)
	return errs
}

// RetimeMany gives each key the expiry exps[i] (PEXPIREAT, or PERSIST for
// 0) in one pipeline a node; a chunked value's pieces follow, outliving it
// by the grace (R4).
func (s *Store) RetimeMany(ctx context.Context, keys [][]byte, exps []int64) []error {
	errs := make([]error, len(keys))
	c := s.conn()
	if c == nil {
		for i := range errs {
			errs[i] = ErrUnavailable
		}
		return errs
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	gen := s.gen.Load()
	cmds := make(rueidis.Commands, 0, 2*len(keys))
	for i, k := range keys {
		dk := s.dataKey(gen, k)
		cmds = append(cmds, c.B().Getrange().Key(dk).Start(0).End(HeaderBytes-1).Build(), s.expireCmd(c, dk, exps[i], 0))
	}
	res := s.doMany(ctx, c, cmds)
	var pieces rueidis.Commands
	var firstErr error
	for i := range keys {
		if err := res[2*i+1].Error(); err != nil {
			errs[i] = err
			firstErr = cmp(firstErr, err)
			continue
		}
		h, ok := chunkedHeader(res[2*i])
		if !ok {
			continue
		}
		for n := uint32(0); n < h.chunks; n++ {
			pieces = append(pieces, s.expireCmd(c, s.chunkKey(gen, h.putID, n), exps[i], chunkGrace))
		}
	}
	if len(pieces) > 0 {
		firstErr = cmp(firstErr, roundTripErr(s.doMany(ctx, c, pieces)))
	}
	s.outcome(start, firstErr)
	return errs
}

// expireCmd is PEXPIREAT key (exp + extra), or PERSIST key for exp 0.
func (s *Store) expireCmd(c rueidis.Client, key string, exp int64, extra time.Duration) rueidis.Completed {
	if exp == 0 {
		return c.B().Persist().Key(key).Build()
	}
	return c.B().Pexpireat().Key(key).MillisecondsTimestamp(pxatMs(exp, extra)).Build()
}

// Watch sets the function told of other writers' changes (R3).
func (s *Store) Watch(fn func(keys [][]byte, all bool)) { s.watch.Store(&fn) }

// onInvalidations is the client's push handler: the keys another sidecar
// changed (nil: a connection closed, so pushes may have been lost).
func (s *Store) onInvalidations(msgs []rueidis.RedisMessage) {
	if s.closed.Load() {
		return
	}
	if msgs == nil {
		s.resync.Store(true)
		return
	}
	gen := s.gen.Load()
	var keys [][]byte
	for _, m := range msgs {
		k, err := m.ToString()
		if err != nil {
			continue
		}
		if k == s.genKey() {
			s.resync.Store(true) // another sidecar cleared the store: the health loop reloads the generation
			continue
		}
		if g, key, ok := s.parseDataKey(k); ok && g == gen {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return
	}
	s.st.invalidations.Add(uint64(len(keys)))
	if fn := s.watch.Load(); fn != nil {
		(*fn)(keys, false)
	}
}

// Clear starts a new generation: every key stored so far is absent for
// every sidecar at once (the others hear of it through the generation
// key's invalidation), and the old keys are swept in the background (R6).
func (s *Store) Clear(ctx context.Context) error {
	c := s.conn()
	if c == nil {
		return ErrUnavailable
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	g, err := c.Do(ctx, c.B().Incr().Key(s.genKey()).Build()).AsInt64()
	s.outcome(start, err)
	if err != nil {
		return fmt.Errorf("remote: start a new generation: %w", err)
	}
	s.gen.Store(uint64(g))
	s.startSweep()
	return nil
}

// Stats reports the store's counters (no I/O).
func (s *Store) Stats() backend.Stats {
	s.mu.RLock()
	c := s.client
	s.mu.RUnlock()
	rs := &backend.RemoteStats{Connected: c != nil, Breaker: s.br.state(), BreakerOpens: s.br.opens.Load(),
		Errors: s.st.errors.Load(), Timeouts: s.st.timeouts.Load(), Skipped: s.st.skipped.Load(), Foreign: s.st.foreign.Load(),
		Torn: s.st.torn.Load(), Invalidations: s.st.invalidations.Load(), Resyncs: s.st.resyncs.Load(),
		Generation: s.gen.Load(), Swept: s.st.swept.Load()}
	if c != nil {
		rs.Nodes = len(c.Nodes())
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
