package emu

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
)

// toOldFormat rewrites key's chunked record, written by kv now, as a
// store written before nvmekv K16 held it: its chunks under 16-byte
// device keys and its header's byte 5 bit 1 clear (the CRC recomputed
// over header ‖ key ‖ value, as nvmekv's record layout says).
func toOldFormat(t *testing.T, ns *Namespace, key, value []byte) {
	t.Helper()
	h := nvmekv.DefaultHasher(key)
	hdr := make([]byte, 1<<16)
	n, err := ns.Retrieve(ctx, h[:], hdr)
	if err != nil {
		t.Fatal(err)
	}
	hdr = hdr[:n]
	if hdr[5]&2 == 0 {
		t.Fatalf("a new record's header byte 5 is %#x: no 15-byte chunk flag", hdr[5])
	}
	le := binary.LittleEndian
	chunks := le.Uint32(hdr[12:])
	set := hdr[5] & 1
	buf := make([]byte, 1<<16)
	for i := uint32(0); i < chunks; i++ {
		ck := nvmekv.ChunkKeyIn(h, set, i)
		m, err := ns.Retrieve(ctx, ck[:nvmekv.ChunkKeyBytes], buf)
		if err != nil {
			t.Fatalf("chunk %d under its 15-byte key: %v", i, err)
		}
		if err := ns.Store(ctx, ck[:], buf[:m], 0); err != nil {
			t.Fatal(err)
		}
		if err := ns.Delete(ctx, ck[:nvmekv.ChunkKeyBytes]); err != nil {
			t.Fatal(err)
		}
	}
	hdr[5] &^= 2
	le.PutUint32(hdr[48:], 0)
	crc := crc32.Checksum(hdr[:nvmekv.HeaderBytes+len(key)], crc32.MakeTable(crc32.Castagnoli))
	le.PutUint32(hdr[48:], crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), value))
	if err := ns.Store(ctx, h[:], hdr, 0); err != nil {
		t.Fatal(err)
	}
}

// TestOldFormatChunkedRecord (nvmekv K16): a chunked record written
// before chunk keys became 15 bytes (its chunks under 16-byte keys, the
// header's flag clear) still reads, and a chunked Put over it and a
// Delete of it remove its 16-byte chunks; new records' chunks are 15
// bytes, so UserKeys counts each key once.
func TestOldFormatChunkedRecord(t *testing.T) {
	ns := mustOpen(t, testOptions(t))
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	value := bytes.Repeat([]byte("old format "), 1000) // 11,000 bytes: 3 chunks of 4 KiB
	users := func(want int64, what string) {
		t.Helper()
		if n, ok := kv.UserKeys(); !ok || n != want {
			t.Fatalf("%s: UserKeys = %d, %v; want %d", what, n, ok, want)
		}
	}
	oldChunks := func(key []byte) (present int) {
		h := nvmekv.DefaultHasher(key)
		for set := uint8(0); set < 2; set++ {
			for i := uint32(0); i < 3; i++ {
				ck := nvmekv.ChunkKeyIn(h, set, i)
				if ok, err := ns.Exist(ctx, ck[:]); err != nil {
					t.Fatal(err)
				} else if ok {
					present++
				}
			}
		}
		return present
	}
	for _, k := range []string{"replaced", "deleted"} {
		if err := kv.Put(ctx, []byte(k), value, nvmekv.Meta{Version: 7}); err != nil {
			t.Fatal(err)
		}
		toOldFormat(t, ns, []byte(k), value)
		if oldChunks([]byte(k)) != 3 {
			t.Fatalf("%s: the hand-written record has %d 16-byte chunks, want 3", k, oldChunks([]byte(k)))
		}
		if got, m, err := kv.Get(ctx, nil, []byte(k)); err != nil || !bytes.Equal(got, value) || m.Version != 7 {
			t.Fatalf("Get of the old-format %s: %d bytes, version %d, %v", k, len(got), m.Version, err)
		}
	}
	users(8, "two old-format records (their chunks counted as keys)")

	// A chunked Put over an old-format record: written in the other set
	// with 15-byte keys, the old 16-byte chunks deleted.
	nv := bytes.Repeat([]byte("new format "), 900)
	if err := kv.Put(ctx, []byte("replaced"), nv, nvmekv.Meta{}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := kv.Get(ctx, nil, []byte("replaced")); err != nil || !bytes.Equal(got, nv) {
		t.Fatalf("Get after the Put over the old format: %d bytes, %v", len(got), err)
	}
	if n := oldChunks([]byte("replaced")); n != 0 {
		t.Fatalf("%d 16-byte chunks of the replaced record stayed", n)
	}
	users(5, "one old-format record, one new")

	if err := kv.Delete(ctx, []byte("deleted")); err != nil {
		t.Fatal(err)
	}
	if n := oldChunks([]byte("deleted")); n != 0 {
		t.Fatalf("%d 16-byte chunks of the deleted record stayed", n)
	}
	if _, _, err := kv.Get(ctx, nil, []byte("deleted")); err == nil {
		t.Fatal("the deleted old-format key still reads")
	}
	users(1, "one new record")
	if st := ns.Stats(); st.Items != 1+3 || st.FullKeyItems != 1 {
		t.Fatalf("the namespace holds %d records, %d of 16-byte keys; want 4 (a header and 3 chunks), 1", st.Items, st.FullKeyItems)
	}
	// Deleting the new record takes its 15-byte chunks with it.
	if err := kv.Delete(ctx, []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	if st := ns.Stats(); st.Items != 0 {
		t.Fatalf("%d records left after deleting every key", st.Items)
	}
	users(0, "empty")
	weak, err := nvmekv.NewKV(ns, nvmekv.KVOptions{Hash: func(k []byte) [16]byte { return nvmekv.DefaultHasher(k[:1]) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := weak.UserKeys(); ok {
		t.Fatal("UserKeys answers for a KV whose hasher is not DefaultHasher")
	}
}
