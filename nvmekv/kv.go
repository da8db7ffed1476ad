package nvmekv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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
	// Pieces, when there are more than one, cut Value into the pieces of
	// a pieced record (K20, pieces.go); PutMany only.
	Pieces []Piece
	// Replaces says key may hold a chunked record that this put replaces
	// even when its own value is inline: PutMany then reads that record's
	// header and deletes its chunks once the new header is written, as a
	// chunked put does (K11, K22). Without it an inline put reads nothing,
	// and the chunks it replaces stay until the log reclaims them (the
	// Caveats): for ever in a Strict namespace. PutMany only.
	Replaces bool
	Err      error
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
	LeftoverChunks          uint64 // chunks an interrupted put left behind, deleted by a later put (K13)
}

// KV maps user keys (any length up to MaxKeyBytes) and values (any size up
// to MaxValueBytes) onto a Namespace. It is safe for concurrent use.
type KV struct {
	ns         Namespace
	opts       KVOptions
	lim        Limits
	chunkMax   int // payload bytes per chunk
	locks      [256]sync.Mutex
	recs       recBufs   // header record buffers (headerOp, headerStore)
	getBatches sync.Pool // *getBatchState
	chunkBufs  chunkBufs // of ChunkHdrBytes+chunkMax bytes (chunkBuf)
	putID      atomic.Uint64
	closed     atomic.Bool
	log        *zap.Logger
	defHash    bool // opts.Hash is DefaultHasher (UserKeys, ScanUserKeys)

	puts, putErrors, gets, hits, misses, collisions, stale, crcErrs, deletes, chunks, bw, br, swept atomic.Uint64
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
	kv := &KV{ns: ns, opts: opts, lim: lim, chunkMax: lim.MaxValueLen - ChunkHdrBytes, chunkBufs: chunkBufs{size: lim.MaxValueLen}, log: opts.Logger, defHash: defaultHashed(opts.Hash)}
	kv.putID.Store(rand.Uint64() | 1)
	return kv, nil
}

// Namespace returns the namespace under kv.
func (kv *KV) Namespace() Namespace { return kv.ns }

// KeepsExpired reports whether the KV returns records past their expiry
// (KVOptions.KeepExpired).
func (kv *KV) KeepsExpired() bool { return kv.opts.KeepExpired }

func (kv *KV) check(key []byte) error {
	if kv.closed.Load() {
		return ErrClosed
	}
	if len(key) == 0 || len(key) > kv.opts.MaxKeyBytes {
		return fmt.Errorf("%w: user key of %d bytes, want 1..%d", ErrInvalidKeySize, len(key), kv.opts.MaxKeyBytes)
	}
	return nil
}

// record is one Put's plan: the record's header and where its chunks go.
// A chunked value's chunks go to the chunk set cur (the header the Put
// replaces: nil if there is none, or it was not read) does not use, and
// cleanup deletes cur's chunks once the header is written (K11): a put cut
// short by a crash leaves cur's record whole.
type record struct {
	h       [16]byte
	hd      header
	inline  bool
	pieces  []Piece // a pieced record's (K20)
	table   []byte  // its piece table
	cleanup []*Op
	sw      *chunkSweep
}

// plan checks a Put of key and value (cut into pieces when there are
// more than one, K21) and lays out its record.
func (kv *KV) plan(key, value []byte, pieces []Piece, m Meta, cur *header) (*record, error) {
	r := new(record)
	if err := kv.planInto(r, key, value, pieces, m, cur); err != nil {
		return nil, err
	}
	return r, nil
}

