package emu

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"runtime"
	"syscall"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/uring"
)

var bgCtx = context.Background()

// yieldBytes is how many bytes a batch Stores before it lets go of the
// namespace lock for a moment (E23).
const yieldBytes = 1 << 20

// pendingRead is a Retrieve that needs the disk.
type pendingRead struct {
	op    *nvmekv.Op
	key   [16]byte
	klen  int
	l     loc
	seq   uint64 // of the record's region at lookup
	epoch uint64 // e.reclaims at lookup
}

// Do runs ops in order against the emulated controller: each op is encoded
// into its 64-byte NVMe command, executed from those bytes, and its
// completion (status, DW0) decoded by nvmekv like a device's. A failed op
// cancels the rest of its Link chain. Retrieves that need the disk are read
// in one submission after the others ran.
func (e *Namespace) Do(ctx context.Context, ops ...*nvmekv.Op) error {
	c := e.getCall()
	err := e.do(ctx, 0, ops, c)
	e.putCall(c)
	return err
}

// Retrieve reads key's value into buf and returns the stored value size
// (nvmekv.Namespace): Do of one Retrieve op, without allocating.
func (e *Namespace) Retrieve(ctx context.Context, key, buf []byte) (int, error) {
	n, err := e.one(ctx, nvmekv.Op{Code: nvmekv.OpRetrieve, Key: key, Buf: buf})
	return int(n), err
}

// Store stores value under key with Store options opts (nvmekv.Namespace):
// Do of one Store op, without allocating an Op.
func (e *Namespace) Store(ctx context.Context, key, value []byte, opts uint8) error {
	_, err := e.one(ctx, nvmekv.Op{Code: nvmekv.OpStore, Key: key, Buf: value, Options: opts})
	return err
}

// Delete removes key (nvmekv.Namespace): Do of one Delete op, without
// allocating an Op.
func (e *Namespace) Delete(ctx context.Context, key []byte) error {
	_, err := e.one(ctx, nvmekv.Op{Code: nvmekv.OpDelete, Key: key})
	return err
}

// one runs op as a batch of one in a pooled call and returns its DW0 and
// error (Do's error, else the op's).
func (e *Namespace) one(ctx context.Context, op nvmekv.Op) (uint32, error) {
	c := e.getCall()
	c.op = op
	c.one[0] = &c.op
	err := e.do(ctx, 0, c.one[:], c)
	if err == nil {
		err = c.op.Err
	}
	dw0 := c.op.DW0
	e.putCall(c)
	return dw0, err
}

// readOnly reports whether ops only look keys up (Retrieve, Exist): such a
// batch runs with e.mu read-locked, concurrently with other lookups.
func readOnly(ops []*nvmekv.Op) bool {
	for _, op := range ops {
		if op.Code != nvmekv.OpRetrieve && op.Code != nvmekv.OpExist {
			return false
		}
	}
	return true
}

