package nvmekv

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
)

// Meta is what a record carries besides its key and value.
type Meta struct {
	Expiry  int64  // unix ns, 0 = none
	Version uint64 // caller's version
	Flags   uint32 // caller's flags
}

// Item is one entry of PutMany/GetMany.
type Item struct {
	Key, Value []byte
	Meta       Meta
	Err        error
}

// KVStats are counters since NewKV.
type KVStats struct {
	Puts, PutErrors         uint64
	Gets, Hits, Misses      uint64
	Collisions              uint64 // header found but for another user key
	StaleChunks             uint64 // a chunk from another Put (read raced a Put, or a collision)
	CRCErrors               uint64
	Deletes                 uint64
	ChunksWritten           uint64
	BytesWritten, BytesRead uint64
}

// KV maps user keys (any length up to MaxKeyBytes) and values (any size up
// to MaxValueBytes) onto a Namespace. It is safe for concurrent use.
type KV struct {
	ns       Namespace
	opts     KVOptions
	lim      Limits
	chunkMax int // payload bytes per chunk
	locks    [256]sync.Mutex
	hdrPool  sync.Pool // *[]byte of HeaderReadBytes
	putID    atomic.Uint64
	closed   atomic.Bool
	log      *zap.Logger

	puts, putErrors, gets, hits, misses, collisions, stale, crcErrs, deletes, chunks, bw, br atomic.Uint64
}

// NewKV builds a KV over ns. KV.Close closes ns.
func NewKV(ns Namespace, opts KVOptions) (*KV, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	lim := ns.Limits()
	if lim.MaxKeyLen < 16 && lim.MaxKeyLen != 0 {
		return nil, fmt.Errorf("%w: namespace takes keys of at most %d bytes, KV needs 16-byte device keys", ErrBadOptions, lim.MaxKeyLen)
	}
	if lim.MaxValueLen < HeaderBytes+ChunkHdrBytes+64 {
		return nil, fmt.Errorf("%w: namespace max value size %d is too small for KV records", ErrBadOptions, lim.MaxValueLen)
	}
	kv := &KV{ns: ns, opts: opts, lim: lim, chunkMax: lim.MaxValueLen - ChunkHdrBytes, log: opts.Logger}
	kv.putID.Store(rand.Uint64() | 1)
	return kv, nil
}

// Namespace returns the namespace under kv.
func (kv *KV) Namespace() Namespace { return kv.ns }

func (kv *KV) check(key []byte) error {
	if kv.closed.Load() {
		return ErrClosed
	}
	if len(key) == 0 || len(key) > kv.opts.MaxKeyBytes {
		return fmt.Errorf("%w: user key of %d bytes, want 1..%d", ErrInvalidKeySize, len(key), kv.opts.MaxKeyBytes)
	}
	return nil
}

// chain builds the ops of one Put: chunks first, header last, all linked.
func (kv *KV) chain(key, value []byte, m Meta) ([]*Op, error) {
	if err := kv.check(key); err != nil {
		return nil, err
	}
	if int64(len(value)) > kv.opts.MaxValueBytes {
		return nil, fmt.Errorf("%w: value of %d bytes for a key of %d bytes exceeds MaxValueBytes %d", ErrInvalidValueSize, len(value), len(key), kv.opts.MaxValueBytes)
	}
	h := kv.opts.Hash(key)
	hd := header{flags: m.Flags, valueLen: uint64(len(value)), expiry: m.Expiry, version: m.Version, putID: kv.putID.Add(2)}
	inline := HeaderBytes+len(key)+len(value) <= kv.lim.MaxValueLen
	var ops []*Op
	if !inline {
		n := (len(value) + kv.chunkMax - 1) / kv.chunkMax
		if HeaderBytes+len(key) > kv.lim.MaxValueLen {
			return nil, fmt.Errorf("%w: key of %d bytes does not fit a %d-byte record", ErrInvalidKeySize, len(key), kv.lim.MaxValueLen)
		}
		hd.chunks = uint32(n)
		ops = make([]*Op, 0, n+1)
		for i := 0; i < n; i++ {
			p := value[i*kv.chunkMax : min(len(value), (i+1)*kv.chunkMax)]
			b := make([]byte, ChunkHdrBytes+len(p))
			putChunkHdr(b, hd.putID, uint32(i))
			copy(b[ChunkHdrBytes:], p)
			ck := ChunkKey(h, uint32(i))
			ops = append(ops, &Op{Code: OpStore, Key: ck[:], Buf: b, Link: true})
		}
	}
	hb := make([]byte, HeaderBytes+len(key)+pick(inline, len(value), 0))
	putHeader(hb, &hd, key, value, inline)
	ops = append(ops, &Op{Code: OpStore, Key: h[:], Buf: hb})
	return ops, nil
}

