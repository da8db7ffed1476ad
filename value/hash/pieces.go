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
// PieceBytes or so; a piece's meta is the hash bits of its first field
// (high 16 bits) and its field count (low 16). A field is then in the
// pieces whose range of hash bits holds its own: one, or two at a
// boundary. The first piece starts with the record's header; concatenated,
// the pieces are the record.
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
)

// bits16 is the top 16 bits of a field name's hash.
func bits16(name []byte) uint32 { return uint32(xxh3.Hash(name) >> 48) }

// Cut returns rec laid out for pieces (its fields by hash bits), where
// its pieces end and their metas; out is nil when rec is stored whole
// (small, a field past PieceMax, or not a record).
func Cut(rec []byte) (out []byte, ends []int, metas []uint32) {
	if len(rec) < PieceMin || HasTTL(rec) { // a record with field expiries is stored whole
		return nil, nil, nil
	}
	fields, err := Decode(nil, rec)
	if err != nil {
		return nil, nil, nil
	}
	type hf struct {
		h uint32
		f Field
	}
	hs := make([]hf, len(fields))
	for i, f := range fields {
		if uvarintLen(uint64(len(f.Name)))+len(f.Name)+uvarintLen(uint64(len(f.Value)))+len(f.Value) > PieceMax {
			return nil, nil, nil
		}
		hs[i] = hf{bits16(f.Name), f}
	}
	slices.SortStableFunc(hs, func(a, b hf) int { return int(a.h) - int(b.h) })
	out = appendHeader(make([]byte, 0, len(rec)), len(hs))
	start, count, firstBits := 0, uint32(0), uint32(0)
	for _, x := range hs {
		if count > 0 && (len(out)-start > PieceBytes || count == 0xffff) {
			ends, metas = append(ends, len(out)), append(metas, firstBits<<16|count)
			start, count = len(out), 0
		}
		if count == 0 {
			firstBits = x.h
		}
		out = appendChunk(appendChunk(out, x.f.Name), x.f.Value)
		count++
	}
	return out, append(ends, len(out)), append(metas, firstBits<<16|count)
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

// Total is the field count of a hash cut into pieces of metas.
func Total(metas []uint32) int {
	n := 0
	for _, m := range metas {
		n += int(m & 0xffff)
	}
	return n
}

// PieceEach calls f with every field of piece p (the record's first piece
// when first: its header is skipped) until f returns false; they alias p.
func PieceEach(p []byte, first bool, f func(name, value []byte) bool) error {
	off := 0
	if first {
		if len(p) < 2 || p[0] != Version {
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
		var err error
		if name, off, err = chunk(p, off); err != nil {
			return err
		}
		if v, off, err = chunk(p, off); err != nil {
			return err
		}
		if !f(name, v) {
			return nil
		}
	}
	return nil
}