// do runs ops with c's scratch state (c.op and c.one may hold ops itself).
func (e *Namespace) do(ctx context.Context, depth int, ops []*nvmekv.Op, c *call) error {
	if err := ctx.Err(); err != nil {
		failAll(ops, err)
		return err
	}
	reads, flushes := c.reads[:0], c.flushes[:0]
	wrote := false
	ro := readOnly(ops)
	if ro {
		e.mu.RLock()
	} else {
		e.mu.Lock()
	}
	if e.closed {
		e.unlock(ro)
		failAll(ops, ErrClosed)
		return ErrClosed
	}
	broken := false
	stored := 0 // bytes stored since the lock was last let go
	for i, op := range ops {
		if stored >= yieldBytes && !ro {
			// A batch of big Stores (a big value's chunks) lets go of the
			// namespace between them, so that others' lookups and Stores
			// are not held up for the whole batch (E23).
			stored = 0
			e.mu.Unlock()
			runtime.Gosched()
			e.mu.Lock()
			if e.closed {
				e.mu.Unlock()
				for _, pr := range reads {
					pr.op.Err = ErrClosed
				}
				c.reads = reads
				failAll(ops[i:], ErrClosed)
				return ErrClosed
			}
		}
		op.DW0, op.Err = 0, nil
		if broken {
			op.Complete(-int32(syscall.ECANCELED), 0)
			broken = op.Link
			continue
		}
		cmd, err := op.Encode(e.opts.NSID)
		if err != nil {
			op.Err = err
			broken = op.Link
			continue
		}
		raw := cmd.Bytes()
		var pr pendingRead
		res, dw0, pending := e.execLocked(&raw, op.Buf, &pr)
		if pending {
			pr.op = op
			reads = append(reads, pr)
			continue
		}
		op.Complete(res, uint64(dw0))
		if op.Code == nvmekv.OpFlush && res == 0 {
			flushes = append(flushes, op)
		}
		if res < 0 && e.failed != nil && (op.Code == nvmekv.OpStore || op.Code == nvmekv.OpDelete) {
			op.Err = fmt.Errorf("%w (%w)", op.Err, e.failed)
		}
		if op.Err != nil {
			broken = op.Link
		} else if op.Code == nvmekv.OpStore || op.Code == nvmekv.OpDelete {
			wrote = true
			stored += len(op.Buf)
		}
	}
	c.reads, c.flushes = reads, flushes // keep what grew; putCall clears them
	var q [][16]byte
	if !ro {
		q = e.reclaimQ
		e.reclaimQ = nil
	}
	e.unlock(ro)
	if e.opts.OnReclaim != nil {
		for _, k := range q {
			e.opts.OnReclaim(k)
		}
	}
	if len(reads) > 0 {
		if retry := e.doReads(ctx, depth, reads); len(retry) > 0 {
			rc := e.getCall()
			if err := e.do(ctx, depth+1, retry, rc); err != nil {
				failAll(retry, err)
			}
			e.putCall(rc)
		}
	}
	if len(flushes) > 0 {
		if err := e.Flush(ctx); err != nil {
			for _, op := range flushes {
				op.Err = fmt.Errorf("emu: Flush command: %w", err)
			}
		}
	}
	if wrote && e.opts.SyncWrites {
		if err := e.Flush(ctx); err != nil {
			for _, op := range ops {
				if op.Err == nil && (op.Code == nvmekv.OpStore || op.Code == nvmekv.OpDelete) {
					op.Err = fmt.Errorf("emu: %s not durable: %w", op.Code, err)
				}
			}
		}
	}
	return nil
}

func (e *Namespace) unlock(read bool) {
	if read {
		e.mu.RUnlock()
	} else {
		e.mu.Unlock()
	}
}

func failAll(ops []*nvmekv.Op, err error) {
	for _, op := range ops {
		op.Err = err
	}
}

func status(sc uint8) int32 { return nvmekv.Status(0, sc, true) }