// pick returns a if c, else b.
func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// chainErr is the error of a Put chain: the first op error that is not a
// cancellation caused by an earlier failure.
func chainErr(ops []*Op) error {
	for _, op := range ops {
		if op.Err != nil {
			return op.Err
		}
	}
	return nil
}

// Put stores value under key: chunks first, then the header, as one
// linked chain, so a failed chain never publishes a header.
func (kv *KV) Put(ctx context.Context, key, value []byte, m Meta) error {
	ops, err := kv.chain(key, value, m)
	if err != nil {
		kv.putErrors.Add(1)
		return err
	}
	mu := kv.lock(ops[len(ops)-1].Key)
	mu.Lock()
	err = kv.ns.Do(ctx, ops...)
	mu.Unlock()
	if err == nil {
		err = chainErr(ops)
	}
	kv.countPut(ops, err)
	if err != nil {
		return fmt.Errorf("nvmekv: put key of %d bytes (%d-byte value): %w", len(key), len(value), err)
	}
	return nil
}

func (kv *KV) countPut(ops []*Op, err error) {
	if err != nil {
		kv.putErrors.Add(1)
		return
	}
	kv.puts.Add(1)
	kv.chunks.Add(uint64(len(ops) - 1))
	for _, op := range ops {
		kv.bw.Add(uint64(len(op.Buf)))
	}
}

func (kv *KV) lock(devKey []byte) *sync.Mutex { return &kv.locks[devKey[0]] }

// PutMany stores several items, their chains batched into as few
// submissions as the namespace allows. Per-item outcomes are in items[i].Err;
// the returned error is the first of them (or a batch-wide error).
func (kv *KV) PutMany(ctx context.Context, items []Item) error {
	chains := make([][]*Op, len(items))
	var batch []*Op
	var idx []int
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := kv.ns.Do(ctx, batch...)
		for _, i := range idx {
			e := err
			if e == nil {
				e = chainErr(chains[i])
			}
			kv.countPut(chains[i], e)
			if e != nil {
				items[i].Err = fmt.Errorf("nvmekv: put key of %d bytes: %w", len(items[i].Key), e)
			}
		}
		batch, idx = batch[:0], idx[:0]
		return err
	}
	var first error
	for i := range items {
		items[i].Err = nil
		ops, err := kv.chain(items[i].Key, items[i].Value, items[i].Meta)
		if err != nil {
			items[i].Err = err
			kv.putErrors.Add(1)
			continue
		}
		if kv.lim.MaxBatch > 0 && len(batch)+len(ops) > kv.lim.MaxBatch {
			if err := flush(); err != nil && first == nil {
				first = err
			}
		}
		chains[i] = ops
		batch = append(batch, ops...)
		idx = append(idx, i)
	}
	if err := flush(); err != nil && first == nil {
		first = err
	}
	if first != nil {
		return first
	}
	for i := range items {
		if items[i].Err != nil {
			return items[i].Err
		}
	}
	return nil
}

// getState is one Get in progress.
type getState struct {
	key  []byte
	h    [16]byte
	op   Op
	hd   header
	err  error
	done bool
}

func (kv *KV) headerOp(g *getState, size int) {
	var b []byte
	if size == kv.opts.HeaderReadBytes {
		if p, ok := kv.hdrPool.Get().(*[]byte); ok {
			b = *p
		}
	}
	if b == nil {
		b = make([]byte, size)
	}
	g.op = Op{Code: OpRetrieve, Key: g.h[:], Buf: b}
}

