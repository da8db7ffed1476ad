package hash

import (
	"bytes"
	"hash/maphash"

	"github.com/tiercache/tiercache/value"
)

// index is the small form's field index, from indexFrom fields on: for
// the i-th field of the record, tags[i] is a byte of its name's hash and
// offs[i] the offset of its entry, so a lookup compares a name only
// where the tag matches (about one field in 256 besides the one sought)
// instead of every name before it. It is built by the first lookup of a
// hash that has that many fields, kept up to date by every edit of the
// small form, and dropped with it (grow).
type index struct {
	tags []byte
	offs []uint16 // a small record is at most 3 + 128 × 130 bytes
}

// indexFrom is the field count from which a small hash keeps an index:
// below it a scan of the names is as quick.
const indexFrom = 16

// tagSeed seeds the tags' hash (the index lives in memory only).
var tagSeed = maphash.MakeSeed()

func tag(name []byte) byte { return byte(maphash.Bytes(tagSeed, name)) }

// heapBytes is the heap the index takes.
func (x *index) heapBytes() int64 {
	if x.tags == nil {
		return 0
	}
	return int64(value.AllocSize(cap(x.tags)) + value.AllocSize(2*cap(x.offs)))
}

// body is where the small record's first entry starts: after its version
// byte and its count, a uvarint of one byte, or two from 128 fields.
func (h *Hash) body() int {
	if h.rec[1] >= 0x80 {
		return 3
	}
	return 2
}

// seek finds field in the small form's record, which h alone writes: of
// the first version, every name and value at most SmallValue (< 0x80)
// bytes, so each length is one byte and the scan decodes no varint and
// checks nothing. i is the field's place, off its entry's offset, vp the
// offset of its value's length byte.
func (h *Hash) seek(field []byte) (i, off, vp int, found bool) {
	rec := h.rec
	if h.ix.tags == nil && int(rec[1]) >= indexFrom {
		h.buildIndex()
	}
	if tags := h.ix.tags; tags != nil {
		t := tag(field)
		for from := 0; ; {
			j := bytes.IndexByte(tags[from:], t)
			if j < 0 {
				return 0, 0, 0, false
			}
			i = from + j
			off = int(h.ix.offs[i])
			vp = off + 1 + int(rec[off])
			if int(rec[off]) == len(field) && string(rec[off+1:vp]) == string(field) {
				return i, off, vp, true
			}
			from = i + 1
		}
	}
	for off = h.body(); off < len(rec); i++ {
		fl := int(rec[off])
		vp = off + 1 + fl
		if fl == len(field) && string(rec[off+1:vp]) == string(field) {
			return i, off, vp, true
		}
		off = vp + 1 + int(rec[vp])
	}
	return 0, 0, 0, false
}

// valueAt is the value whose one-byte length is at rec[vp] (seek's).
func (h *Hash) valueAt(vp int) []byte {
	end := vp + 1 + int(h.rec[vp])
	return h.rec[vp+1 : end : end]
}

// buildIndex indexes every field of the small form.
func (h *Hash) buildIndex() {
	rec := h.rec
	n := h.Len()
	x := index{tags: make([]byte, 0, n+n/4), offs: make([]uint16, 0, n+n/4)}
	for off := h.body(); off < len(rec); {
		vp := off + 1 + int(rec[off])
		x.tags = append(x.tags, tag(rec[off+1:vp]))
		x.offs = append(x.offs, uint16(off))
		off = vp + 1 + int(rec[vp])
	}
	h.ix = x
}

// indexAdded notes a field appended at offset off.
func (h *Hash) indexAdded(name []byte, off int) {
	if h.ix.tags != nil {
		h.ix.tags = append(h.ix.tags, tag(name))
		h.ix.offs = append(h.ix.offs, uint16(off))
	}
}

// indexShift moves the entries from the i-th on by d bytes.
func (h *Hash) indexShift(i, d int) {
	for j := i; j < len(h.ix.offs); j++ {
		h.ix.offs[j] = uint16(int(h.ix.offs[j]) + d)
	}
}

// indexRemoved notes the i-th field's entry, of size bytes, gone, and the
// header shrunk by hd bytes.
func (h *Hash) indexRemoved(i, size, hd int) {
	if h.ix.tags == nil {
		return
	}
	h.ix.tags = append(h.ix.tags[:i], h.ix.tags[i+1:]...)
	h.ix.offs = append(h.ix.offs[:i], h.ix.offs[i+1:]...)
	h.indexShift(0, -hd)
	h.indexShift(i, -size)
}

// uvarintLen is the length of u as a uvarint.
func uvarintLen(u uint64) int { return value.UvarintLen64(u) }
