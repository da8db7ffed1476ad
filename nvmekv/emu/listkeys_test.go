package emu

import (
	"fmt"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
)

// TestListUserKeys (nvmekv K20): a List walk in small pages gives every
// user key once with its Meta, chunked ones included, skips chunks and
// 8-byte keys of the layers above, and is not disturbed by deleting the
// keys it gave.
func TestListUserKeys(t *testing.T) {
	o := testOptions(t)
	o.Capacity = 64 * (64 << 10)
	ns := mustOpen(t, o)
	defer ns.Close()
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{MaxValueBytes: 64 << 10, KeepExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{}
	for i := range 300 {
		k := fmt.Sprintf("key:%d", i)
		v := make([]byte, 10+i%7)
		if i%50 == 0 {
			v = make([]byte, 12000) // chunked: 4096-byte values per Store
		}
		if err := kv.Put(ctx, []byte(k), v, nvmekv.Meta{Version: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		want[k] = uint64(i + 1)
	}
	if err := ns.Store(ctx, []byte("tcfloor0"), []byte("not a user key"), 0); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	var start []byte
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("the walk does not end")
		}
		var del [][]byte
		start, err = kv.ListUserKeys(ctx, start, 7, func(key []byte, m nvmekv.Meta) {
			got[string(key)]++
			if m.Version != want[string(key)] {
				t.Errorf("%s: version %d, want %d", key, m.Version, want[string(key)])
			}
			del = append(del, append([]byte(nil), key...))
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range del {
			if err := kv.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		if start == nil {
			break
		}
	}
	for k := range want {
		if got[k] != 1 {
			t.Errorf("%s given %d times", k, got[k])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d keys given, %d written", len(got), len(want))
	}
}
