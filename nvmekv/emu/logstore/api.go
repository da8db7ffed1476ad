package logstore

import (
	"fmt"

	"github.com/tiercache/tiercache/nvmekv"
)

// The interpreter's side of the log (nvmekv/emu): it takes the lock for a
// batch of commands and calls these.

// Lock, Unlock, RLock and RUnlock take the log's lock: read-locked by a
// batch that only looks keys up, locked by every other.
func (lg *Log) Lock()    { lg.mu.Lock() }
func (lg *Log) Unlock()  { lg.mu.Unlock() }
func (lg *Log) RLock()   { lg.mu.RLock() }
func (lg *Log) RUnlock() { lg.mu.RUnlock() }

// ClosedLocked reports a closed log; FailedLocked why it is read-only
// (E7), nil while writable.
func (lg *Log) ClosedLocked() bool  { return lg.closed }
func (lg *Log) FailedLocked() error { return lg.failed }

// StoreLocked appends a store record of value under key (of length kl)
// and points the index at it (journaled, E21). It returns 0, or the NVMe
// status (Capacity Exceeded in a full Strict log) or -errno (a read-only
// log, or a candidate's header that could not be read: nothing changed)
// to report.
func (lg *Log) StoreLocked(key *[16]byte, kl int, value []byte) int32 {
	old, err := lg.SlotLocked(key)
	if err != nil {
		return -int32(errnoOf(err))
	}
	return lg.ReplaceLocked(key, kl, value, old)
}

// ReplaceLocked is StoreLocked of a key whose entry the caller found at
// old (SlotLocked, or 0: absent) under this lock hold: no key is checked
// again.
func (lg *Log) ReplaceLocked(key *[16]byte, kl int, value []byte, old Loc) int32 {
	cur := lg.cur
	lg.moves = lg.moves[:0]
	nl, st := lg.appendLocked(kindStore, key[:kl], value)
	if st != 0 {
		return st
	}
	old = lg.followLocked(key, old, cur)
	lg.setLocked(key, old, nl)
	lg.journalLocked(key, old, nl)
	return 0
}

// DeleteLocked appends a delete record for key (of length kl, whose live
// record is at l, as FindLocked found it) and drops it from the index
// (journaled). It returns as StoreLocked does.
func (lg *Log) DeleteLocked(key *[16]byte, kl int, l Loc) int32 {
	cur := lg.cur
	lg.moves = lg.moves[:0]
	if _, st := lg.appendLocked(kindDelete, key[:kl], nil); st != 0 {
		return st
	}
	if l = lg.followLocked(key, l, cur); l != 0 {
		lg.idx.replace(key, l, 0)
		lg.dropLocked(l)
	}
	lg.journalLocked(key, l, 0)
	return 0
}

// locMove is a record Strict-mode evacuation moved (lg.moves).
type locMove struct{ from, to Loc }

// followLocked returns where key's entry, at l before an append that
// began with region cur open, is after it: l, or where the append's
// evacuations moved it (in the order they ran: a Loc holds one record at
// a time), or 0 if the append's reclaim dropped it. No key is checked:
// each Loc names one record. An append that opened no region (most)
// moved and dropped nothing.
func (lg *Log) followLocked(key *[16]byte, l Loc, cur int) Loc {
	if lg.cur == cur && len(lg.moves) == 0 {
		return l
	}
	for _, m := range lg.moves {
		if l != 0 && m.from == l {
			l = m.to
		}
	}
	if l != 0 && !lg.idx.has(key, l) {
		return 0
	}
	return l
}

// ReadBufferedLocked serves the value of key's record at l into buf if
// its region is still in a write buffer: ok, and the command's result
// (0 or Unrecovered Error when the inline record does not check, E2) and
// the value's size. ok false: the record must be read from the device.
func (lg *Log) ReadBufferedLocked(l Loc, key *[16]byte, kl int, buf []byte) (res int32, dw0 uint32, ok bool) {
	b := lg.bufOfLocked(l.Region())
	if b == nil {
		return 0, 0, false
	}
	lg.bufferReads.Add(1)
	if l.Ext() {
		copy(buf, b.mem[l.ExtOff():l.ExtOff()+l.VLen()])
		return 0, uint32(l.VLen()), true
	}
	res, dw0 = CopyValue(b.mem, l.Off(), lg.regs[l.Region()].seq, key, kl, buf, lg.o.RegionBytes)
	return res, dw0, true
}

// SeqLocked is the sequence number of region r's current incarnation (0:
// free).
func (lg *Log) SeqLocked(r int) uint64 { return lg.regs[r].seq }

// Reclaims counts the regions reclaimed so far: a read that sees it move
// between its lookup and its completion checks its region (Moved,
// RegionChanged).
func (lg *Log) Reclaims() uint64 { return lg.reclaims.Load() }

// RegionOff is the device offset of region r.
func (lg *Log) RegionOff(r int) int64 { return lg.regionOff(r) }

// RegionBytes is the region size.
func (lg *Log) RegionBytes() int { return lg.o.RegionBytes }