// planInto is plan into r.
func (kv *KV) planInto(r *record, key, value []byte, pieces []Piece, m Meta, cur *header) error {
	if err := kv.checkPut(key, value); err != nil {
		return err
	}
	*r = record{h: kv.opts.Hash(key), inline: !kv.chunked(key, value),
		hd: header{flags: m.Flags, valueLen: uint64(len(value)), expiry: m.Expiry, version: m.Version, putID: kv.putID.Add(2), short: true}}
	if len(pieces) > 1 {
		if err := kv.checkPieced(key, value, pieces); err != nil {
			return err
		}
		r.inline, r.pieces, r.table, r.hd.pieced = false, pieces, pieceTable(value, pieces), true
	}
	if !r.inline || cur != nil && cur.chunks > 0 {
		r.sw = &chunkSweep{h: r.h, short: [2]bool{true, true}}
		if cur != nil && cur.chunks > 0 {
			r.sw.from[cur.set] = cur.chunks // the cleanup deletes the ones below
			r.sw.short[cur.set] = cur.short
		}
	}
	if !r.inline {
		r.hd.chunks = uint32((len(value) + kv.chunkMax - 1) / kv.chunkMax)
		if r.hd.pieced {
			r.hd.chunks = uint32(len(r.pieces))
		}
		if cur != nil && cur.chunks > 0 {
			r.hd.set = 1 - cur.set
		}
		r.sw.from[r.hd.set], r.sw.short[r.hd.set] = r.hd.chunks, true
	}
	// The chunks of the record replaced go once the header is written,
	// an inline one's too (K22: its put read cur, Item.Replaces).
	if cur != nil && cur.chunks > 0 {
		for i := uint32(0); i < cur.chunks; i++ {
			r.cleanup = append(r.cleanup, &Op{Code: OpDelete, Key: chunkKey(r.h, cur, i)})
		}
	}
	return nil
}

// chunkStore builds the Store of chunk i of r's value in buf (a chunk
// buffer, chunkBuf).
func (kv *KV) chunkStore(r *record, value []byte, i int, buf []byte) *Op {
	var p []byte
	if r.hd.pieced {
		start := 0
		if i > 0 {
			start = r.pieces[i-1].End
		}
		p = value[start:r.pieces[i].End]
		buf = make([]byte, ChunkHdrBytes+len(p)) // a piece's own: pieces are small, and many
	} else {
		p = value[i*kv.chunkMax : min(len(value), (i+1)*kv.chunkMax)]
	}
	b := buf[:ChunkHdrBytes+len(p)]
	putChunkHdr(b, r.hd.putID, uint32(i))
	copy(b[ChunkHdrBytes:], p)
	return &Op{Code: OpStore, Key: chunkKey(r.h, &r.hd, uint32(i)), Buf: b, Link: true}
}

// headerStore builds the Store of r's header record (with the value when
// it is inline).
func (kv *KV) headerStore(r *record, key, value []byte) *Op {
	op := new(Op)
	kv.headerStoreInto(op, r, key, value)
	return op
}

// headerStoreInto is headerStore into op.
func (kv *KV) headerStoreInto(op *Op, r *record, key, value []byte) {
	hb := kv.recs.get(HeaderBytes + len(key) + pick(r.inline, len(value), 0) + len(r.table))
	if r.hd.pieced {
		putPiecedHeader(hb, &r.hd, key, value, r.table)
	} else {
		putHeader(hb, &r.hd, key, value, r.inline)
	}
	*op = Op{Code: OpStore, Key: r.h[:], Buf: hb}
}

// chain builds the ops of one Put of at most chunkWindow chunks: chunks
// first (in chunk buffers: releaseChunks gives them back once the ops are
// done), header last, all linked.
func (kv *KV) chain(key, value []byte, r *record) []*Op {
	ops := make([]*Op, 0, r.hd.chunks+1)
	for i := 0; i < int(r.hd.chunks); i++ {
		var buf []byte
		if !r.hd.pieced {
			buf = kv.chunkBuf()
		}
		ops = append(ops, kv.chunkStore(r, value, i, buf))
	}
	return append(ops, kv.headerStore(r, key, value))
}

// curHeader is the header a chunked Put replaces (nil: none), or the
// error reading it.
type curHeader struct {
	hd  *header
	err error
}

