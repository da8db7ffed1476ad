package nvmekv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Pieced records (K20). A writer that knows how its value is read in
// parts (a large hash's fields by bucket, a list's elements by index)
// cuts it into pieces at item boundaries (Item.Pieces) and gives each a
// meta of its own meaning. The record is then its header, the user key
// and a piece table of 12 bytes a piece — its length, its CRC32C and its
// meta, little-endian, under a CRC32C of their own in the header (byte 52)
// — and one chunk a piece, in the chunk set the record it replaces does
// not use (K11). A whole Get reads the table and every piece in one
// submission (the pieces are sized from the table, not chunkMax) and
// checks the whole value's CRC32C as for any chunked record; GetPieces
// reads the table, lets its caller choose pieces from their lengths and
// metas, and reads only those, each checked against its own CRC32C.

// Piece is where a piece of an Item's value ends (the offset past its
// last byte) and its meta.
type Piece struct {
	End  int
	Meta uint32
}

// PieceInfo is one piece of a pieced record as its table has it.
type PieceInfo struct {
	Off, Len int // where in the value
	Meta     uint32
	crc      uint32
}

const pieceEntryBytes = 12

// pieceTable encodes the table of pieces of value.
func pieceTable(value []byte, pieces []Piece) []byte {
	t := make([]byte, 0, pieceEntryBytes*len(pieces))
	start := 0
	for _, p := range pieces {
		t = binary.LittleEndian.AppendUint32(t, uint32(p.End-start))
		t = binary.LittleEndian.AppendUint32(t, crc32.Checksum(value[start:p.End], castagnoli))
		t = binary.LittleEndian.AppendUint32(t, p.Meta)
		start = p.End
	}
	return t
}

// parseTable decodes n pieces of a table.
func parseTable(t []byte, n uint32) ([]PieceInfo, error) {
	if uint64(len(t)) != uint64(n)*pieceEntryBytes {
		return nil, fmt.Errorf("%w: a piece table of %d bytes for %d pieces", ErrUnrecovered, len(t), n)
	}
	out := make([]PieceInfo, n)
	off := 0
	for i := range out {
		e := t[i*pieceEntryBytes:]
		l := int(binary.LittleEndian.Uint32(e))
		out[i] = PieceInfo{Off: off, Len: l, crc: binary.LittleEndian.Uint32(e[4:]), Meta: binary.LittleEndian.Uint32(e[8:])}
		off += l
	}
	return out, nil
}

// checkPieces reports why pieces do not cut a value of n bytes into
// chunks of at most max bytes each, or nil.
func checkPieces(pieces []Piece, n, max int) error {
	start := 0
	for i, p := range pieces {
		if p.End <= start || p.End-start > max {
			return fmt.Errorf("%w: piece %d of %d ends at %d after %d (pieces of 1..%d bytes)", ErrInvalidValueSize, i, len(pieces), p.End, start, max)
		}
		start = p.End
	}
	if start != n {
		return fmt.Errorf("%w: pieces end at %d in a value of %d bytes", ErrInvalidValueSize, start, n)
	}
	return nil
}

// putPiecedHeader writes the header of a pieced record, its key and its
// table into b (HeaderBytes+len(key)+len(table) long): the record CRC
// over header ‖ key ‖ value, the table CRC over header ‖ key ‖ table.
func putPiecedHeader(b []byte, h *header, key, value, table []byte) {
	putHeader(b, h, key, value, false)
	le := binary.LittleEndian
	whole := le.Uint32(b[recordCRCOff:])
	le.PutUint32(b[recordCRCOff:], 0)
	copy(b[HeaderBytes+len(key):], table)
	tcrc := crc32.Checksum(b, castagnoli)
	le.PutUint32(b[recordCRCOff:], whole)
	le.PutUint32(b[tableCRCOff:], tcrc)
}

// pieceTableOf checks and decodes the table of g's pieced record, read
// whole into g.op.Buf.
func (kv *KV) pieceTableOf(g *getState) ([]PieceInfo, error) {
	b := g.op.Buf[:g.op.DW0]
	var hb [HeaderBytes]byte
	copy(hb[:], b)
	binary.LittleEndian.PutUint32(hb[recordCRCOff:], 0)
	binary.LittleEndian.PutUint32(hb[tableCRCOff:], 0)
	crc := crc32.Update(crc32.Checksum(hb[:], castagnoli), castagnoli, b[HeaderBytes:])
	if crc != g.hd.tableCRC {
		kv.crcErrs.Add(1)
		return nil, fmt.Errorf("%w: piece table CRC32C %#x, computed %#x", ErrUnrecovered, g.hd.tableCRC, crc)
	}
	t, err := parseTable(b[HeaderBytes+g.hd.keyLen:], g.hd.chunks)
	if err == nil && uint64(t[len(t)-1].Off+t[len(t)-1].Len) != g.hd.valueLen {
		err = fmt.Errorf("%w: pieces hold %d bytes, header says %d", ErrUnrecovered, t[len(t)-1].Off+t[len(t)-1].Len, g.hd.valueLen)
	}
	if err != nil {
		kv.crcErrs.Add(1)
	}
	return t, err
}

