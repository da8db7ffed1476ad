package nvmekv

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime"
)

// Big values (K14). A record of more than chunkWindow chunks is written
// and read chunkWindow chunks per submission, through chunk buffers the KV
// lends and takes back (chunkBuf, releaseChunks; off the Go heap,
// chunkbufs.go) instead of fresh ones, and
// its CRC and copies run a stepBytes at a time with a yield between steps.
// A 64 MiB value in one submission took 64 MiB of new zeroed buffers each
// way, and its CRC and copies held a P for tens of milliseconds: other
// clients' commands, and the collector's stop-the-world, waited for them
// (issue 18 item 5).
const (
	// chunkWindow is how many chunks one submission of a big record
	// carries: 8 MiB at the emulated store's 1 MiB chunks.
	chunkWindow = 8
	// stepBytes is how many bytes a big value's CRC or copy handles
	// between yields.
	stepBytes = 1 << 20
)

// window is how many chunks one submission of a big record carries:
// chunkWindow, or fewer when the namespace takes fewer commands at once.
func (kv *KV) window() int {
	if kv.lim.MaxBatch > 0 && kv.lim.MaxBatch < chunkWindow {
		return kv.lim.MaxBatch
	}
	return chunkWindow
}

// chunkBuf lends a buffer of ChunkHdrBytes+chunkMax bytes (the largest
// chunk record); its bytes are not cleared.
func (kv *KV) chunkBuf() []byte { return kv.chunkBufs.get() }

// releaseChunks takes back the chunk buffers of ops, which are done: the
// namespace no longer holds them once Do returned (Op.Buf caveat).
func (kv *KV) releaseChunks(ops []*Op) {
	for _, op := range ops {
		if kv.chunkBufs.put(op.Buf) {
			op.Buf = nil
		}
	}
}

// crcSteps is crc32.Update(crc, castagnoli, p) a stepBytes at a time,
// yielding the P between steps.
func crcSteps(crc uint32, p []byte) uint32 {
	for len(p) > stepBytes {
		crc = crc32.Update(crc, castagnoli, p[:stepBytes])
		p = p[stepBytes:]
		runtime.Gosched()
	}
	return crc32.Update(crc, castagnoli, p)
}

// putWindows writes r, a record of more than chunkWindow chunks: its
// chunks a window at a time, each window one linked chain in one
// submission, and its header only once every chunk was written (K5: a put
// that fails part-way never publishes its header; the chunks it wrote are
// leftovers that a later put of the key sweeps, K13).
func (kv *KV) putWindows(ctx context.Context, r *record, key, value []byte) error {
	n, win := int(r.hd.chunks), kv.window()
	if r.hd.pieced {
		win = max(kv.lim.MaxBatch-1, 1) // pieces are small: as many as a submission takes
	}
	bufs := make([][]byte, min(win, chunkWindow))
	for i := range bufs {
		bufs[i] = kv.chunkBuf()
	}
	defer func() {
		for _, b := range bufs {
			kv.chunkBufs.put(b)
		}
	}()
	var written uint64
	ops := make([]*Op, 0, win)
	for first := 0; first < n; first += win {
		ops = ops[:0]
		for i := first; i < min(n, first+win); i++ {
			var buf []byte
			if !r.hd.pieced {
				buf = bufs[i-first]
			}
			ops = append(ops, kv.chunkStore(r, value, i, buf))
			runtime.Gosched() // after each chunk's copy
		}
		ops[len(ops)-1].Link = false // the chain of this window ends here
		err := kv.ns.Do(ctx, ops...)
		if err == nil {
			err = chainErr(ops)
		}
		if err != nil {
			kv.putErrors.Add(1)
			return fmt.Errorf("chunk window %d..%d of %d: %w", first, first+len(ops)-1, n, err)
		}
		for _, op := range ops {
			written += uint64(len(op.Buf))
		}
	}
	hop := kv.headerStore(r, key, value)
	err := kv.ns.Do(ctx, hop)
	if err == nil {
		err = hop.Err
	}
	if err != nil {
		kv.putErrors.Add(1)
		return err
	}
	kv.puts.Add(1)
	kv.chunks.Add(uint64(n))
	kv.bw.Add(written + uint64(len(hop.Buf)))
	return nil
}