// currentHeaders reads, in one batch, the headers that the chunked puts
// among items replace.
func (kv *KV) currentHeaders(ctx context.Context, items []Item, curs []curHeader) []curHeader {
	curs = slices.Grow(curs[:0], len(items))[:len(items)]
	clear(curs)
	var gs []getState
	var idx []int
	for i := range items {
		if kv.checkPut(items[i].Key, items[i].Value) == nil && (kv.chunked(items[i].Key, items[i].Value) || len(items[i].Pieces) > 1 || items[i].Replaces) {
			gs = append(gs, getState{key: items[i].Key, h: kv.opts.Hash(items[i].Key)})
			idx = append(idx, i)
		}
	}
	if len(gs) == 0 {
		return curs
	}
	kv.readHeaders(ctx, gs)
	for j, i := range idx {
		hd, err := current(&gs[j])
		if err != nil && !kv.chunked(items[i].Key, items[i].Value) && len(items[i].Pieces) <= 1 {
			hd, err = nil, nil // read for Replaces alone: best effort, the put goes on (its chunks stay, as without)
		}
		if err != nil {
			err = fmt.Errorf("nvmekv: put key of %d bytes: read the record it replaces: %w", len(items[i].Key), err)
		}
		curs[i] = curHeader{hd: hd, err: err}
	}
	return curs
}

// checkPut reports why key and value cannot be Put, or nil.
func (kv *KV) checkPut(key, value []byte) error {
	if err := kv.check(key); err != nil {
		return err
	}
	if int64(len(value)) > kv.opts.MaxValueBytes {
		return fmt.Errorf("%w: value of %d bytes for a key of %d bytes exceeds MaxValueBytes %d", ErrInvalidValueSize, len(value), len(key), kv.opts.MaxValueBytes)
	}
	if !kv.chunked(key, value) {
		return nil
	}
	n := (len(value) + kv.chunkMax - 1) / kv.chunkMax
	if HeaderBytes+len(key) > kv.lim.MaxValueLen {
		return fmt.Errorf("%w: key of %d bytes does not fit a %d-byte record", ErrInvalidKeySize, len(key), kv.lim.MaxValueLen)
	}
	if kv.lim.MaxBatch > 0 && n+1 > kv.lim.MaxBatch {
		return fmt.Errorf("%w: a %d-byte value needs %d chunks of %d bytes, more than the %d commands the namespace takes in one submission", ErrInvalidValueSize, len(value), n, kv.chunkMax, kv.lim.MaxBatch)
	}
	return nil
}

// checkPieced reports why value cannot be Put under key as a pieced
// record of pieces (K20), or nil.
func (kv *KV) checkPieced(key, value []byte, pieces []Piece) error {
	if err := checkPieces(pieces, len(value), kv.chunkMax); err != nil {
		return err
	}
	if HeaderBytes+len(key)+pieceEntryBytes*len(pieces) > kv.lim.MaxValueLen {
		return fmt.Errorf("%w: a table of %d pieces does not fit a %d-byte record", ErrInvalidValueSize, len(pieces), kv.lim.MaxValueLen)
	}
	return nil
}

// windowed reports whether r is written (and read) a window of chunks
// per submission (K14): a big record's chunks beyond chunkWindow; a
// pieced record's only when it does not fit one submission.
func (kv *KV) windowed(r *record) bool {
	if r.hd.pieced {
		return kv.lim.MaxBatch > 0 && int(r.hd.chunks)+1 > kv.lim.MaxBatch
	}
	return r.hd.chunks > chunkWindow
}

// chunked reports whether a Put of value under key needs chunks.
func (kv *KV) chunked(key, value []byte) bool {
	return HeaderBytes+len(key)+len(value) > kv.lim.MaxValueLen
}

