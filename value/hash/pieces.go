package hash

import (
	"encoding/binary"
	"slices"

	"github.com/zeebo/xxh3"
)

// A large hash goes to the cold tier in pieces (nvmekv K20), so that a
// read of one field reads a few blocks: its record with the fields
// ordered by the top 16 bits of their name's hash (a large hash's order
// is no order, as in Redis's hashtable), cut at field boundaries every
// PieceBytes or so. A field is then in the pieces whose range of hash
// bits holds its own: one, or two at a boundary. The first piece starts
// with the record's header; concatenated, the pieces are the record, of
// the version the hash had: a hash with field expiries keeps each
// field's expiry beside it, in the field's piece (VH12).
//
// A piece's meta is the hash bits of its first field (bits 16-31),
// metaTTL when the record is of the second version (its fields carry
// their expiries: a piece is read without the header), metaExpiring when
// a field of the piece has an expiry (HLEN counts the other pieces'
// fields from their metas and reads only these), and its field count
// (bits 0-13). A piece holds fewer than PieceBytes/2+2 fields (each takes
// two bytes at least), so pieces written before the flags existed have
// them clear and read as they did.
const (
	// PieceMin is the smallest record stored in pieces (no small hash,
	// SmallFields of SmallValue, is that large).
	PieceMin = 64 << 10
	// PieceBytes is about the size of a piece: a record of the emulated
	// store's log then fits one 4 KiB block or two.
	PieceBytes = 3 << 10
	// PieceMax is the largest piece: a hash with a larger field is stored
	// whole.
	PieceMax = 64 << 10

	metaTTL      = 1 << 15
	metaExpiring = 1 << 14
	metaCount    = 1<<14 - 1
)

// bits16 is the top 16 bits of a field name's hash.
func bits16(name []byte) uint32 { return uint32(xxh3.Hash(name) >> 48) }

// Cut returns rec laid out for pieces (its fields by hash bits, with
// their expiries in a record of the second version), where its pieces
// end and their metas; out is nil when rec is stored whole (small, a
// field past PieceMax, or not a record).
func Cut(rec []byte) (out []byte, ends []int, metas []uint32) {
	if len(rec) < PieceMin {
		return nil, nil, nil
	}
	fields, err := Decode(nil, rec)
	if err != nil {
		return nil, nil, nil
	}
	ttl := HasTTL(rec)
	type hf struct {
		h uint32
		f Field
	}
	hs := make([]hf, len(fields))
	for i, f := range fields {
		if fieldSize(f, ttl) > PieceMax {
			return nil, nil, nil
		}
		hs[i] = hf{bits16(f.Name), f}
	}
	slices.SortStableFunc(hs, func(a, b hf) int { return int(a.h) - int(b.h) })
	out = appendHeaderV(make([]byte, 0, len(rec)), len(hs), ttl)
	flags := uint32(0)
	if ttl {
		flags = metaTTL
	}
	start, meta := 0, uint32(0)
	for _, x := range hs {
		if meta&metaCount > 0 && (len(out)-start > PieceBytes || meta&metaCount == metaCount) {
			ends, metas = append(ends, len(out)), append(metas, meta)
			start, meta = len(out), 0
		}
		if meta&metaCount == 0 {
			meta = x.h<<16 | flags
		}
		out = appendChunk(appendChunk(out, x.f.Name), x.f.Value)
		if ttl {
			out = appendUvarint(out, uint64(x.f.Expiry))
			if x.f.Expiry != 0 {
				meta |= metaExpiring
			}
		}
		meta++
	}
	return out, append(ends, len(out)), append(metas, meta)
}

// fieldSize is the bytes f takes in a record (of the second version when
// ttl).
func fieldSize(f Field, ttl bool) int {
	n := uvarintLen(uint64(len(f.Name))) + len(f.Name) + uvarintLen(uint64(len(f.Value))) + len(f.Value)
	if ttl {
		n += uvarintLen(uint64(f.Expiry))
	}
	return n
}

// PiecesFor is which pieces (by their metas) may hold the fields names:
// for each, the pieces whose range of hash bits holds its bits, without
// repeats, in piece order.
func PiecesFor(metas []uint32, names [][]byte) []int {
	var idx []int
	for _, name := range names {
		b := bits16(name)
		for i, m := range metas {
			lo := m >> 16
			hi := uint32(0xffff)
			if i+1 < len(metas) {
				hi = metas[i+1] >> 16
			}
			if lo <= b && b <= hi {
				idx = append(idx, i)
			}
		}
	}
	slices.Sort(idx)
	return slices.Compact(idx)
}

// Total is the field count of a hash cut into pieces of metas, expired
// fields included.
func Total(metas []uint32) int {
	n := 0
	for _, m := range metas {
		n += int(m & metaCount)
	}
	return n
}

// Expiring is which pieces (by their metas) hold a field with an expiry,
// in piece order: the others' fields never expire.
func Expiring(metas []uint32) []int {
	var idx []int
	for i, m := range metas {
		if m&metaExpiring != 0 {
			idx = append(idx, i)
		}
	}
	return idx
}

// PieceEach calls f with every field of piece p of meta (the record's
// first piece when first: its header is skipped) and its expiry (0:
// none), expired or not, until f returns false; they alias p.
func PieceEach(p []byte, first bool, meta uint32, f func(name, value []byte, exp int64) bool) error {
	ttl := meta&metaTTL != 0
	off := 0
	if first {
		if len(p) < 2 || p[0] != Version && p[0] != VersionTTL || (p[0] == VersionTTL) != ttl {
			return ErrCorrupt
		}
		_, w := binary.Uvarint(p[1:])
		if w <= 0 {
			return ErrCorrupt
		}
		off = 1 + w
	}
	for off < len(p) {
		var name, v []byte
		var exp int64
		var err error
		if name, v, exp, off, err = field(p, off, ttl); err != nil {
			return err
		}
		if !f(name, v, exp) {
			return nil
		}
	}
	return nil
}