// Moved reports whether key's record, found at l in an incarnation seq
// of its region, was replaced or its region reclaimed since (a read of it
// raced and is retried, E2): whether a Retrieve's lookup (CandidateLocked)
// would now give another Loc.
func (lg *Log) Moved(key *[16]byte, kl int, l Loc, seq uint64) bool {
	lg.mu.RLock()
	defer lg.mu.RUnlock()
	now, ok, err := lg.CandidateLocked(key, kl)
	return err != nil || !ok || now != l || lg.regs[l.Region()].seq != seq
}

// RegionChanged reports whether region r is no longer incarnation seq
// (an extent read from it may hold newer data, E2).
func (lg *Log) RegionChanged(r int, seq uint64) bool {
	lg.mu.RLock()
	defer lg.mu.RUnlock()
	return lg.regs[r].seq != seq
}

// EachLocked calls fn for every live key and its length: extent keys
// from the index, inline keys from their records (eachKeyLocked: a read
// of every region holding one). Locked, not read-locked: it may use a
// write buffer.
func (lg *Log) EachLocked(fn func(key [16]byte, klen int)) error {
	return lg.eachKeyLocked(func(key *[16]byte, l Loc) { fn(*key, l.KLen()) })
}

// FullKeyItems is Stats.FullKeyItems (E31) under the read lock, in O(1).
func (lg *Log) FullKeyItems() int {
	lg.mu.RLock()
	defer lg.mu.RUnlock()
	return lg.idx.full
}

// EachIndexMapping calls fn, under the read lock, with the whole mapping
// of each off-heap table the index holds now (the tag segments, E35, and
// the extent tables: two while one drains into the other, E25) and
// whether Options.BindIndex placed it
// (E28). mem is valid only during the call: fn must not keep it.
func (lg *Log) EachIndexMapping(fn func(mem []byte, bound bool)) {
	lg.mu.RLock()
	defer lg.mu.RUnlock()
	if lg.idx != nil {
		lg.idx.eachMapping(fn)
	}
}

// TakeReclaimedLocked returns the keys Cache-mode reclaim dropped since the
// last call (E6), for the caller to report after unlocking.
func (lg *Log) TakeReclaimedLocked() [][16]byte {
	q := lg.reclaimQ
	lg.reclaimQ = nil
	return q
}

// LimitsLocked is the data area's size and the bytes of live records.
func (lg *Log) LimitsLocked() (capacity, used uint64) {
	return uint64(lg.nReg) * uint64(lg.o.RegionBytes), uint64(lg.liveBytes)
}

// CheckAccounting verifies that the per-region live counts and bytes add
// up to the index (every Loc's size), as overwrites, deletes, reclaim and
// evacuation must keep them; for tests and debugging.
func (lg *Log) CheckAccounting() error {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	live := make([]uint32, lg.nReg)
	liveB := make([]uint32, lg.nReg)
	var total int64
	lg.idx.eachLoc(func(l Loc) {
		live[l.Region()]++
		liveB[l.Region()] += uint32(l.Size())
		total += int64(l.Size())
	})
	for r := range live {
		if lg.regs[r].live != live[r] || lg.regs[r].liveB != liveB[r] {
			return fmt.Errorf("logstore: region %d counts %d records %d bytes, the index has %d / %d", r, lg.regs[r].live, lg.regs[r].liveB, live[r], liveB[r])
		}
	}
	if lg.liveBytes != total {
		return fmt.Errorf("logstore: live bytes %d, the index has %d", lg.liveBytes, total)
	}
	return nil
}

// setLocked moves key's entry from old (0: none) to l and counts the
// records' bytes.
func (lg *Log) setLocked(key *[16]byte, old, l Loc) {
	lg.idx.replace(key, old, l)
	if old != 0 {
		lg.dropLocked(old)
	}
	lg.addLocked(l)
}

func (lg *Log) addLocked(l Loc) {
	lg.regs[l.Region()].live++
	lg.regs[l.Region()].liveB += uint32(l.Size())
	lg.liveBytes += int64(l.Size())
}

func (lg *Log) dropLocked(old Loc) {
	if r := old.Region(); lg.regs[r].live > 0 {
		lg.regs[r].live--
		lg.regs[r].liveB -= min(lg.regs[r].liveB, uint32(old.Size()))
	}
	lg.liveBytes -= int64(old.Size())
}

// bufOfLocked returns the write buffer still holding region r, if any.
func (lg *Log) bufOfLocked(r int) *wbuf {
	for _, b := range lg.bufs {
		if b.region == r && b.seq == lg.regs[r].seq {
			return b
		}
	}
	return nil
}

// CopyValue checks the inline record at img[off:] (its magic, region
// sequence seq, key and CRC32C, E2) and copies its value into buf. It
// returns 0 and the value's size; Key Does Not Exist (SC 0x87) for a
// sound store record of another key (the Loc came from a tag shared with
// it, E8); or Unrecovered Error (SC 0x88).
func CopyValue(img []byte, off int, seq uint64, key *[16]byte, kl int, buf []byte, maxValue int) (int32, uint32) {
	r, ok := parseRecord(img, off, seq, maxValue, len(img))
	if !ok || r.kind != kindStore {
		return nvmekv.Status(0, nvmekv.SCUnrecovered, true), 0
	}
	if r.klen != kl || r.key != *key {
		return nvmekv.Status(0, nvmekv.SCKeyNotExists, true), 0
	}
	copy(buf, r.value(img, off))
	return 0, uint32(r.vlen)
}
