package logstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
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
		if lg.closed {
			lg.mu.RUnlock()
			return from, ErrClosed
		}
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

// scanReaders is how many synchronous reads a scan keeps in flight: the
// reads of one call are independent, and one at a time would leave the
// device idle for all but one of them (a file opened O_DIRECT waits a
// device round trip for each).
const scanReaders = 32

// Records a scan reads are coalesced into one read when the gap between
// them is at most scanGapBytes (reading it costs less than another
// random read), up to scanReadBytes a read: a call whose records are
// dense in a region (a large n, a small store) reads it sequentially.
const (
	scanGapBytes  = 32 << 10
	scanReadBytes = 1 << 20
)

// scanRead is one device read of a scan: [start, end) holds the wanted
// bytes of ents (indices into the call's entries).
type scanRead struct {
	start, end int64
	ents       []int
}

// wantedBytes is where e's wanted bytes are on the device: an inline
// record's header, key and first prefix value bytes, an extent's first
// prefix bytes.
func (lg *Log) wantedBytes(e *scanEntry, prefix int) (pos int64, n int) {
	pos = lg.regionOff(e.l.Region())
	if e.l.Ext() {
		return pos + int64(e.l.ExtOff()), min(e.l.VLen(), prefix)
	}
	return pos + int64(e.l.Off()), min(e.l.Size(), recHdrBytes+prefix)
}

// readEntries reads from the device the entries not read yet, in
// coalesced reads (scanGapBytes), up to scanReaders at once.
func (lg *Log) readEntries(ents []scanEntry, prefix int) error {
	a := int64(lg.d.ReadAlign())
	var todo []int
	for i := range ents {
		if !ents[i].read {
			todo = append(todo, i)
		}
	}
	pos := func(i int) int64 { p, _ := lg.wantedBytes(&ents[i], prefix); return p }
	slices.SortFunc(todo, func(x, y int) int { return cmp.Compare(pos(x), pos(y)) })
	var reads []scanRead
	for _, i := range todo {
		p, n := lg.wantedBytes(&ents[i], prefix)
		start, end := p&^(a-1), (p+int64(n)+a-1)&^(a-1)
		if k := len(reads) - 1; k >= 0 && start-reads[k].end <= scanGapBytes && max(end, reads[k].end)-reads[k].start <= scanReadBytes {
			reads[k].end = max(end, reads[k].end)
			reads[k].ents = append(reads[k].ents, i)
			continue
		}
		reads = append(reads, scanRead{start: start, end: end, ents: []int{i}})
	}
	var next atomic.Int64
	errs := make([]error, min(scanReaders, len(reads)))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := next.Add(1) - 1; j < int64(len(reads)) && errs[w] == nil; j = next.Add(1) - 1 {
				errs[w] = lg.readSpan(ents, &reads[j], prefix, int(a))
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// readSpan does read r and takes its entries' bytes from it.
func (lg *Log) readSpan(ents []scanEntry, r *scanRead, prefix, align int) error {
	buf := alignedBytes(int(r.end-r.start), align)
	if err := lg.d.ReadAt(buf, r.start); err != nil {
		return fmt.Errorf("logstore: scan: read %d bytes at offset %d of %s: %w", len(buf), r.start, lg.o.Path, err)
	}
	for _, i := range r.ents {
		e := &ents[i]
		p, n := lg.wantedBytes(e, prefix)
		b := buf[p-r.start : p-r.start+int64(n)]
		if e.l.Ext() {
			e.val, e.read = b, true
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
