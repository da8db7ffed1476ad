package tier

import (
	"bytes"
	"runtime"
	"testing"
	"unsafe"
)

// TestNewEntry: the map key newEntry returns is a copy of the key, whatever
// its length (in the entry's allocation up to 48 bytes, a string beyond),
// the entry starts zero, and the key stays valid after a GC with only the
// entry (or only the string) holding the allocation.
func TestNewEntry(t *testing.T) {
	keep := map[string]*entry{}
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 47, 48, 49, 200} {
		key := bytes.Repeat([]byte{byte('a' + n%26)}, n)
		want := string(key)
		e, ks := newEntry(key, 1, 0)
		if ks != want {
			t.Fatalf("len %d: key %q, want %q", n, ks, want)
		}
		if e.ver != 0 || e.exp != 0 || e.sizeSlot != 0 || e.cold != coldNone || e.state != stateLive || e.expMoved || e.loc != 0 || e.node.Resident() {
			t.Fatalf("len %d: entry not zero", n)
		}
		for i := range key {
			key[i] = 'X' // the caller's buffer is reused
		}
		if ks != want {
			t.Fatalf("len %d: map key changed with the caller's buffer", n)
		}
		e.ver = uint64(n + 1)
		keep[ks] = e
	}
	runtime.GC()
	for ks, e := range keep {
		if e.ver != uint64(len(ks)+1) || ks != string(bytes.Repeat([]byte{byte('a' + len(ks)%26)}, len(ks))) {
			t.Fatalf("len %d: entry or key changed after a GC", len(ks))
		}
	}
}

// TestEntryLayout: an entry with a key of up to 16 bytes is one 112-byte
// allocation (a Go size class), as ptr.go's sizes and DirEntryBytes
// assume: a field added to entry must fit its padding, or every key costs
// a size class more. And the LFU's Node is the entry's first field, so
// entryOf finds the entry from it.
func TestEntryLayout(t *testing.T) {
	if n := unsafe.Sizeof(entryKey16{}); n > 112 {
		t.Fatalf("entry with a 16-byte key takes %d bytes, more than the 112-byte size class", n)
	}
	var e entry
	if unsafe.Offsetof(e.node) != 0 || entryOf(&e.node) != &e {
		t.Fatal("the LFU's Node is not the entry's first field")
	}
}