// current reads the header a chunked Put replaces: nil when the key has
// none (or a record of another key), an error when it cannot be read.
func current(g *getState) (*header, error) {
	switch {
	case g.err == nil || errors.Is(g.err, ErrKeyNotFound) && g.hd.keyLen != 0:
		return &g.hd, nil // a record of the key (expired ones too)
	case errors.Is(g.err, ErrKeyNotFound):
		return nil, nil
	}
	return nil, g.err
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
	if err := kv.checkPut(key, value); err != nil {
		kv.putErrors.Add(1)
		return err
	}
	h := kv.opts.Hash(key)
	mu := kv.lock(h[:])
	mu.Lock()
	var cur *header
	var err error
	if kv.chunked(key, value) {
		g, _ := kv.readHeader(ctx, key)
		if cur, err = current(g); err != nil {
			mu.Unlock()
			kv.putErrors.Add(1)
			return fmt.Errorf("nvmekv: put key of %d bytes: read the record it replaces: %w", len(key), err)
		}
	}
	r, err := kv.plan(key, value, nil, m, cur)
	if err != nil {
		mu.Unlock()
		kv.putErrors.Add(1)
		return err
	}
	if kv.windowed(r) {
		err = kv.putWindows(ctx, r, key, value)
	} else {
		ops := kv.chain(key, value, r)
		err = kv.ns.Do(ctx, ops...)
		if err == nil {
			err = chainErr(ops)
		}
		kv.releaseChunks(ops)
		kv.countPut(ops, err)
	}
	if err == nil && len(r.cleanup) > 0 {
		_ = kv.ns.Do(ctx, r.cleanup...) // a chunk already gone is not found: nothing to do
	}
	if err == nil && r.sw != nil {
		kv.sweep(ctx, []chunkSweep{*r.sw})
	}
	mu.Unlock()
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
	sc := putScratches.Get().(*putScratch)
	defer sc.done()
	sc.size(len(items))
	curs := kv.currentHeaders(ctx, items, sc.curs)
	sc.curs = curs
	var cleanups [][]*Op
	var sweeps []*chunkSweep
	chains := sc.chains
	batch, idx := sc.batch, sc.idx
	defer func() { sc.batch, sc.idx = batch, idx }()
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
			kv.releaseChunks(chains[i])
			kv.recs.put(chains[i][len(chains[i])-1].Buf) // the header record (chain)
			chains[i] = nil
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
		cur, err := curs[i].hd, curs[i].err
		if err != nil {
			items[i].Err = err
			kv.putErrors.Add(1)
			continue
		}
		r := &sc.recs[i]
		if err := kv.planInto(r, items[i].Key, items[i].Value, items[i].Pieces, items[i].Meta, cur); err != nil {
			items[i].Err = err
			kv.putErrors.Add(1)
			continue
		}
		if r.sw != nil {
			if sweeps == nil {
				sweeps = make([]*chunkSweep, len(items))
			}
			sweeps[i] = r.sw
		}
		if r.cleanup != nil {
			if cleanups == nil {
				cleanups = make([][]*Op, len(items))
			}
			cleanups[i] = r.cleanup
		}
		if kv.windowed(r) { // a big value: alone, a window at a time
			// What is batched goes first: items keep their order.
			if err := flush(); err != nil && first == nil {
				first = err
			}
			if err := kv.putWindows(ctx, r, items[i].Key, items[i].Value); err != nil {
				items[i].Err = fmt.Errorf("nvmekv: put key of %d bytes: %w", len(items[i].Key), err)
			}
			continue
		}
		var ops []*Op
		if r.hd.chunks == 0 { // the header alone, in the scratch's ops
			kv.headerStoreInto(&sc.hdrs[i], r, items[i].Key, items[i].Value)
			sc.one[i] = &sc.hdrs[i]
			ops = sc.one[i : i+1 : i+1]
		} else {
			ops = kv.chain(items[i].Key, items[i].Value, r)
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
	// The chunks of the records replaced, once their new headers are
	// written (K11); a put that failed keeps its old record whole.
	var clean []*Op
	for i, ops := range cleanups {
		if ops != nil && items[i].Err == nil {
			clean = append(clean, ops...)
		}
	}
	if len(clean) > 0 {
		_ = kv.doBatched(ctx, clean) // a chunk already gone is not found: nothing to do
	}
	var sw []chunkSweep
	for i, p := range sweeps {
		if p != nil && items[i].Err == nil {
			sw = append(sw, *p)
		}
	}
	if len(sw) > 0 {
		kv.sweep(ctx, sw)
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

// putScratch is one PutMany's working memory, reused from call to call
// (putScratches) so that a batch of inline puts allocates nothing: the
// headers read, the records planned, the header ops of single-op chains,
// the chains, the submission and its items' indexes.
type putScratch struct {
	curs   []curHeader
	recs   []record
	hdrs   []Op
	one    []*Op
	chains [][]*Op
	batch  []*Op
	idx    []int
}

var putScratches = sync.Pool{New: func() any { return new(putScratch) }}

// size readies sc for n items.
func (sc *putScratch) size(n int) {
	sc.recs = slices.Grow(sc.recs[:0], n)[:n]
	sc.hdrs = slices.Grow(sc.hdrs[:0], n)[:n]
	sc.one = slices.Grow(sc.one[:0], n)[:n]
	sc.chains = slices.Grow(sc.chains[:0], n)[:n]
	sc.batch, sc.idx = sc.batch[:0], sc.idx[:0]
}

// done clears what sc refers to (keys, values, buffers) and pools it.
func (sc *putScratch) done() {
	clear(sc.curs)
	clear(sc.recs)
	clear(sc.hdrs)
	clear(sc.one)
	clear(sc.chains)
	clear(sc.batch[:cap(sc.batch)])
	putScratches.Put(sc)
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
	if !deletable(g) {
		return err
	}
	ops := deleteChain(h, &g.hd)
	if derr := kv.ns.Do(ctx, ops...); derr != nil {
		return derr
	}
	if ops[0].Err != nil {
		return ops[0].Err
	}
	kv.deletes.Add(1)
	return err
}

// DeleteMany deletes keys as Delete does each, in few submissions: every
// header is read in one batch, then every delete chain goes in one batch (a
// chain is never split across submissions). errs[i] is keys[i]'s outcome,
// ErrKeyNotFound if it was absent. The lock stripes of all the keys are held
// throughout, taken in order. A key given twice is deleted once and then
// reported not found.
func (kv *KV) DeleteMany(ctx context.Context, keys [][]byte) []error {
	errs := make([]error, len(keys))
	gs := make([]getState, len(keys))
	var stripes [len(kv.locks)]bool
	for i, k := range keys {
		gs[i].key = k
		if err := kv.check(k); err != nil {
			gs[i].err, gs[i].done = err, true
			continue
		}
		gs[i].h = kv.opts.Hash(k)
		stripes[gs[i].h[0]] = true
	}
	for i, held := range stripes {
		if held {
			kv.locks[i].Lock()
			defer kv.locks[i].Unlock()
		}
	}
	kv.readHeaders(ctx, gs)
	chains := make([][]*Op, len(keys))
	var batch []*Op
	var idx []int
	flush := func() {
		if len(batch) == 0 {
			return
		}
		err := kv.ns.Do(ctx, batch...)
		for _, i := range idx {
			switch {
			case err != nil:
				errs[i] = err
			case chains[i][0].Err != nil:
				errs[i] = chains[i][0].Err
			default:
				kv.deletes.Add(1)
				errs[i] = gs[i].err // nil, or not found for an expired record
			}
		}
		batch, idx = batch[:0], idx[:0]
	}
	seen := make(map[[16]byte]bool, len(keys))
	for i := range gs {
		g := &gs[i]
		if !deletable(g) || seen[g.h] {
			errs[i] = g.err
			if errs[i] == nil {
				errs[i] = fmt.Errorf("%w (deleted earlier in the same DeleteMany)", ErrKeyNotFound)
			}
			continue
		}
		seen[g.h] = true
		ops := deleteChain(g.h, &g.hd)
		if kv.lim.MaxBatch > 0 && len(batch)+len(ops) > kv.lim.MaxBatch {
			flush()
		}
		chains[i] = ops
		batch = append(batch, ops...)
		idx = append(idx, i)
	}
	flush()
	return errs
}

// deletable says whether a header read found a record of the key to delete:
// a live one, or an expired one (deleted too, reported as not found). A
// device error, an absent device key or one holding another user key is
// not deleted.
func deletable(g *getState) bool {
	return g.err == nil || errors.Is(g.err, ErrKeyNotFound) && g.hd.keyLen != 0
}

// deleteChain is the linked chain that deletes a record: its header first
// (so a chain that fails midway never leaves a header naming lost chunks),
// then its chunks, under the keys hd names (set, and length: K16).
func deleteChain(h [16]byte, hd *header) []*Op {
	chunks := hd.chunks
	ops := []*Op{{Code: OpDelete, Key: h[:], Link: chunks > 0}}
	for i := uint32(0); i < chunks; i++ {
		ops = append(ops, &Op{Code: OpDelete, Key: chunkKey(h, hd, i), Link: i+1 < chunks})
	}
	return ops
}

// clearListBytes is the List host buffer of Clear: about 3,000 16-byte
// device keys per List.
const clearListBytes = 64 << 10

// ClearedAll is what Clear returns as its count when the namespace
// cleared itself whole (Clearer): it does not count the keys it drops.
const ClearedAll = -1

// Clearer is a namespace that deletes every key it holds at once (the
// emulated namespace, nvmekv/emu: O(1) in the keys). Clear, when it
// returns nil, has deleted every key stored before the call, durably;
// it returns errors.ErrUnsupported when it cannot, changing nothing.
type Clearer interface {
	Clear(ctx context.Context) error
}

// Clear deletes every key in the namespace, whoever wrote it, and
// returns how many device keys it deleted (K10). A namespace that is a
// Clearer clears itself at once, and Clear returns ClearedAll; any other
// (a KV SSD) is Listed and every key it lists Deleted, record headers and
// chunks alike, and the count is theirs. It is FLUSHALL for a store whose
// user keys nobody can enumerate (a KV namespace lists only device keys).
// A key written while Clear runs may survive it.
func (kv *KV) Clear(ctx context.Context) (int, error) {
	if kv.closed.Load() {
		return 0, ErrClosed
	}
	if c, ok := kv.ns.(Clearer); ok {
		err := c.Clear(ctx)
		if err == nil {
			return ClearedAll, nil
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			return 0, fmt.Errorf("nvmekv: clear: %w", err)
		}
	}
	return kv.clearListed(ctx)
}

// clearListed Lists the namespace from its first key and Deletes what it
// lists until List returns nothing (K10): O(keys) commands, and each List
// costs what the device's List costs.
func (kv *KV) clearListed(ctx context.Context) (int, error) {
	n := 0
	for {
		keys, _, err := kv.ns.List(ctx, nil, clearListBytes)
		if err != nil {
			return n, fmt.Errorf("nvmekv: clear: list: %w", err)
		}
		if len(keys) == 0 {
			return n, nil
		}
		ops := make([]*Op, len(keys))
		for i, k := range keys {
			ops[i] = &Op{Code: OpDelete, Key: append([]byte(nil), k...)}
		}
		if err := kv.doBatched(ctx, ops); err != nil {
			return n, fmt.Errorf("nvmekv: clear: delete: %w", err)
		}
		deleted := 0
		for _, op := range ops {
			switch {
			case op.Err == nil:
				deleted++
			case errors.Is(op.Err, ErrKeyNotFound): // gone meanwhile
			default:
				return n + deleted, fmt.Errorf("nvmekv: clear: delete: %w", op.Err)
			}
		}
		if deleted == 0 {
			return n, fmt.Errorf("%w: clear: List keeps returning %d keys that Delete does not find", ErrUnrecovered, len(keys))
		}
		n += deleted
	}
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
		Misses: kv.misses.Load(), Collisions: kv.collisions.Load(), StaleChunks: kv.stale.Load(), LeftoverChunks: kv.swept.Load(),
		CRCErrors: kv.crcErrs.Load(), Deletes: kv.deletes.Load(), ChunksWritten: kv.chunks.Load(),
		BytesWritten: kv.bw.Load(), BytesRead: kv.br.Load(),
	}
}

// Close closes the namespace. Idempotent.
func (kv *KV) Close() error {
	if kv.closed.Swap(true) {
		return nil
	}
	err := kv.ns.Close()
	kv.chunkBufs.close()
	return err
}
