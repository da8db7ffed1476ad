package logstore

import (
	"bytes"
	"fmt"
	"testing"
)

// fuzzRegionBytes is the region image FuzzRegionRecords writes: 4 blocks.
const fuzzRegionBytes = 4 * blockBytes

// FuzzRegionRecords (FuzzWalkRegion's round-trip companion): a region of inline records written by putRecord, with
// at most one byte then changed anywhere (a torn or decayed write), walks
// to a prefix of exactly the records written: each record reported is the
// one put at its offset, with its kind, key and value, and without a
// change every record is reported.
func FuzzRegionRecords(f *testing.F) {
	f.Add([]byte{1, 2, 200, 0, 9}, uint16(100), byte(0))
	f.Add([]byte{10, 11}, uint16(70), byte(0x40))
	f.Fuzz(func(t *testing.T, spec []byte, pos uint16, flip byte) {
		const seq = 9
		mem := make([]byte, fuzzRegionBytes)
		testSB.putRegionHdr(mem, seq)
		type put struct {
			kind       uint8
			key, value []byte
		}
		want := map[int]put{}
		off := regionHdr
		for i, c := range spec {
			vlen := int(c) * 5
			if off+recSize(vlen) > len(mem) {
				break
			}
			p := put{kind: kindStore, key: []byte(fmt.Sprintf("k%d", i)), value: bytes.Repeat([]byte{byte(i + 1)}, vlen)}
			if c&1 == 1 {
				p.kind = kindDelete
			}
			putRecord(mem[off:], p.kind, seq, p.key, p.value)
			want[off] = p
			off += recSize(vlen)
		}
		if flip != 0 {
			mem[int(pos)%len(mem)] ^= flip
		}
		n := 0
		walkRegion(mem, seq, blockBytes, func(off int, r *rec) {
			p, ok := want[off]
			if !ok || r.kind != p.kind || !bytes.Equal(r.key[:r.klen], p.key) || !bytes.Equal(r.value(mem, off), p.value) {
				t.Fatalf("record at %d: kind %d key %q, %d value bytes; written there: %+v (ok %v)", off, r.kind, r.key[:r.klen], r.vlen, p, ok)
			}
			n++
		})
		if flip == 0 && n != len(want) {
			t.Fatalf("%d of %d records walked with nothing changed", n, len(want))
		}
	})
}
