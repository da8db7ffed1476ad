package hash

import (
	"math/rand/v2"
	"unsafe"

	"github.com/tiercache/tiercache/value"
)

// Hash is a hash as the DRAM tiers keep it live (tier.Live), changed in
// place. A small one (at most SmallFields fields, no name or value over
// SmallValue bytes: Redis's hash-max-listpack-entries and -value) is its
// record, edited as Redis edits a listpack: the field found (a scan, or
// from indexFrom fields its index, index.go), a value of the same length
// written over the old one, a new field appended in place, any other
// edit one copy of the record into its second buffer, so insertion order
// is exactly Redis's. A larger one is a value.Table: a probe or two to
// find a field, entries packed in write order (a value set again with
// another length moves to the end, as order in Redis's hashtable is no
// order either). A hash never goes back to small. The record is built
// only when asked for (AppendRecord: the small form's is itself, or
// with field expiries that record with each field's expiry, the second
// version). The expiries are a side table of the fields that have one
// (exp, liveexpiry.go), the earliest kept.
type Hash struct {
	rec, spare []byte       // the small form: the record (first version) and the buffer edits alternate with
	ix         index        // the small form's field index (from indexFrom fields)
	t          *value.Table // the large form (rec nil)
	ttl
}

// SmallFields and SmallValue bound the small form (Redis 7.0's
// hash-max-listpack-entries and hash-max-listpack-value defaults).
const (
	SmallFields = 128
	SmallValue  = 64
)

var hashBytes = int64(value.AllocSize(int(unsafe.Sizeof(Hash{}))))

// NewHash returns an empty hash.
func NewHash() *Hash { return &Hash{rec: appendHeader(nil, 0)} }

// LoadHash makes a Hash of a record; it copies what it keeps.
func LoadHash(rec []byte) (*Hash, error) {
	n, err := Check(rec)
	if err != nil {
		return nil, err
	}
	small := n <= SmallFields
	if small {
		_ = Each(rec, func(f, v []byte) bool {
			small = len(f) <= SmallValue && len(v) <= SmallValue
			return small
		})
	}
	if small && !HasTTL(rec) {
		return &Hash{rec: append([]byte(nil), rec...)}, nil
	}
	h := &Hash{}
	if small {
		h.rec = make([]byte, 0, len(rec))
		h.rec = appendHeader(h.rec, n)
	} else {
		h.t = &value.Table{}
	}
	_ = EachTTL(rec, func(f, v []byte, exp int64) bool {
		if h.t != nil {
			h.t.Put(f, v)
		} else {
			h.rec = appendChunk(appendChunk(h.rec, f), v)
		}
		if exp != 0 {
			h.setExp(f, exp)
		}
		return true
	})
	return h, nil
}

// Len is the number of fields.
func (h *Hash) Len() int {
	if h.t != nil {
		return h.t.Len()
	}
	n, _, _ := Count(h.rec)
	return n
}

// HeapBytes is the heap h takes (value.AllocSize of its allocations).
func (h *Hash) HeapBytes() int64 {
	n := hashBytes + h.ttl.heapBytes()
	if h.t != nil {
		return n + h.t.HeapBytes()
	}
	return n + int64(value.AllocSize(cap(h.rec))+value.AllocSize(cap(h.spare))) + h.ix.heapBytes()
}

// RecordSize is the size of h's record.
func (h *Hash) RecordSize() int {
	return h.ttl.recordSize(h.Len(), h.baseSize())
}

// baseSize is the size of h's record without expiries (the first version).
func (h *Hash) baseSize() int {
	if h.t != nil {
		return 1 + uvarintLen(uint64(h.t.Len())) + h.t.BodySize()
	}
	return len(h.rec)
}

// AppendRecord appends h's record to dst: of the first version (Version)
// unless a field has an expiry, byte for byte what Encode gives for its
// fields.
func (h *Hash) AppendRecord(dst []byte) []byte {
	if h.exp != nil && h.exp.Len() > 0 {
		dst = appendHeaderV(dst, h.Len(), true)
		h.Each(func(f, v []byte) bool {
			dst = appendUvarint(appendChunk(appendChunk(dst, f), v), uint64(h.Expiry(f)))
			return true
		})
		return dst
	}
	if h.t != nil {
		return h.t.AppendBody(appendHeader(dst, h.t.Len()))
	}
	return append(dst, h.rec...)
}

// Get is field's value (aliasing h until its next change).
func (h *Hash) Get(field []byte) ([]byte, bool) {
	if h.t != nil {
		return h.t.Get(field)
	}
	_, _, vp, ok := h.seek(field)
	if !ok {
		return nil, false
	}
	return h.valueAt(vp), true
}

// SizeAfter is the field count and record size h would have with field
// set to val by Put (for Limits, checked before Put).
func (h *Hash) SizeAfter(field, val []byte) (n, size int) {
	n, base := h.Len(), h.baseSize()
	add := value.EntrySize(field, val)
	t := h.ttl.counts()
	if old, ok := h.Get(field); ok {
		t.drop(h.Expiry(field))
		return n, t.recordSize(n, base-value.EntrySize(field, old)+add)
	}
	return n + 1, t.recordSize(n+1, base-uvarintLen(uint64(n))+uvarintLen(uint64(n+1))+add)
}

