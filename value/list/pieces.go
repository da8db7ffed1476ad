package list

import "encoding/binary"

// A large list goes to the cold tier in pieces (nvmekv K20), so that a
// read of a few elements reads a few blocks: its record cut at element
// boundaries every PieceBytes or so, each piece's meta its element count.
// The first piece starts with the record's header. Concatenated, the
// pieces are the record.
const (
	// PieceMin is the smallest record stored in pieces; smaller ones are
	// read whole in one block or a few.
	PieceMin = 64 << 10
	// PieceBytes is about the size of a piece: a record of the emulated
	// store's log then fits one 4 KiB block or two.
	PieceBytes = 3 << 10
	// PieceMax is the largest piece: a list with a larger element is
	// stored whole.
	PieceMax = 64 << 10
)

// Cut is where rec's pieces end and their metas (element counts), or nil
// when rec is stored whole (small, an element past PieceMax, or corrupt).
func Cut(rec []byte) (ends []int, metas []uint32) {
	n, body, err := Header(rec)
	if err != nil || len(rec) < PieceMin {
		return nil, nil
	}
	off := len(rec) - len(body)
	start, count := 0, uint32(0)
	for i := 0; i < n; i++ {
		l, w := binary.Uvarint(rec[off:])
		if w <= 0 || l > uint64(len(rec)-off-w) {
			return nil, nil
		}
		next := off + w + int(l)
		if next-start > PieceMax && count == 0 || next-off > PieceMax {
			return nil, nil
		}
		if count > 0 && next-start > PieceBytes {
			ends, metas = append(ends, off), append(metas, count)
			start, count = off, 0
		}
		off = next
		count++
	}
	if off != len(rec) {
		return nil, nil
	}
	return append(ends, off), append(metas, count)
}

// PiecesFor is which pieces (by their metas) hold the elements of indexes
// [lo, hi), and the index of the first element of the first of them.
func PiecesFor(metas []uint32, lo, hi int) (idx []int, first int) {
	at := 0
	for i, c := range metas {
		end := at + int(c)
		if end > lo && at < hi {
			if idx == nil {
				first = at
			}
			idx = append(idx, i)
		}
		at = end
	}
	return idx, first
}

// Total is the element count of a list cut into pieces of metas.
func Total(metas []uint32) int {
	n := 0
	for _, c := range metas {
		n += int(c)
	}
	return n
}

// PieceItems appends the elements of piece p to dst (p the record's
// first piece when first: its header is skipped); they alias p.
func PieceItems(dst [][]byte, p []byte, first bool) ([][]byte, error) {
	if first {
		if len(p) < 2 || p[0] != Version {
			return dst, ErrCorrupt
		}
		_, w := binary.Uvarint(p[1:])
		if w <= 0 {
			return dst, ErrCorrupt
		}
		p = p[1+w:]
	}
	for len(p) > 0 {
		var it []byte
		var err error
		if it, p, err = Next(p); err != nil {
			return dst, err
		}
		dst = append(dst, it)
	}
	return dst, nil
}