// execLocked is the controller: it decodes a 64-byte KV command and
// executes it with data buffer buf. It returns cqe.res (0, -errno or an
// NVMe status) and DW0, or fills *pr and reports a pending disk read. A
// Retrieve or Exist needs e.mu only read-locked (it changes nothing but
// atomic counters); every other command needs it locked.
func (e *Namespace) execLocked(raw *[64]byte, buf []byte, pr *pendingRead) (int32, uint32, bool) {
	c := nvmekv.ParseCommand(raw)
	if c.NSID != e.opts.NSID {
		return status(0x0b), 0, false // Invalid Namespace or Format
	}
	if c.Flags != 0 {
		return status(nvmekv.SCInvalidField), 0, false
	}
	op := nvmekv.Opcode(c.Opcode)
	if op == nvmekv.OpFlush {
		return 0, 0, false // Do runs Namespace.Flush after the batch (the lock is held here)
	}
	key, kl, ok := nvmekv.UnpackKey(&c)
	if !ok || (kl == 0 && op != nvmekv.OpList) {
		return status(nvmekv.SCInvalidKeySize), 0, false
	}
	k := key[:kl]
	l, found := e.lookupLocked(&key, kl)
	switch op {
	case nvmekv.OpStore:
		if int(c.CDW10) > e.opts.MaxValueBytes || int(c.CDW10) != len(buf) {
			return status(nvmekv.SCInvalidValueSize), 0, false
		}
		o := c.Options()
		if o&nvmekv.StoreMustExist != 0 && !found {
			return status(nvmekv.SCKeyNotExists), 0, false
		}
		if o&nvmekv.StoreMustNotExist != 0 && found {
			return status(nvmekv.SCKeyExists), 0, false
		}
		nl, st := e.appendLocked(kindStore, k, buf)
		if st != 0 {
			return st, 0, false
		}
		old, _ := e.idx.get(&key)
		e.setLocked(&key, nl)
		e.journalLocked(&key, old)
		return 0, 0, false
	case nvmekv.OpRetrieve:
		if !found {
			return status(nvmekv.SCKeyNotExists), 0, false
		}
		if int(c.CDW10) != len(buf) {
			return status(nvmekv.SCInvalidField), 0, false
		}
		if l.ext() && len(buf) == 0 {
			return 0, uint32(l.vlen()), false // only the size: nothing to read
		}
		if b := e.bufOfLocked(l.region()); b != nil {
			e.bufferReads.Add(1)
			if l.ext() {
				copy(buf, b.mem[l.extOff():l.extOff()+l.vlen()])
				return 0, uint32(l.vlen()), false
			}
			res, dw0 := copyValue(b.mem, l.off(), e.regs[l.region()].seq, &key, kl, buf, e.opts.RegionBytes)
			return res, dw0, false
		}
		*pr = pendingRead{key: key, klen: kl, l: l, seq: e.regs[l.region()].seq, epoch: e.reclaims.Load()}
		return 0, 0, true
	case nvmekv.OpDelete:
		if !found {
			return status(nvmekv.SCKeyNotExists), 0, false
		}
		if _, st := e.appendLocked(kindDelete, k, nil); st != 0 {
			return st, 0, false
		}
		e.journalLocked(&key, e.idx.del(&key))
		e.dropLocked(l)
		return 0, 0, false
	case nvmekv.OpExist:
		if !found {
			return status(nvmekv.SCKeyNotExists), 0, false
		}
		return 0, 0, false
	case nvmekv.OpList:
		if int(c.CDW10) != len(buf) {
			return status(nvmekv.SCInvalidField), 0, false
		}
		keys, total := e.listLocked(k, len(buf))
		nvmekv.PutList(buf, keys)
		return 0, uint32(total), false
	}
	return status(nvmekv.SCInvalidOpcode), 0, false
}

// lookupLocked finds key (of length kl); a key stored with another length
// but the same zero-padded bytes does not match.
func (e *Namespace) lookupLocked(key *[16]byte, kl int) (loc, bool) {
	if kl == 0 {
		return 0, false
	}
	l, ok := e.idx.get(key)
	if !ok || l.klen() != kl {
		return 0, false
	}
	return l, true
}

func (e *Namespace) setLocked(key *[16]byte, l loc) {
	if old := e.idx.put(key, l); old != 0 {
		e.dropLocked(old)
	}
	e.regs[l.region()].live++
	e.regs[l.region()].liveB += uint32(l.size())
	e.liveBytes += int64(l.size())
}

func (e *Namespace) dropLocked(old loc) {
	if r := old.region(); e.regs[r].live > 0 {
		e.regs[r].live--
		e.regs[r].liveB -= min(e.regs[r].liveB, uint32(old.size()))
	}
	e.liveBytes -= int64(old.size())
}

// bufOfLocked returns the write buffer still holding region r, if any.
func (e *Namespace) bufOfLocked(r int) *wbuf {
	for _, b := range e.bufs {
		if b.region == r && b.seq == e.regs[r].seq {
			return b
		}
	}
	return nil
}

