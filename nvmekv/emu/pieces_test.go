package emu

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
)

// TestPiecedRecords is K20: a value Put in pieces reads back whole (every
// piece in one submission), GetPieces reads only the pieces chosen, each
// checked, with the metas the writer gave; a piece whose bytes changed on
// the device is refused; overwriting with a whole value, with other
// pieces and deleting leave no piece behind (the chunk sets alternate).
func TestPiecedRecords(t *testing.T) {
	w, kv := openWatched(t)
	ctx := context.Background()
	key := []byte("pieced")
	v := bigValue(3, 200<<10)
	var pieces []nvmekv.Piece
	for end := 3000; ; end += 3000 {
		end = min(end, len(v))
		pieces = append(pieces, nvmekv.Piece{End: end, Meta: uint32(len(pieces) * 7)})
		if end == len(v) {
			break
		}
	}
	put := func(v []byte, pieces []nvmekv.Piece) {
		t.Helper()
		items := []nvmekv.Item{{Key: key, Value: v, Pieces: pieces, Meta: nvmekv.Meta{Version: 9, Flags: 2}}}
		if err := kv.PutMany(ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	put(v, pieces)
	w.reset(0)
	got, m, err := kv.Get(ctx, nil, key)
	if err != nil || !bytes.Equal(got, v) || m.Version != 9 || m.Flags != 2 {
		t.Fatalf("Get: %d bytes, %+v, %v", len(got), m, err)
	}
	if w.maxBatch < len(pieces) {
		t.Fatalf("a whole read of %d pieces took submissions of at most %d", len(pieces), w.maxBatch)
	}
	before := kv.Stats().BytesRead
	ps, table, m, pieced, err := kv.GetPieces(ctx, key, -1, func(t []nvmekv.PieceInfo) []int { return []int{5, 0} })
	if err != nil || !pieced || len(ps) != 2 || len(table) != len(pieces) || m.Version != 9 {
		t.Fatalf("GetPieces: %d pieces, pieced %v, table %d, %v", len(ps), pieced, len(table), err)
	}
	if !bytes.Equal(ps[0], v[15000:18000]) || !bytes.Equal(ps[1], v[:3000]) || table[5].Meta != 35 || table[5].Off != 15000 {
		t.Fatalf("pieces 5 and 0 differ from the value's bytes (table %+v)", table[5])
	}
	if read := kv.Stats().BytesRead - before; read > 12<<10 {
		t.Fatalf("two pieces of a 200 KiB value read %d bytes", read)
	}
	// A piece's bytes changed on the device: its CRC refuses it.
	h := nvmekv.DefaultHasher(key)
	ck := nvmekv.ChunkKeyIn(h, 0, 5)
	bad := append(make([]byte, nvmekv.ChunkHdrBytes), bytes.Repeat([]byte{1}, 3000)...)
	copy(bad, mustRetrieve(t, w.Namespace, ck[:nvmekv.ChunkKeyBytes])[:nvmekv.ChunkHdrBytes])
	if err := w.Namespace.Do(ctx, &nvmekv.Op{Code: nvmekv.OpStore, Key: ck[:nvmekv.ChunkKeyBytes], Buf: bad}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := kv.GetPieces(ctx, key, -1, func([]nvmekv.PieceInfo) []int { return []int{5} }); !errors.Is(err, nvmekv.ErrUnrecovered) {
		t.Fatalf("a changed piece: %v", err)
	}
	// Over it: a whole value, other pieces, then a delete.
	put(v[:1000], nil)
	if ps, _, _, pieced, err := kv.GetPieces(ctx, key, -1, nil); err != nil || pieced || !bytes.Equal(ps[0], v[:1000]) {
		t.Fatalf("a whole record through GetPieces: pieced %v, %v", pieced, err)
	}
	put(v[:9000], []nvmekv.Piece{{End: 4000, Meta: 1}, {End: 9000, Meta: 2}})
	if got, _, err := kv.Get(ctx, nil, key); err != nil || !bytes.Equal(got, v[:9000]) {
		t.Fatalf("Get after other pieces: %v", err)
	}
	if err := kv.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if n := w.Namespace.Stats().Items; n != 0 {
		t.Fatalf("%d device records left after the delete", n)
	}
	bad2 := []nvmekv.Piece{{End: 10, Meta: 0}, {End: 5, Meta: 0}}
	if err := kv.PutMany(ctx, []nvmekv.Item{{Key: key, Value: v[:10], Pieces: bad2}}); !errors.Is(err, nvmekv.ErrInvalidValueSize) {
		t.Fatalf("pieces out of order: %v", err)
	}
}

func mustRetrieve(t *testing.T, ns *Namespace, key []byte) []byte {
	t.Helper()
	op := &nvmekv.Op{Code: nvmekv.OpRetrieve, Key: key, Buf: make([]byte, 64<<10)}
	if err := ns.Do(context.Background(), op); err != nil || op.Err != nil {
		t.Fatalf("retrieve: %v %v", err, op.Err)
	}
	return op.Buf[:op.DW0]
}