// releaseHeader returns a pooled header buffer (the value was copied out).
func (kv *KV) releaseHeader(g *getState) {
	if b := g.op.Buf; len(b) == kv.opts.HeaderReadBytes {
		g.op.Buf = nil
		kv.hdrPool.Put(&b)
	}
}

// afterHeader parses a retrieved header; it returns true if chunks are needed.
func (kv *KV) afterHeader(g *getState) (needChunks bool) {
	if g.op.Err != nil {
		g.err, g.done = g.op.Err, true
		return false
	}
	n := int(g.op.DW0)
	if n > len(g.op.Buf) {
		return false // caller retries with the right size
	}
	b := g.op.Buf[:n]
	kv.br.Add(uint64(n))
	hd, err := parseHeader(b)
	if err != nil {
		kv.crcErrs.Add(1)
		g.err, g.done = err, true
		return false
	}
	if ok, err := keyMatches(b, &hd, g.key); err != nil || !ok {
		if err == nil {
			kv.collisions.Add(1)
			err = fmt.Errorf("%w (device key holds another user key)", ErrKeyNotFound)
		}
		g.err, g.done = err, true
		return false
	}
	g.hd = hd
	if hd.expiry != 0 && hd.expiry <= kv.opts.Clock() {
		g.err, g.done = fmt.Errorf("%w (expired)", ErrKeyNotFound), true
		return false
	}
	if hd.chunks == 0 {
		if uint64(n-HeaderBytes-hd.keyLen) != hd.valueLen {
			kv.crcErrs.Add(1)
			g.err, g.done = fmt.Errorf("%w: record holds %d value bytes, header says %d", ErrUnrecovered, n-HeaderBytes-hd.keyLen, hd.valueLen), true
			return false
		}
		g.done = true
		return false
	}
	return true
}

func (kv *KV) finishInline(dst []byte, g *getState) ([]byte, error) {
	v := g.op.Buf[HeaderBytes+g.hd.keyLen : int(g.op.DW0)]
	crc := crc32.Update(headerCRC(g.op.Buf, g.hd.keyLen), castagnoli, v)
	if crc != g.hd.crc {
		kv.crcErrs.Add(1)
		return dst, fmt.Errorf("%w: record CRC32C %#x, computed %#x", ErrUnrecovered, g.hd.crc, crc)
	}
	return append(dst, v...), nil
}

// chunkOps builds the Retrieves of g's chunks, each into its own buffer.
func (kv *KV) chunkOps(g *getState) []*Op {
	ops := make([]*Op, g.hd.chunks)
	for i := range ops {
		ck := ChunkKey(g.h, uint32(i))
		ops[i] = &Op{Code: OpRetrieve, Key: ck[:], Buf: make([]byte, ChunkHdrBytes+kv.chunkMax)}
	}
	return ops
}

// assemble checks chunk headers and the CRC and appends the value to dst.
func (kv *KV) assemble(dst []byte, g *getState, ops []*Op) ([]byte, error) {
	start := len(dst)
	crc := headerCRC(g.op.Buf, g.hd.keyLen)
	for i, op := range ops {
		if op.Err != nil {
			if errors.Is(op.Err, ErrKeyNotFound) {
				kv.stale.Add(1)
				return dst[:start], fmt.Errorf("%w (chunk %d of %d is missing)", ErrKeyNotFound, i, len(ops))
			}
			return dst[:start], op.Err
		}
		n := min(int(op.DW0), len(op.Buf))
		id, idx, ok := parseChunkHdr(op.Buf[:n])
		if !ok || id != g.hd.putID || idx != uint32(i) {
			kv.stale.Add(1)
			return dst[:start], fmt.Errorf("%w (chunk %d belongs to another put)", ErrKeyNotFound, i)
		}
		p := op.Buf[ChunkHdrBytes:n]
		kv.br.Add(uint64(n))
		crc = crc32.Update(crc, castagnoli, p)
		dst = append(dst, p...)
	}
	if uint64(len(dst)-start) != g.hd.valueLen {
		kv.crcErrs.Add(1)
		return dst[:start], fmt.Errorf("%w: chunks hold %d value bytes, header says %d", ErrUnrecovered, len(dst)-start, g.hd.valueLen)
	}
	if crc != g.hd.crc {
		kv.crcErrs.Add(1)
		return dst[:start], fmt.Errorf("%w: record CRC32C %#x, computed %#x", ErrUnrecovered, g.hd.crc, crc)
	}
	return dst, nil
}