// copyValue checks the inline record at img[off:] and copies its value
// into buf.
func copyValue(img []byte, off int, seq uint64, key *[16]byte, kl int, buf []byte, maxValue int) (int32, uint32) {
	r, ok := parseRecord(img, off, seq, maxValue, len(img))
	if !ok || r.kind != kindStore || r.klen != kl || r.key != *key {
		return status(nvmekv.SCUnrecovered), 0
	}
	copy(buf, r.value(img, off))
	return 0, uint32(r.vlen)
}

// listLocked returns, in byte order (then by length), the smallest keys ≥
// start that can fit a List buffer of bufBytes, and how many keys are ≥
// start. It keeps a bounded max-heap, so a huge namespace costs O(n log k).
func (e *Namespace) listLocked(start []byte, bufBytes int) ([][]byte, int) {
	limit := max(0, (bufBytes-4)/nvmekv.ListEntryBytes(1))
	h := &keyHeap{}
	total := 0
	e.idx.each(func(a, b uint64, l loc) {
		k := listKey{k: joinKey(a, b), n: uint8(l.klen())}
		if bytes.Compare(k.bytes(), start) < 0 {
			return
		}
		total++
		if h.Len() < limit {
			heap.Push(h, k)
		} else if h.Len() > 0 && lessKey(k, (*h)[0]) {
			(*h)[0] = k
			heap.Fix(h, 0)
		}
	})
	keys := make([][]byte, h.Len())
	for i := len(keys) - 1; i >= 0; i-- {
		k := heap.Pop(h).(listKey)
		keys[i] = k.bytes()
	}
	return keys, total
}

type listKey struct {
	k [16]byte
	n uint8
}

func (k *listKey) bytes() []byte { return k.k[:k.n] }

func lessKey(a, b listKey) bool { return bytes.Compare(a.bytes(), b.bytes()) < 0 }

