package nvmekv

import (
	"bytes"
	"hash/crc32"
	"testing"
)

// FuzzRecordDecode: decoding a retrieved record never panics, whatever the
// bytes; a record put by putHeader decodes to exactly its key, metadata and
// value; and a record with any one byte changed is refused (the header,
// key and value are all under the CRC32C, which catches every error of up
// to 32 bits), never read as another value.
func FuzzRecordDecode(f *testing.F) {
	f.Add([]byte("key"), []byte("value"), uint32(1), int64(0), uint64(7), uint64(42), uint16(0), byte(0))
	f.Add([]byte("k"), []byte{}, uint32(0), int64(-1), uint64(0), uint64(1), uint16(60), byte(0x80))
	f.Add(bytes.Repeat([]byte("x"), 300), bytes.Repeat([]byte{0}, 1000), uint32(1<<31), int64(1e18), uint64(1<<63), uint64(0), uint16(6), byte(1))
	f.Fuzz(func(t *testing.T, key, value []byte, flags uint32, expiry int64, version, putID uint64, pos uint16, flip byte) {
		if len(key) == 0 || len(key) > 1024 {
			return
		}
		// Any bytes: no panic, whatever key is asked for.
		decodeInline(value, key)
		decodeInline(key, value)

		h := header{flags: flags, valueLen: uint64(len(value)), expiry: expiry, version: version, putID: putID}
		b := make([]byte, HeaderBytes+len(key)+len(value))
		putHeader(b, &h, key, value, true)
		got, v, err := decodeInline(b, key)
		if err != nil || !bytes.Equal(v, value) || got.flags != flags || got.expiry != expiry ||
			got.version != version || got.putID != putID || got.chunks != 0 || got.keyLen != len(key) {
			t.Fatalf("round trip: %+v %q %v, want %+v %q", got, v, err, h, value)
		}
		if flip == 0 {
			return
		}
		b[int(pos)%len(b)] ^= flip
		if _, v, err := decodeInline(b, key); err == nil {
			t.Fatalf("byte %d changed (^%#x), record still read as %q", int(pos)%len(b), flip, v)
		}
	})
}

// decodeInline decodes an inline record as KV.Get does (afterHeader,
// finishInline): header, key, length, CRC.
func decodeInline(b, key []byte) (header, []byte, error) {
	h, err := parseHeader(b)
	if err != nil {
		return h, nil, err
	}
	ok, err := keyMatches(b, &h, key)
	if err != nil || !ok {
		return h, nil, errorOr(err, ErrKeyNotFound)
	}
	if h.chunks != 0 || uint64(len(b)-HeaderBytes-h.keyLen) != h.valueLen {
		return h, nil, ErrUnrecovered
	}
	v := b[HeaderBytes+h.keyLen:]
	if crc32.Update(headerCRC(b, h.keyLen), castagnoli, v) != h.crc {
		return h, nil, ErrUnrecovered
	}
	return h, v, nil
}

func errorOr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}

// FuzzChunkHeader: a chunk header round-trips, and any bytes parse without
// a panic (too short is not ok).
func FuzzChunkHeader(f *testing.F) {
	f.Add(uint64(42), uint32(3), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, putID uint64, i uint32, raw []byte) {
		if _, _, ok := parseChunkHdr(raw); ok != (len(raw) >= ChunkHdrBytes) {
			t.Fatalf("%d bytes parsed ok=%v", len(raw), ok)
		}
		b := make([]byte, ChunkHdrBytes)
		putChunkHdr(b, putID, i)
		id, idx, ok := parseChunkHdr(b)
		if !ok || id != putID || idx != i {
			t.Fatalf("round trip: %d %d %v", id, idx, ok)
		}
	})
}
