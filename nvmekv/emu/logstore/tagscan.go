package logstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/tiercache/tiercache/nvmekv"
)

// Scanning the records of a range of tags (E33): the index walk
// (TagRangeLocked) under the read lock, the reads of the records it
// found after unlocking (a region still in a write buffer is copied from
// it under the lock instead), then a check under the read lock that each
// record read is still its key's live entry in the same incarnation of
// its region. A tag with a record that moved meanwhile (an overwrite,
// Strict copy-forward, a reclaimed region) is walked and read again; a
// key served once is not served again in the same call.

// scanEntry is a live entry a tag scan found and what it read of it.
type scanEntry struct {
	tag  uint32
	l    Loc
	seq  uint64 // its region's incarnation when the index named it
	key  [16]byte
	val  []byte // the value's first bytes, once read
	read bool   // read, and its record header checked
}

// scanMark names one record: a Loc in one incarnation of its region.
type scanMark struct {
	l   Loc
	seq uint64
}

// maxScanRounds bounds how often a scan walks again the tags whose
// records kept moving under it.
const maxScanRounds = 100

// ScanTags calls fn, for every live record whose device key is klen
// bytes long and whose key's tag is in [from, next), with its key
// (zero-padded) and the first prefix bytes of its value (all of it if
// shorter; valid during the call only), and returns next (TagSpace at
// the end, as TagRangeLocked). A record that moves between the walk and
// its read is read again where it went while its key stays live; a key
// is given to fn at most once per call, never with another key's bytes.
// It takes the read lock itself; fn runs without it.
func (lg *Log) ScanTags(ctx context.Context, from uint64, n, klen, prefix int, fn func(key [16]byte, value []byte)) (uint64, error) {
	if from >= TagSpace {
		return TagSpace, nil
	}
	prefix = max(prefix, 0)
	lg.mu.RLock()
	if lg.closed {
		lg.mu.RUnlock()
		return from, ErrClosed
	}
	next := lg.nextTagLocked(from, n)
	ents := lg.collectLocked(from, next, klen, prefix, nil, nil)
	lg.mu.RUnlock()
	served := make(map[[16]byte]bool, len(ents))
	checked := make(map[scanMark]bool, len(ents))
	for round := 0; ; round++ {
		if err := ctx.Err(); err != nil {
			return from, err
		}
		if err := lg.readEntries(ents, prefix); err != nil {
			return from, err
		}
		var good []*scanEntry
		redo := map[uint32]bool{}
		lg.mu.RLock()
		for i := range ents {
			e := &ents[i]
			if !e.read || lg.regs[e.l.Region()].seq != e.seq || !lg.idx.has(&e.key, e.l) {
				redo[e.tag] = true
				continue
			}
			checked[scanMark{e.l, e.seq}] = true
			if !served[e.key] {
				served[e.key] = true
				good = append(good, e)
			}
		}
		var again []scanEntry
		if len(redo) > 0 && round < maxScanRounds {
			for tag := range redo {
				again = lg.collectLocked(uint64(tag), uint64(tag)+1, klen, prefix, again, checked)
			}
		}
		lg.mu.RUnlock()
		for _, e := range good {
			fn(e.key, e.val)
		}
		if len(redo) == 0 {
			return next, nil
		}
		if round == maxScanRounds {
			return from, fmt.Errorf("%w: scan of tags %#x..%#x in %s: records of %d tags moved or did not check in %d reads", nvmekv.ErrUnrecovered, from, next, lg.o.Path, len(redo), maxScanRounds)
		}
		ents = again
	}
}

// collectLocked appends to dst the live entries of klen-byte keys whose
// tags are in [from, next), but for the records in skip, reading those
// whose region is in a write buffer from it now.
func (lg *Log) collectLocked(from, next uint64, klen, prefix int, dst []scanEntry, skip map[scanMark]bool) []scanEntry {
	lg.tagRangeLocked(from, next, func(tag uint32, key *[16]byte, l Loc) {
		if l.KLen() != klen {
			return
		}
		r := l.Region()
		e := scanEntry{tag: tag, l: l, seq: lg.regs[r].seq}
		if skip[scanMark{l, e.seq}] {
			return
		}
		if key != nil {
			e.key = *key
		}
		if b := lg.bufOfLocked(r); b != nil {
			if l.Ext() {
				e.val, e.read = append([]byte(nil), b.mem[l.ExtOff():l.ExtOff()+min(l.VLen(), prefix)]...), true
			} else {
				e.checkInline(b.mem[l.Off():], prefix, true)
			}
		}
		dst = append(dst, e)
	})
	return dst
}

// checkInline takes the key and the value's first prefix bytes from b,
// the bytes of e's inline record from its start (copy: b is a write
// buffer), if its header is a store record of e's region incarnation.
func (e *scanEntry) checkInline(b []byte, prefix int, copyVal bool) {
	le := binary.LittleEndian
	if len(b) < recHdrBytes || le.Uint32(b) != recMagic || b[4] != kindStore || int(b[5]) != e.l.KLen() || le.Uint64(b[16:]) != e.seq {
		return
	}
	vlen := int(le.Uint32(b[8:]))
	take := min(vlen, prefix)
	if recHdrBytes+take > len(b) || recSize(vlen) != e.l.Size() {
		return
	}
	copy(e.key[:], b[24:40])
	e.val = b[recHdrBytes : recHdrBytes+take]
	if copyVal {
		e.val = append([]byte(nil), e.val...)
	}
	e.read = true
}

// readEntries reads from the device the entries not read yet: an inline
// record's header, key and the value's first prefix bytes, an extent's
// first prefix bytes.
func (lg *Log) readEntries(ents []scanEntry, prefix int) error {
	a := int64(lg.d.ReadAlign())
	for i := range ents {
		e := &ents[i]
		if e.read {
			continue
		}
		pos, want := lg.regionOff(e.l.Region()), 0
		if e.l.Ext() {
			pos, want = pos+int64(e.l.ExtOff()), min(e.l.VLen(), prefix)
		} else {
			pos, want = pos+int64(e.l.Off()), min(e.l.Size(), recHdrBytes+prefix)
		}
		start := pos &^ (a - 1)
		size := (pos - start + int64(want) + a - 1) &^ (a - 1)
		buf := alignedBytes(int(size), int(a))
		if err := lg.d.ReadAt(buf, start); err != nil {
			return fmt.Errorf("logstore: scan: read %d bytes at offset %d of %s: %w", size, start, lg.o.Path, err)
		}
		b := buf[pos-start:]
		if e.l.Ext() {
			e.val, e.read = b[:want], true
			continue
		}
		e.checkInline(b, prefix, false)
	}
	return nil
}

// alignedBytes is a new n-byte buffer whose address is a multiple of a
// (a power of two): on the Go heap, which does not move it.
func alignedBytes(n, a int) []byte {
	b := make([]byte, n+a)
	skip := (a - int(uintptr(unsafe.Pointer(unsafe.SliceData(b))))%a) % a
	return b[skip : skip+n]
}
