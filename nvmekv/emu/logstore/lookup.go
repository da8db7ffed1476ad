package logstore

import (
	"encoding/binary"
	"fmt"
	"sync"
	"unsafe"
)

// Lookups through the key index (keyindex.go, E8). An extent record is
// found by its full key. An inline record is found by its key's tag,
// which other keys may share (with probability about probe length/2^32
// per lookup; every slot of the tag is a candidate), so whoever uses the
// Loc checks the record's key: the read path when it reads the record
// (CopyValue), and the log here, reading the candidate's header, when
// the answer must be exact (Exist, Store, Delete) or the tag has more
// than one candidate. Each check reads one record header, from the
// write buffer when its region is still in one, else from the device
// (Stats.TagChecks, TagReads, TagCollisions).

// SlotLocked returns key's Loc, whatever length it was stored with (0:
// absent; a Store replaces it), checking inline candidates' keys
// (read-locked is enough).
func (lg *Log) SlotLocked(key *[16]byte) (Loc, error) {
	if l, ok := lg.idx.ext.get(key); ok {
		return l, nil
	}
	c := lg.idx.tags.cands(tagOf(key))
	for t, i := c.next(); t != nil; t, i = c.next() {
		l := t.locAt(i)
		ok, err := lg.keyAtLocked(key, l)
		if err != nil {
			return 0, err
		}
		if ok {
			return l, nil
		}
	}
	return 0, nil
}

// FindLocked finds key (of length kl) exactly: every inline candidate's
// key is checked (a record header read each, unless its region is in a
// write buffer). A key stored with another length but the same
// zero-padded bytes does not match. An error is a header that could not
// be read.
func (lg *Log) FindLocked(key *[16]byte, kl int) (Loc, bool, error) {
	if kl == 0 {
		return 0, false, nil
	}
	l, err := lg.SlotLocked(key)
	if err != nil || l == 0 || l.KLen() != kl {
		return 0, false, err
	}
	return l, true, nil
}

// CandidateLocked finds the record a Retrieve of key reads: an extent
// record by its full key; an inline record by its tag, unchecked when it
// is the tag's only entry (the read of the record checks its key, and a
// mismatch answers Key Does Not Exist: CopyValue), else the one whose
// header names key.
func (lg *Log) CandidateLocked(key *[16]byte, kl int) (Loc, bool, error) {
	if kl == 0 {
		return 0, false, nil
	}
	if l, ok := lg.idx.ext.get(key); ok {
		return l, l.KLen() == kl, nil
	}
	c := lg.idx.tags.cands(tagOf(key))
	t, i := c.next()
	if t == nil {
		return 0, false, nil
	}
	first := t.locAt(i)
	if t2, _ := c.next(); t2 == nil {
		return first, first.KLen() == kl, nil
	}
	return lg.FindLocked(key, kl)
}

// LookupLocked is FindLocked, a header that cannot be read counting as
// absent.
func (lg *Log) LookupLocked(key *[16]byte, kl int) (Loc, bool) {
	l, ok, err := lg.FindLocked(key, kl)
	return l, ok && err == nil
}

// Lookup is LookupLocked taking the read lock.
func (lg *Log) Lookup(key *[16]byte, kl int) (Loc, bool) {
	lg.mu.RLock()
	defer lg.mu.RUnlock()
	return lg.LookupLocked(key, kl)
}

// hdrBufBytes holds the header of any record at any read alignment: 40
// bytes from a 16-aligned offset span at most two 4096-byte blocks.
const hdrBufBytes = 2 * blockBytes

// hdrBufs are aligned buffers for header reads (on the Go heap, which
// does not move them).
var hdrBufs = sync.Pool{New: func() any {
	b := make([]byte, hdrBufBytes+blockBytes)
	skip := (blockBytes - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%blockBytes)) % blockBytes
	b = b[skip : skip+hdrBufBytes]
	return &b
}}

// keyAtLocked reports whether the inline record at l is a store record
// of key (its zero-padded bytes; any length), reading its header from
// the write buffer holding its region or from the device.
func (lg *Log) keyAtLocked(key *[16]byte, l Loc) (bool, error) {
	lg.tagChecks.Add(1)
	r, off := l.Region(), l.Off()
	var hdr []byte
	if b := lg.bufOfLocked(r); b != nil {
		hdr = b.mem[off : off+recHdrBytes]
	} else {
		lg.tagReads.Add(1)
		bp := hdrBufs.Get().(*[]byte)
		defer hdrBufs.Put(bp)
		a := int64(lg.d.ReadAlign())
		pos := lg.regionOff(r) + int64(off)
		start := pos &^ (a - 1)
		n := (pos - start + recHdrBytes + a - 1) &^ (a - 1)
		if err := lg.d.ReadAt((*bp)[:n], start); err != nil {
			return false, fmt.Errorf("logstore: read the record header at offset %d of %s to check its key: %w", pos, lg.o.Path, err)
		}
		hdr = (*bp)[pos-start : pos-start+recHdrBytes]
	}
	le := binary.LittleEndian
	same := le.Uint32(hdr) == recMagic && hdr[4] == kindStore && le.Uint64(hdr[16:]) == lg.regs[r].seq &&
		[16]byte(hdr[24:40]) == *key
	if !same {
		lg.tagCollisions.Add(1)
	}
	return same, nil
}