// pieceOp is the Retrieve of piece i (of table t) of g's record.
func pieceOp(g *getState, t []PieceInfo, i int) *Op {
	return &Op{Code: OpRetrieve, Key: chunkKey(g.h, &g.hd, uint32(i)), Buf: make([]byte, ChunkHdrBytes+t[i].Len)}
}

// GetPieces reads pieces of key's record: its header and piece table
// first, then the pieces choose picks from the table (their indexes, in
// the order wanted), all in one submission; each is checked (put ID,
// index, CRC32C) and returned in that order, with the record's Meta and
// its table. A record that is not pieced is read whole, and returned as
// its one piece with pieced false. valueLen is as GetSized's.
func (kv *KV) GetPieces(ctx context.Context, key []byte, valueLen int, choose func(t []PieceInfo) []int) (pieces [][]byte, t []PieceInfo, m Meta, pieced bool, err error) {
	if err := kv.check(key); err != nil {
		return nil, nil, Meta{}, false, err
	}
	g := &getState{key: key, h: kv.opts.Hash(key)}
	kv.headerOp(g, kv.firstRead(len(key), valueLen))
	defer kv.releaseHeader(g)
	kv.gets.Add(1)
	for round := 0; ; round++ {
		if err := kv.ns.Do(ctx, &g.op); err != nil {
			return nil, nil, Meta{}, false, err
		}
		if g.op.Err != nil || int(g.op.DW0) <= len(g.op.Buf) || round == 2 {
			break
		}
		kv.headerOp(g, int(g.op.DW0)) // a short buffer: read again at the stored size
	}
	if kv.afterHeader(g); g.err != nil {
		if errors.Is(g.err, ErrKeyNotFound) {
			kv.misses.Add(1)
		}
		return nil, nil, Meta{}, false, g.err
	}
	m = Meta{Expiry: g.hd.expiry, Version: g.hd.version, Flags: g.hd.flags}
	if !g.hd.pieced {
		v, err := kv.finishWhole(ctx, nil, g)
		if err != nil {
			return nil, nil, Meta{}, false, err
		}
		kv.hits.Add(1)
		return [][]byte{v}, nil, m, false, nil
	}
	if t, err = kv.pieceTableOf(g); err != nil {
		return nil, nil, Meta{}, false, err
	}
	want := choose(t)
	ops := make([]*Op, len(want))
	for j, i := range want {
		if i < 0 || i >= len(t) {
			return nil, nil, Meta{}, false, fmt.Errorf("nvmekv: piece %d of a record of %d pieces", i, len(t))
		}
		ops[j] = pieceOp(g, t, i)
	}
	if err := kv.doBatched(ctx, ops); err != nil {
		return nil, nil, Meta{}, false, err
	}
	pieces = make([][]byte, len(want))
	for j, i := range want {
		p, _, err := kv.takeChunk(nil, g, i, len(t), ops[j], 0)
		if err == nil && (len(p) != t[i].Len || crc32.Checksum(p, castagnoli) != t[i].crc) {
			kv.crcErrs.Add(1)
			err = fmt.Errorf("%w: piece %d: %d bytes, CRC32C %#x; its table says %d, %#x", ErrUnrecovered, i, len(p), crc32.Checksum(p, castagnoli), t[i].Len, t[i].crc)
		}
		if err != nil {
			return nil, nil, Meta{}, false, err
		}
		pieces[j] = p
	}
	kv.hits.Add(1)
	return pieces, t, m, true, nil
}

// finishWhole appends the whole value of g, whose header was read, to dst:
// inline, or read from its chunks (windows of them for a big record).
func (kv *KV) finishWhole(ctx context.Context, dst []byte, g *getState) ([]byte, error) {
	switch {
	case g.hd.chunks == 0:
		return kv.finishInline(dst, g)
	case g.hd.chunks > chunkWindow && !g.hd.pieced:
		return kv.readWindows(ctx, dst, g)
	}
	ops, err := kv.chunkOps(g)
	if err != nil {
		return dst, err
	}
	defer kv.releaseChunks(ops)
	if err := kv.doBatched(ctx, ops); err != nil {
		return dst, err
	}
	return kv.assemble(dst, g, ops)
}