// readWindows appends the value of g, a record of more than chunkWindow
// chunks whose header was read, to dst: its chunks a window at a time
// into lent buffers, each checked (put ID, index) and copied out and its
// CRC taken a step at a time, while the next window's reads are in
// flight (two windows, so the device works while the CPU checks and
// copies; with one P too, K14). dst grows once, to the value's length,
// when that is within MaxValueBytes (a length read from the device is not
// trusted beyond it).
func (kv *KV) readWindows(ctx context.Context, dst []byte, g *getState) ([]byte, error) {
	start := len(dst)
	if vl := g.hd.valueLen; vl <= uint64(kv.opts.MaxValueBytes) && uint64(cap(dst)-len(dst)) < vl {
		nd := make([]byte, len(dst), len(dst)+int(vl))
		copy(nd, dst)
		dst = nd
	}
	n, win := int(g.hd.chunks), kv.window()
	crc := headerCRC(g.op.Buf, g.hd.keyLen)
	cur := kv.windowOps(g, 0, min(n, win))
	err := kv.ns.Do(ctx, cur...)
	var next []*Op
	var nextErr error
	done := make(chan error, 1)
	for first := 0; first < n; first += win {
		next = nil
		if err == nil && first+win < n {
			next = kv.windowOps(g, first+win, min(n, first+2*win))
			go func(ops []*Op) { done <- kv.ns.Do(ctx, ops...) }(next)
			// With one P (a sidecar pinned to one core) the new goroutine
			// would run only once this one blocks, after it checked and
			// copied the whole window: the device idled meanwhile. Yield
			// so that the next window's reads are submitted first.
			runtime.Gosched()
		}
		for j := 0; err == nil && j < len(cur); j++ {
			if j > 0 {
				// Let the ring's owner reap and submit between chunks
				// (one P: it waits for this goroutine to yield).
				runtime.Gosched()
			}
			dst, crc, err = kv.takeChunk(dst, g, first+j, n, cur[j], crc)
		}
		if next != nil {
			nextErr = <-done // the namespace holds next's buffers until its Do returned
		}
		kv.releaseChunks(cur)
		if err != nil {
			kv.releaseChunks(next)
			return dst[:start], err
		}
		cur, err = next, nextErr
	}
	return kv.checkValue(dst, start, g, crc)
}

// windowOps is the Retrieves of chunks first..end-1 of g's record, each
// into a lent chunk buffer.
func (kv *KV) windowOps(g *getState, first, end int) []*Op {
	ops := make([]*Op, 0, end-first)
	for i := first; i < end; i++ {
		ops = append(ops, &Op{Code: OpRetrieve, Key: chunkKey(g.h, &g.hd, uint32(i)), Buf: kv.chunkBuf()})
	}
	return ops
}

// takeChunk checks the Retrieve of chunk i (of n) of g's record and
// appends its payload to dst, updating the record's CRC.
func (kv *KV) takeChunk(dst []byte, g *getState, i, n int, op *Op, crc uint32) ([]byte, uint32, error) {
	if op.Err != nil {
		if errors.Is(op.Err, ErrKeyNotFound) {
			kv.stale.Add(1)
			return dst, crc, fmt.Errorf("%w (chunk %d of %d is missing)", ErrKeyNotFound, i, n)
		}
		return dst, crc, op.Err
	}
	m := min(int(op.DW0), len(op.Buf))
	id, idx, ok := parseChunkHdr(op.Buf[:m])
	if !ok || id != g.hd.putID || idx != uint32(i) {
		kv.stale.Add(1)
		return dst, crc, fmt.Errorf("%w (chunk %d belongs to another put)", ErrKeyNotFound, i)
	}
	p := op.Buf[ChunkHdrBytes:m]
	kv.br.Add(uint64(m))
	crc = crcSteps(crc, p)
	dst = append(dst, p...)
	return dst, crc, nil
}

// checkValue checks the assembled value dst[start:] against g's header:
// its length and its CRC.
func (kv *KV) checkValue(dst []byte, start int, g *getState, crc uint32) ([]byte, error) {
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
