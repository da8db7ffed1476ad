package tier

import (
	"unsafe"

	"github.com/tiercache/tiercache/policy"
)

// viewString returns a string sharing b's bytes, for map lookups that only
// hash and compare it. b must not be modified while the string is in use.
func viewString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// viewBytes returns s's bytes without copying them; they must not be
// modified.
func viewBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// An entry allocated together with its key's bytes (the directory's map key
// points into it): a lookup that compares the key then reads the entry
// touches one allocation, one cache line for a short key, instead of two.
// The sizes are 112, 128 and 144 bytes, each a Go size class: an entry (96)
// and 16, 32 or 48 bytes of key.
type (
	entryKey16 struct {
		e entry
		k [16]byte
	}
	entryKey32 struct {
		e entry
		k [32]byte
	}
	entryKey48 struct {
		e entry
		k [48]byte
	}
)

// newEntry returns a zero entry of key, whose hash is lo (hashKey), and a
// copy of key to use as its map key, in one allocation when key is at most
// 48 bytes, of tenant id tenant. The hash and the tenant are set before anyone can see the entry: a cleaning
// finds an entry's shard by it without the shard's lock (L7).
func newEntry(key []byte, lo uint64, tenant uint8) (*entry, string) {
	e, ks := newEntryOf(key)
	e.node.SetHash(lo)
	e.tenant = tenant
	return e, ks
}

func newEntryOf(key []byte) (*entry, string) {
	switch n := len(key); {
	case n == 0:
		return &entry{}, ""
	case n <= 16:
		ek := &entryKey16{}
		copy(ek.k[:], key)
		ek.e.key = unsafe.String(&ek.k[0], n)
		return &ek.e, ek.e.key
	case n <= 32:
		ek := &entryKey32{}
		copy(ek.k[:], key)
		ek.e.key = unsafe.String(&ek.k[0], n)
		return &ek.e, ek.e.key
	case n <= 48:
		ek := &entryKey48{}
		copy(ek.k[:], key)
		ek.e.key = unsafe.String(&ek.k[0], n)
		return &ek.e, ek.e.key
	}
	e := &entry{key: string(key)}
	return e, e.key
}

// entryOf is the entry a policy.Node belongs to: every Node the cache gives
// the LFU is the first field of an entry (TestEntryOfNode checks the
// offset), so the Node's address is the entry's.
func entryOf(n *policy.Node) *entry { return (*entry)(unsafe.Pointer(n)) }

// overlaps reports whether a and b share any byte.
func overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}