// Get appends key's value to dst. A miss, a collision (the device key holds
// another user key), an expired record or a stale chunk is ErrKeyNotFound.
func (kv *KV) Get(ctx context.Context, dst, key []byte) ([]byte, Meta, error) {
	items := kv.getMany(ctx, [][]byte{key}, [][]byte{dst})
	it := items[0]
	if it.Err != nil {
		return dst, Meta{}, it.Err
	}
	return it.Value, it.Meta, nil
}

// GetMany reads several keys: all header Retrieves in one submission, then
// all chunk Retrieves in one more. Per-key outcomes are in the Items.
func (kv *KV) GetMany(ctx context.Context, keys [][]byte) []Item {
	return kv.getMany(ctx, keys, nil)
}

func (kv *KV) getMany(ctx context.Context, keys [][]byte, dsts [][]byte) []Item {
	items := make([]Item, len(keys))
	gs := make([]getState, len(keys))
	var ops []*Op
	for i, k := range keys {
		gs[i].key = k
		items[i].Key = k
		if err := kv.check(k); err != nil {
			gs[i].err, gs[i].done = err, true
			continue
		}
		gs[i].h = kv.opts.Hash(k)
		kv.headerOp(&gs[i], kv.opts.HeaderReadBytes)
		ops = append(ops, &gs[i].op)
	}
	kv.gets.Add(uint64(len(keys)))
	for round := 0; len(ops) > 0 && round < 3; round++ {
		if err := kv.doBatched(ctx, ops); err != nil {
			for _, op := range ops {
				if op.Err == nil {
					op.Err = err
				}
			}
		}
		var retry []*Op
		for i := range gs {
			g := &gs[i]
			if g.done || g.op.Buf == nil {
				continue
			}
			if g.op.Err == nil && int(g.op.DW0) > len(g.op.Buf) {
				kv.headerOp(g, int(g.op.DW0)) // short buffer: retry at the stored size
				retry = append(retry, &g.op)
				continue
			}
			if !kv.afterHeader(g) && !g.done {
				g.err, g.done = fmt.Errorf("%w: header record kept growing while being read", ErrUnrecovered), true
			}
		}
		ops = retry
	}
	// Chunks of every chunked record, one submission.
	var cops []*Op
	chunked := map[int][]*Op{}
	for i := range gs {
		g := &gs[i]
		if !g.done && g.err == nil && g.hd.chunks > 0 {
			c := kv.chunkOps(g)
			chunked[i] = c
			cops = append(cops, c...)
		}
	}
	if len(cops) > 0 {
		if err := kv.doBatched(ctx, cops); err != nil {
			for _, op := range cops {
				if op.Err == nil && op.DW0 == 0 {
					op.Err = err
				}
			}
		}
	}
	for i := range gs {
		g := &gs[i]
		var dst []byte
		if dsts != nil {
			dst = dsts[i]
		}
		var err error
		switch {
		case g.err != nil:
			err = g.err
		case g.hd.chunks == 0 && g.done:
			dst, err = kv.finishInline(dst, g)
		default:
			dst, err = kv.assemble(dst, g, chunked[i])
		}
		kv.releaseHeader(g)
		if err != nil {
			if errors.Is(err, ErrKeyNotFound) {
				kv.misses.Add(1)
			}
			items[i].Err = err
			continue
		}
		kv.hits.Add(1)
		items[i].Value = dst
		items[i].Meta = Meta{Expiry: g.hd.expiry, Version: g.hd.version, Flags: g.hd.flags}
	}
	return items
}

