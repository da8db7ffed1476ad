package nvmekv

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
)

// getState is one Get in progress.
type getState struct {
	key  []byte
	h    [16]byte
	op   Op
	hd   header
	err  error
	done bool
}

// headerOp sets g's Retrieve of its header record into a buffer of size
// bytes (a retry at the stored size gives back the first one).
func (kv *KV) headerOp(g *getState, size int) {
	kv.recs.put(g.op.Buf)
	g.op = Op{Code: OpRetrieve, Key: g.h[:], Buf: kv.recs.get(size)}
}

// releaseHeader gives back g's header buffer (the value was copied out).
func (kv *KV) releaseHeader(g *getState) {
	kv.recs.put(g.op.Buf)
	g.op.Buf = nil
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
	if kv.expired(&hd) {
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

// chunkOps builds the Retrieves of g's chunks, each into a chunk buffer
// (releaseChunks gives them back), or, for a pieced record, a buffer of
// its piece's size from the table (K20).
func (kv *KV) chunkOps(g *getState) ([]*Op, error) {
	ops := make([]*Op, g.hd.chunks)
	if g.hd.pieced {
		t, err := kv.pieceTableOf(g)
		if err != nil {
			return nil, err
		}
		for i := range ops {
			ops[i] = pieceOp(g, t, i)
		}
		return ops, nil
	}
	for i := range ops {
		ops[i] = &Op{Code: OpRetrieve, Key: chunkKey(g.h, &g.hd, uint32(i)), Buf: kv.chunkBuf()}
	}
	return ops, nil
}

// assemble checks chunk headers and the CRC and appends the value to dst.
func (kv *KV) assemble(dst []byte, g *getState, ops []*Op) ([]byte, error) {
	start := len(dst)
	crc := headerCRC(g.op.Buf, g.hd.keyLen)
	for i, op := range ops {
		var err error
		if dst, crc, err = kv.takeChunk(dst, g, i, len(ops), op, crc); err != nil {
			return dst[:start], err
		}
	}
	return kv.checkValue(dst, start, g, crc)
}

// Get appends key's value to dst. A miss, a collision (the device key holds
// another user key), an expired record or a stale chunk is ErrKeyNotFound.
func (kv *KV) Get(ctx context.Context, dst, key []byte) ([]byte, Meta, error) {
	return kv.GetSized(ctx, dst, key, -1)
}

// GetSized is Get for a caller that expects the value to be valueLen bytes
// long (< 0: unknown): the first Retrieve's buffer then holds the whole
// inline record, so a value above HeaderReadBytes takes one device round
// trip instead of two. A wrong guess costs nothing but that: a record
// larger than the buffer is read again at its size, as Get does.
func (kv *KV) GetSized(ctx context.Context, dst, key []byte, valueLen int) ([]byte, Meta, error) {
	items := kv.getMany(ctx, [][]byte{key}, [][]byte{dst}, []int{valueLen})
	it := items[0]
	if it.Err != nil {
		return dst, Meta{}, it.Err
	}
	return it.Value, it.Meta, nil
}

// firstRead is the buffer size of a Get's first Retrieve for a key of
// keyLen bytes whose value is expected to be valueLen bytes (< 0:
// unknown): the inline record when one fits the namespace's value limit
// (putRecord's rule), else HeaderReadBytes (a chunked value's header record
// is small, and an unknown size is most often small too).
func (kv *KV) firstRead(keyLen, valueLen int) int {
	if valueLen < 0 {
		return kv.opts.HeaderReadBytes
	}
	n := HeaderBytes + keyLen + valueLen
	if n <= kv.opts.HeaderReadBytes || n > kv.lim.MaxValueLen {
		return kv.opts.HeaderReadBytes
	}
	return n
}

// GetMany reads several keys: all header Retrieves in one submission, then
// all chunk Retrieves in one more. Per-key outcomes are in the Items.
func (kv *KV) GetMany(ctx context.Context, keys [][]byte) []Item {
	return kv.getMany(ctx, keys, nil, nil)
}

// GetManySized is GetMany with the expected value length of each key
// (valueLens[i] < 0: unknown; see GetSized). valueLens is as long as keys.
func (kv *KV) GetManySized(ctx context.Context, keys [][]byte, valueLens []int) []Item {
	return kv.getMany(ctx, keys, nil, valueLens)
}

// GetManyInto is GetManySized (valueLens may be nil: every length unknown)
// appending each value to dsts[i] (dsts nil, or one per key), so a caller
// that sized its buffers by valueLens gets its values where it wants them.
func (kv *KV) GetManyInto(ctx context.Context, keys [][]byte, valueLens []int, dsts [][]byte) []Item {
	return kv.getMany(ctx, keys, dsts, valueLens)
}

func (kv *KV) getMany(ctx context.Context, keys [][]byte, dsts [][]byte, valueLens []int) []Item {
	items := make([]Item, len(keys))
	b := kv.getBatch(len(keys))
	defer kv.putGetBatch(b)
	gs, ops := b.gs, b.ops
	for i, k := range keys {
		gs[i].key = k
		items[i].Key = k
		if err := kv.check(k); err != nil {
			gs[i].err, gs[i].done = err, true
			continue
		}
		gs[i].h = kv.opts.Hash(k)
		size := kv.opts.HeaderReadBytes
		if valueLens != nil {
			size = kv.firstRead(len(k), valueLens[i])
		}
		kv.headerOp(&gs[i], size)
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
		if !g.done && g.err == nil && g.hd.chunks > 0 && (g.hd.chunks <= chunkWindow || g.hd.pieced) {
			c, err := kv.chunkOps(g)
			if err != nil {
				g.err = err
				continue
			}
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
		case g.hd.chunks > chunkWindow && !g.hd.pieced:
			dst, err = kv.readWindows(ctx, dst, g)
		default:
			dst, err = kv.assemble(dst, g, chunked[i])
			kv.releaseChunks(chunked[i])
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

// getBatchState is a getMany's bookkeeping, lent by KV.getBatches.
type getBatchState struct {
	gs  []getState
	ops []*Op
}

// getBatch returns bookkeeping for n keys: gs cleared, ops empty.
func (kv *KV) getBatch(n int) *getBatchState {
	b, _ := kv.getBatches.Get().(*getBatchState)
	if b == nil || cap(b.gs) < n {
		b = &getBatchState{gs: make([]getState, n), ops: make([]*Op, 0, n)}
	}
	b.gs, b.ops = b.gs[:n], b.ops[:0]
	return b
}

// putGetBatch takes b back once its getMany is done (no Op of it is with
// the namespace any more), dropping what it pointed to.
func (kv *KV) putGetBatch(b *getBatchState) {
	clear(b.gs)
	clear(b.ops[:cap(b.ops)])
	kv.getBatches.Put(b)
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
	gs := []getState{{key: key, h: kv.opts.Hash(key)}}
	kv.readHeaders(ctx, gs)
	return &gs[0], gs[0].err
}

// readHeaders retrieves and checks the headers of gs's keys (key and h set;
// those already done are skipped), their Retrieves batched: only header
// and key are read, the record is taken to end there. Each outcome is in
// gs[i].err and, when a header of the key was found, gs[i].hd.
func (kv *KV) readHeaders(ctx context.Context, gs []getState) {
	var ops []*Op
	for i := range gs {
		if g := &gs[i]; !g.done {
			kv.headerOp(g, HeaderBytes+len(g.key))
			ops = append(ops, &g.op)
		}
	}
	for round := 0; len(ops) > 0 && round < 3; round++ {
		if err := kv.doBatched(ctx, ops); err != nil {
			for _, op := range ops {
				if op.Err == nil {
					op.Err = err
				}
			}
		}
		ops = ops[:0]
		for i := range gs {
			g := &gs[i]
			if !g.done && g.op.Err == nil && int(g.op.DW0) > len(g.op.Buf) && len(g.op.Buf) < HeaderBytes+len(g.key) {
				kv.headerOp(g, int(g.op.DW0)) // a short buffer: read again at the stored size
				ops = append(ops, &g.op)
			}
		}
	}
	for i := range gs {
		g := &gs[i]
		if g.done {
			continue
		}
		g.done = true
		if g.op.Err == nil && int(g.op.DW0) > len(g.op.Buf) {
			// Only the header and key are needed: pretend the record ends there.
			g.op.DW0 = uint32(len(g.op.Buf))
			kv.afterHeaderKeyOnly(g)
			continue
		}
		kv.afterHeader(g)
	}
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
	if kv.expired(&hd) {
		g.err = fmt.Errorf("%w (expired)", ErrKeyNotFound)
	}
}

// expired reports whether a record's header says it has expired (never
// with KeepExpired).
func (kv *KV) expired(hd *header) bool {
	return !kv.opts.KeepExpired && hd.expiry > 0 && hd.expiry <= kv.opts.Clock() // a negative one is past 2262 (backend.Meta.Expiry)
}