// PutLimited is Put (PutKeepTTL with keep) checked against lim first: a
// Put that would take h past lim answers a *LimitError and changes
// nothing. The small form scans its record once for both.
func (h *Hash) PutLimited(field, val []byte, keep bool, lim Limits) (added bool, err error) {
	if h.t != nil || len(field) > SmallValue || len(val) > SmallValue {
		n, size := h.SizeAfter(field, val)
		if keep {
			n, size = h.sizeAfterKeep(field, val)
		}
		if err := lim.Check(n, size); err != nil {
			return false, err
		}
		if keep {
			return h.PutKeepTTL(field, val), nil
		}
		return h.Put(field, val), nil
	}
	_, _, vp, found := h.seek(field)
	t := h.counts()
	n, base := h.Len(), len(h.rec)
	var old []byte
	if found {
		old = h.valueAt(vp)
		base += len(val) - len(old)
		if !keep {
			t.drop(h.Expiry(field))
		}
	} else {
		base += value.EntrySize(field, val) - uvarintLen(uint64(n)) + uvarintLen(uint64(n+1))
		n++
	}
	if err := lim.Check(n, t.recordSize(n, base)); err != nil {
		return false, err
	}
	if !keep {
		h.dropExp(field)
	}
	if found && len(old) == len(val) {
		copy(old, val)
		return false, nil
	}
	return h.put(field, val), nil
}

// sizeAfterKeep is SizeAfter for PutKeepTTL.
func (h *Hash) sizeAfterKeep(field, val []byte) (n, size int) {
	exp := h.Expiry(field)
	if exp == 0 {
		return h.SizeAfter(field, val)
	}
	n, base := h.Len(), h.baseSize()
	old, _ := h.Get(field)
	return n, h.recordSize(n, base-value.EntrySize(field, old)+value.EntrySize(field, val))
}

// Put sets field to val, without an expiry (HSET's), and reports whether
// field is new.
func (h *Hash) Put(field, val []byte) (added bool) {
	h.dropExp(field)
	return h.put(field, val)
}

// PutKeepTTL is Put keeping field's expiry (HINCRBY's).
func (h *Hash) PutKeepTTL(field, val []byte) (added bool) { return h.put(field, val) }

func (h *Hash) put(field, val []byte) (added bool) {
	if h.t == nil && (len(field) > SmallValue || len(val) > SmallValue || h.Len() >= SmallFields && !h.has(field)) {
		h.grow()
	}
	if h.t != nil {
		return h.t.Put(field, val)
	}
	i, _, vp, found := h.seek(field)
	if found {
		old := h.valueAt(vp)
		if len(old) == len(val) {
			copy(old, val)
			return false
		}
		// The value's length changes: the record is copied once around it.
		end := vp + 1 + len(old)
		out := append(append(append(h.spare[:0], h.rec[:vp]...), byte(len(val))), val...)
		h.rec, h.spare = append(out, h.rec[end:]...), h.rec
		h.indexShift(i+1, len(val)-len(old))
		return false
	}
	n := int(h.rec[1])
	if n >= 0x7f {
		// The count's uvarint grows to two bytes (128 fields): Put
		// copies the record, and the index is built again.
		out, _, _ := Put(h.spare[:0], h.rec, field, val, Limits{MaxFields: int(^uint(0) >> 1)})
		h.rec, h.spare, h.ix = out, h.rec, index{}
		return true
	}
	// A new field goes at the end, its count's byte rewritten: the
	// record grows in place.
	at := len(h.rec)
	h.rec[1] = byte(n + 1)
	h.rec = append(append(append(append(h.rec, byte(len(field))), field...), byte(len(val))), val...)
	h.indexAdded(field, at)
	return true
}

func (h *Hash) has(field []byte) bool {
	_, ok := h.Get(field)
	return ok
}

// Delete removes field and reports whether it was there.
func (h *Hash) Delete(field []byte) bool {
	h.dropExp(field)
	if h.t != nil {
		return h.t.Delete(field)
	}
	i, off, vp, found := h.seek(field)
	if !found {
		return false
	}
	end := vp + 1 + int(h.rec[vp])
	body := h.body()
	out := appendHeader(h.spare[:0], h.Len()-1)
	hd := body - len(out)
	out = append(append(out, h.rec[body:off]...), h.rec[end:]...)
	h.rec, h.spare = out, h.rec
	h.indexRemoved(i, end-off, hd)
	return true
}

// grow turns the small form into the large one.
func (h *Hash) grow() {
	t := &value.Table{}
	_ = Each(h.rec, func(f, v []byte) bool {
		t.Put(f, v)
		return true
	})
	h.t, h.rec, h.spare, h.ix = t, nil, nil, index{}
}

// Each calls f with every field and value in h's order until f returns
// false; they alias h until its next change.
func (h *Hash) Each(f func(field, value []byte) bool) {
	if h.t != nil {
		h.t.Each(f)
		return
	}
	rec := h.rec // one-byte lengths, unchecked: seek's
	for off := h.body(); off < len(rec); {
		vp := off + 1 + int(rec[off])
		end := vp + 1 + int(rec[vp])
		if !f(rec[off+1:vp:vp], rec[vp+1:end:end]) {
			return
		}
		off = end
	}
}

// Fields appends h's fields to dst, in h's order (aliasing h).
func (h *Hash) Fields(dst []Field) []Field {
	h.Each(func(f, v []byte) bool {
		dst = append(dst, Field{Name: f, Value: v})
		return true
	})
	return dst
}

// Random is a field picked at random (h not empty).
func (h *Hash) Random() Field {
	if h.t != nil {
		f, v := h.t.Random()
		return Field{Name: f, Value: v}
	}
	i, n := 0, rand.IntN(h.Len())
	var out Field
	h.Each(func(f, v []byte) bool {
		out = Field{Name: f, Value: v}
		i++
		return i <= n
	})
	return out
}