// doBatched runs ops in submissions of at most Limits.MaxBatch.
func (kv *KV) doBatched(ctx context.Context, ops []*Op) error {
	if kv.closed.Load() {
		return ErrClosed
	}
	step := len(ops)
	if kv.lim.MaxBatch > 0 {
		step = kv.lim.MaxBatch
	}
	for len(ops) > 0 {
		n := min(step, len(ops))
		if err := kv.ns.Do(ctx, ops[:n]...); err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

// readHeader retrieves and checks key's header (for Delete and Exists).
func (kv *KV) readHeader(ctx context.Context, key []byte) (*getState, error) {
	g := &getState{key: key, h: kv.opts.Hash(key)}
	kv.headerOp(g, HeaderBytes+len(key))
	for round := 0; round < 3; round++ {
		if err := kv.ns.Do(ctx, &g.op); err != nil {
			return g, err
		}
		if g.op.Err == nil && int(g.op.DW0) > len(g.op.Buf) && len(g.op.Buf) < HeaderBytes+len(key) {
			kv.headerOp(g, int(g.op.DW0))
			continue
		}
		break
	}
	// Only the header and key are needed: pretend the record ends there.
	if g.op.Err == nil && int(g.op.DW0) > len(g.op.Buf) {
		g.op.DW0 = uint32(len(g.op.Buf))
		kv.afterHeaderKeyOnly(g)
		return g, g.err
	}
	kv.afterHeader(g)
	return g, g.err
}

// afterHeaderKeyOnly checks header and key of a record read partially.
func (kv *KV) afterHeaderKeyOnly(g *getState) {
	b := g.op.Buf[:g.op.DW0]
	hd, err := parseHeader(b)
	if err != nil {
		g.err = err
		return
	}
	if ok, err := keyMatches(b, &hd, g.key); err != nil || !ok {
		if err == nil {
			kv.collisions.Add(1)
			err = fmt.Errorf("%w (device key holds another user key)", ErrKeyNotFound)
		}
		g.err = err
		return
	}
	g.hd = hd
	if hd.expiry != 0 && hd.expiry <= kv.opts.Clock() {
		g.err = fmt.Errorf("%w (expired)", ErrKeyNotFound)
	}
}

// Delete removes key: the header first, then its chunks, in one linked
// chain. ErrKeyNotFound if key is absent (or its device key holds another key).
func (kv *KV) Delete(ctx context.Context, key []byte) error {
	if err := kv.check(key); err != nil {
		return err
	}
	h := kv.opts.Hash(key)
	mu := kv.lock(h[:])
	mu.Lock()
	defer mu.Unlock()
	g, err := kv.readHeader(ctx, key)
	if err != nil && !errors.Is(err, ErrKeyNotFound) || (err != nil && g.hd.keyLen == 0) {
		return err
	}
	// An expired record is deleted too, but reported as not found.
	ops := []*Op{{Code: OpDelete, Key: h[:], Link: g.hd.chunks > 0}}
	for i := uint32(0); i < g.hd.chunks; i++ {
		ck := ChunkKey(h, i)
		ops = append(ops, &Op{Code: OpDelete, Key: ck[:], Link: i+1 < g.hd.chunks})
	}
	if derr := kv.ns.Do(ctx, ops...); derr != nil {
		return derr
	}
	if ops[0].Err != nil {
		return ops[0].Err
	}
	kv.deletes.Add(1)
	return err
}

// Exists reports whether key is present (its header names key and has not expired).
func (kv *KV) Exists(ctx context.Context, key []byte) (bool, error) {
	if err := kv.check(key); err != nil {
		return false, err
	}
	_, err := kv.readHeader(ctx, key)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, ErrKeyNotFound) {
		return false, nil
	}
	return false, err
}

// Sync makes every completed Put and Delete durable (Namespace.Flush).
func (kv *KV) Sync(ctx context.Context) error {
	if kv.closed.Load() {
		return ErrClosed
	}
	return kv.ns.Flush(ctx)
}

// Stats returns the counters.
func (kv *KV) Stats() KVStats {
	return KVStats{
		Puts: kv.puts.Load(), PutErrors: kv.putErrors.Load(), Gets: kv.gets.Load(), Hits: kv.hits.Load(),
		Misses: kv.misses.Load(), Collisions: kv.collisions.Load(), StaleChunks: kv.stale.Load(),
		CRCErrors: kv.crcErrs.Load(), Deletes: kv.deletes.Load(), ChunksWritten: kv.chunks.Load(),
		BytesWritten: kv.bw.Load(), BytesRead: kv.br.Load(),
	}
}

// Close closes the namespace. Idempotent.
func (kv *KV) Close() error {
	if kv.closed.Swap(true) {
		return nil
	}
	return kv.ns.Close()
}
