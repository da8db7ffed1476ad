package emu

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
)

// TestValueLenHint (nvmekv K18): the index's value length of a key is its
// value's length, at most 15 bytes more, for inline and extent records; a
// chunked record's header gives a small one (a Get then reads the header
// first, as for an unknown size); a key the namespace does not hold is
// not found, and MayHold says so too, both from memory.
func TestValueLenHint(t *testing.T) {
	ns := mustOpen(t, testOptions(t))
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	for _, n := range []int{0, 1, 15, 16, 100, 511, 1000, 3000, 3600, 11000} {
		key := fmt.Appendf(nil, "hint:%d", n)
		value := bytes.Repeat([]byte{byte(n)}, n)
		if err := kv.Put(ctx, key, value, nvmekv.Meta{Version: 1}); err != nil {
			t.Fatal(err)
		}
		hint, ok, found := kv.ValueLenHint(key)
		if !ok || !found || !kv.MayHold(key) {
			t.Fatalf("%d-byte value: hint %d, ok %v, found %v, MayHold %v", n, hint, ok, found, kv.MayHold(key))
		}
		if n < 4000 && (hint < n || hint > n+15) {
			t.Fatalf("%d-byte value: hint %d, want %d to %d", n, hint, n, n+15)
		}
		got, _, err := kv.GetSized(ctx, nil, key, hint)
		if err != nil || !bytes.Equal(got, value) {
			t.Fatalf("%d-byte value read with the hint %d: %v, %d bytes", n, hint, err, len(got))
		}
	}
	if _, ok, found := kv.ValueLenHint([]byte("absent")); ok || found || kv.MayHold([]byte("absent")) {
		t.Fatalf("a key never stored: ok %v, found %v, MayHold %v", ok, found, kv.MayHold([]byte("absent")))
	}
}