// keyHeap is a max-heap of list keys (the root is the largest kept).
type keyHeap []listKey

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return lessKey(h[j], h[i]) }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(listKey)) }
func (h *keyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// doReads reads every pending Retrieve and completes them; it returns the
// ops whose record moved meanwhile (to run again). Reads go in waves of at
// most e.wave (≤ ReadSlots and ≤ the ring's largest group); each wave takes
// its slots all at once and returns them before the next wave, so any batch
// size and any number of concurrent batches complete.
func (e *Namespace) doReads(ctx context.Context, depth int, reads []pendingRead) []*nvmekv.Op {
	e.ioMu.RLock()
	defer e.ioMu.RUnlock()
	if e.readSlab == nil {
		for _, pr := range reads {
			pr.op.Err = ErrClosed
		}
		return nil
	}
	var retry []*nvmekv.Op
	for len(reads) > 0 {
		n := min(len(reads), e.wave)
		if err := ctx.Err(); err != nil {
			for _, pr := range reads {
				pr.op.Err = err
			}
			break
		}
		retry = e.readWave(ctx, depth, reads[:n], retry)
		reads = reads[n:]
	}
	return retry
}

// readWave reads up to e.wave pending Retrieves in one submission, each
// as one read of its record's extent rounded out to the read alignment.
// The reads go to a Front with Submit, or run on the batch ring (E16), and
// complete through Done into a pooled wave (no per-read allocation); the
// caller waits for the whole wave.
func (e *Namespace) readWave(ctx context.Context, depth int, reads []pendingRead, retry []*nvmekv.Op) []*nvmekv.Op {
	w := e.waves.Get().(*wave)
	w.grow(len(reads))
	need := 0
	for i, pr := range reads {
		var off int64
		var size int
		if pr.l.ext() {
			// An extent is block aligned and read alone: only as much of
			// the value as the buffer takes.
			off, size = e.regionOff(pr.l.region())+int64(pr.l.extOff()), min(pr.l.vlen(), len(pr.op.Buf))
		} else {
			off, size = e.regionOff(pr.l.region())+int64(pr.l.off()), pr.l.size()
		}
		a := int64(e.rAlign)
		start := off &^ (a - 1)
		n := int((off - start + int64(size) + a - 1) &^ (a - 1))
		r := w.rds[i]
		r.mem, r.slot, r.start, r.n, r.skip, r.res, r.err = nil, -1, start, n, int(off-start), 0, nil
		// An extent read that fills the caller's buffer exactly, with the
		// buffer aligned for O_DIRECT, goes straight into it: no slot, no
		// copy (a 4 KiB value into a 4 KiB buffer). The buffer is on the
		// Go heap (it escapes into the pooled call) and the caller waits
		// for the read, so it stays put and alive while the kernel fills it.
		r.direct = pr.l.ext() && start == off && n == size && aligned(pr.op.Buf, e.rAlign)
		if n <= readSlotBytes && !r.direct {
			need++
		}
	}
	br := e.takeBatch(len(reads))
	var front *uring.Front
	var fixed, quick bool
	if br != nil {
		fixed = br.fixed
		defer func() { e.batch <- br }()
	} else {
		front, fixed, quick = e.readFront(len(reads))
		defer e.readDone(quick, len(reads))
	}
	w.slots = e.slots.get(w.slots[:0], need)
	got := w.slots
	w.reqs = w.reqs[:0]
	nb := 0
	for i := range reads {
		r := w.rds[i]
		if r.direct {
			r.mem = reads[i].op.Buf[:r.n]
			e.directReads.Add(1)
		} else if r.n <= readSlotBytes {
			r.slot, got = got[len(got)-1], got[:len(got)-1]
			r.mem = e.readSlab[r.slot*readSlotBytes : r.slot*readSlotBytes+r.n]
		} else {
			m, err := mapBuf(r.n)
			if err != nil {
				r.err = err
				continue
			}
			r.mem = m
		}
		if e.maxXfer > 0 && r.n > e.maxXfer {
			// Larger than one command may move: read it synchronously,
			// in pieces (dev.Device.ReadAt).
			r.res = int32(r.n)
			if err := e.disk.ReadAt(r.mem, r.start); err != nil {
				r.err = err
			}
			continue
		}
		if res, refused := e.refuse(false, r.start, r.n); refused {
			r.res = res
			continue
		}
		r.disk, r.fixed, r.bufIdx = e.disk, fixed && r.slot >= 0, uint16(len(e.bufs))
		w.reqs = append(w.reqs, &r.req)
		nb += r.n
	}
	if len(w.reqs) > 0 {
		w.left.Store(int32(len(w.reqs)))
		if br != nil {
			// Every Done has run when RunEach returns; one that it
			// cancelled says so with -ECANCELED, as below.
			if err := br.ring.RunEach(w.reqs, br.watch); err != nil {
				for i := range reads {
					if r := w.rds[i]; r.err == nil && r.res == -int32(syscall.ECANCELED) {
						r.err = err
					}
				}
			}
		} else if err := front.Submit(w.reqs...); err != nil {
			for _, q := range w.reqs {
				q.Done(uring.Result{Res: -int32(syscall.ECANCELED)})
			}
			for i := range reads {
				if r := w.rds[i]; r.err == nil && r.res == -int32(syscall.ECANCELED) {
					r.err = err
				}
			}
		}
		<-w.done
		e.diskReads.Add(uint64(len(w.reqs)))
		if quick {
			e.quickReads.Add(uint64(len(w.reqs)))
		}
		if br != nil {
			e.batchReads.Add(uint64(len(w.reqs)))
		}
		e.readBytes.Add(uint64(nb))
	}
	free := w.slots[:0]
	for i, pr := range reads {
		r := w.rds[i]
		switch {
		case r.err != nil:
			pr.op.Err = fmt.Errorf("emu: Retrieve: read %d bytes at offset %d of %s: %w", r.n, r.start, e.opts.Path, r.err)
		case r.res < 0:
			pr.op.Complete(r.res, 0)
			pr.op.Err = fmt.Errorf("emu: read %s at offset %d: %w", e.opts.Path, r.start, pr.op.Err)
		case pr.l.ext():
			// No header to check: the region must not have been reclaimed
			// (and so rewritten) between the lookup and the read's end.
			st, dw0 := int32(0), uint32(pr.l.vlen())
			if e.reclaims.Load() != pr.epoch && e.regionChanged(&pr) {
				if depth < 3 {
					e.readRetries.Add(1)
					retry = append(retry, pr.op)
					break
				}
				st, dw0 = status(nvmekv.SCUnrecovered), 0
			} else if int(r.res) < min(pr.l.vlen(), len(pr.op.Buf)) {
				st, dw0 = status(nvmekv.SCUnrecovered), 0
			} else if !r.direct {
				copy(pr.op.Buf, r.mem[:min(pr.l.vlen(), len(pr.op.Buf))])
			}
			pr.op.Complete(st, uint64(dw0))
		case int(r.res) < r.skip+pr.l.size():
			pr.op.Complete(status(nvmekv.SCUnrecovered), 0)
		default:
			st, dw0 := copyValue(r.mem[:r.skip+pr.l.size()], r.skip, pr.seq, &pr.key, pr.klen, pr.op.Buf, e.opts.RegionBytes)
			if st != 0 && depth < 3 && e.moved(&pr) {
				e.readRetries.Add(1)
				retry = append(retry, pr.op)
				break
			}
			pr.op.Complete(st, uint64(dw0))
		}
		if r.slot >= 0 {
			free = append(free, r.slot)
		} else if r.mem != nil && !r.direct {
			unmapBuf(r.mem)
		}
		r.mem, r.direct = nil, false
	}
	e.slots.put(free)
	w.slots = free[:0]
	clear(w.reqs)
	e.waves.Put(w)
	return retry
}

// moved reports whether pr's record was replaced or reclaimed after it was
// looked up (so the read raced and is retried, not an error).
func (e *Namespace) moved(pr *pendingRead) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	l, ok := e.lookupLocked(&pr.key, pr.klen)
	return !ok || l != pr.l || e.regs[pr.l.region()].seq != pr.seq
}

