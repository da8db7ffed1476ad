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
	"github.com/tiercache/tiercache/nvmekv/emu/logstore"
	"github.com/tiercache/tiercache/nvmekv/emu/readpath"
)

var bgCtx = context.Background()

// yieldBytes is how many bytes a batch Stores before it lets go of the
// log's lock for a moment (E26).
const yieldBytes = 1 << 20

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
// batch runs with the log read-locked, concurrently with other lookups.
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
		e.lg.RLock()
	} else {
		e.lg.Lock()
	}
	if e.lg.ClosedLocked() {
		e.unlock(ro)
		failAll(ops, ErrClosed)
		return ErrClosed
	}
	if len(ops) > 1 {
		e.lg.TouchLocked(ops) // the index misses of the batch's lookups, side by side
	}
	broken := false
	stored := 0 // bytes stored since the lock was last let go
	for i, op := range ops {
		if stored >= yieldBytes && !ro {
			// A batch of big Stores (a big value's chunks) lets go of the
			// log between them, so that others' lookups and Stores are not
			// held up for the whole batch (E26).
			stored = 0
			e.lg.Unlock()
			runtime.Gosched()
			e.lg.Lock()
			if e.lg.ClosedLocked() {
				e.lg.Unlock()
				for j := range reads {
					reads[j].Op.Err = ErrClosed
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
		var pr readpath.Pending
		res, dw0, pending := e.execLocked(&raw, op.Buf, &pr)
		if pending {
			pr.Op = op
			reads = append(reads, pr)
			continue
		}
		op.Complete(res, uint64(dw0))
		if op.Code == nvmekv.OpFlush && res == 0 {
			flushes = append(flushes, op)
		}
		if failed := e.lg.FailedLocked(); res < 0 && failed != nil && (op.Code == nvmekv.OpStore || op.Code == nvmekv.OpDelete) {
			op.Err = fmt.Errorf("%w (%w)", op.Err, failed)
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
		q = e.lg.TakeReclaimedLocked()
	}
	e.unlock(ro)
	if e.opts.OnReclaim != nil {
		for _, k := range q {
			e.opts.OnReclaim(k)
		}
	}
	if len(reads) > 0 {
		if retry := e.rd.Read(ctx, depth, reads); len(retry) > 0 {
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
		e.lg.RUnlock()
	} else {
		e.lg.Unlock()
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
// Retrieve or Exist needs the log only read-locked (it changes nothing but
// atomic counters); every other command needs it locked.
func (e *Namespace) execLocked(raw *[64]byte, buf []byte, pr *readpath.Pending) (int32, uint32, bool) {
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
	var l logstore.Loc
	var found bool
	switch op {
	case nvmekv.OpRetrieve:
		// The record's read checks its key (logstore E8).
		var err error
		if l, found, err = e.lg.CandidateLocked(&key, kl); err != nil {
			return -int32(syscall.EIO), 0, false
		}
	case nvmekv.OpStore, nvmekv.OpDelete, nvmekv.OpExist:
		slot, err := e.lg.SlotLocked(&key) // exact: inline candidates' keys checked
		if err != nil {
			return -int32(syscall.EIO), 0, false
		}
		l, found = slot, slot != 0 && slot.KLen() == kl
	}
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
		return e.lg.ReplaceLocked(&key, kl, buf, l), 0, false
	case nvmekv.OpRetrieve:
		if !found {
			return status(nvmekv.SCKeyNotExists), 0, false
		}
		if int(c.CDW10) != len(buf) {
			return status(nvmekv.SCInvalidField), 0, false
		}
		if l.Ext() && len(buf) == 0 {
			return 0, uint32(l.VLen()), false // only the size: nothing to read
		}
		if res, dw0, ok := e.lg.ReadBufferedLocked(l, &key, kl, buf); ok {
			return res, dw0, false
		}
		*pr = readpath.Pending{Key: key, Klen: kl, Loc: l, Seq: e.lg.SeqLocked(l.Region()), Epoch: e.lg.Reclaims()}
		return 0, 0, true
	case nvmekv.OpDelete:
		if !found {
			return status(nvmekv.SCKeyNotExists), 0, false
		}
		return e.lg.DeleteLocked(&key, kl, l), 0, false
	case nvmekv.OpExist:
		if !found {
			return status(nvmekv.SCKeyNotExists), 0, false
		}
		return 0, 0, false
	case nvmekv.OpList:
		if int(c.CDW10) != len(buf) {
			return status(nvmekv.SCInvalidField), 0, false
		}
		keys, total, err := e.listLocked(k, len(buf))
		if err != nil {
			return -int32(syscall.EIO), 0, false
		}
		nvmekv.PutList(buf, keys)
		return 0, uint32(total), false
	}
	return status(nvmekv.SCInvalidOpcode), 0, false
}

// listLocked returns, in byte order (then by length), the smallest keys ≥
// start that can fit a List buffer of bufBytes, and how many keys are ≥
// start. It keeps a bounded max-heap, so a huge namespace costs O(n log k)
// in DRAM, plus a read of every region holding a live inline record: the
// index keeps only their keys' tags (logstore E8).
func (e *Namespace) listLocked(start []byte, bufBytes int) ([][]byte, int, error) {
	limit := max(0, (bufBytes-4)/nvmekv.ListEntryBytes(1))
	h := &keyHeap{}
	total := 0
	err := e.lg.EachLocked(func(key [16]byte, klen int) {
		k := listKey{k: key, n: uint8(klen)}
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
	if err != nil {
		return nil, 0, err
	}
	keys := make([][]byte, h.Len())
	for i := len(keys) - 1; i >= 0; i-- {
		k := heap.Pop(h).(listKey)
		keys[i] = k.bytes()
	}
	return keys, total, nil
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