// regionChanged reports whether pr's region was reclaimed after pr was
// looked up (an extent read may then hold newer data: it is retried).
func (e *Namespace) regionChanged(pr *pendingRead) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.regs[pr.l.region()].seq != pr.seq
}

// Admin executes an admin command from its 64 bytes: Identify CNS 03h (a
// CSI descriptor saying 1) and CNS 05h/CSI 1 (the KV namespace data), so the
// Identify path can be exercised without a device. buf must be 4096 bytes.
func (e *Namespace) Admin(raw *[64]byte, buf []byte) (int32, error) {
	c := nvmekv.ParseCommand(raw)
	if c.Opcode != nvmekv.AdminOpIdentify || len(buf) < nvmekv.IdentifyBytes {
		return status(nvmekv.SCInvalidOpcode), errors.New("emu: only Identify with a 4096-byte buffer is emulated")
	}
	clear(buf[:nvmekv.IdentifyBytes])
	cns, csi := uint8(c.CDW10), uint8(c.CDW11>>24)
	switch {
	case cns == nvmekv.CNSNSDescriptorList && c.NSID == e.opts.NSID:
		copy(buf, []byte{nvmekv.NIDTCSI, 1, 0, 0, nvmekv.CSIKV})
	case cns == nvmekv.CNSIOCSNamespace && csi == nvmekv.CSIKV && c.NSID == e.opts.NSID:
		lim := e.Limits()
		n := nvmekv.KVNamespace{Size: lim.Capacity, Utilization: lim.Utilization,
			Formats: []nvmekv.KVFormat{{MaxKeyLen: nvmekv.MaxKeyLen, MaxValueLen: uint32(lim.MaxValueLen), MaxKeys: e.opts.MaxKeys}}}
		nvmekv.PutKVNamespace(buf, &n)
	default:
		return status(nvmekv.SCInvalidField), nil
	}
	return 0, nil
}
