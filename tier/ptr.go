package tier

import (
	"reflect"
	"sync/atomic"
	"unsafe"
)

// viewString returns a string sharing b's bytes, for map lookups and for
// ristretto, which only hashes the key and never retains it. b must not be
// modified while the string is in use.
func viewString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// An entry allocated together with its key's bytes (the directory's map key
// points into it): a lookup that compares the key then reads the entry
// touches one allocation, one cache line for a short key, instead of two.
// The sizes round up to the same size classes as an entry and a separate
// key string would: 64, 80 and 96 bytes.
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

// newEntry returns a zero entry and a copy of key to use as its map key,
// in one allocation when key is at most 48 bytes.
func newEntry(key []byte) (*entry, string) {
	switch n := len(key); {
	case n == 0:
		return &entry{}, ""
	case n <= 16:
		ek := &entryKey16{}
		copy(ek.k[:], key)
		return &ek.e, unsafe.String(&ek.k[0], n)
	case n <= 32:
		ek := &entryKey32{}
		copy(ek.k[:], key)
		return &ek.e, unsafe.String(&ek.k[0], n)
	case n <= 48:
		ek := &entryKey48{}
		copy(ek.k[:], key)
		return &ek.e, unsafe.String(&ek.k[0], n)
	}
	return &entry{}, string(key)
}

// A hot copy's bytes (key then value) are allocated together with its
// hotEntry when they fit in hotBlockMax: a hot hit reads the hotEntry (its
// version, then where the value is) right before the value itself is
// copied to the client, so the two are adjacent instead of a dependent
// cache miss apart. The block is a struct type made with reflect (an
// entry followed by a byte array), so that the garbage collector knows
// the entry's pointers; one type per hotBlockStep bytes of key and value,
// made when first needed.
const (
	hotBlockStep = 64
	hotBlockMax  = 32 << 10
)

var hotBlockTypes [hotBlockMax/hotBlockStep + 1]atomic.Pointer[hotBlockType]

type hotBlockType struct {
	t   reflect.Type
	off uintptr // of the byte array
}

// newHotEntry returns a hotEntry whose key and val are copies of key and
// value, each capped at its length; the other fields are zero.
func newHotEntry(key, value []byte) *hotEntry {
	n := len(key) + len(value)
	if n > hotBlockMax {
		he := &hotEntry{}
		he.key, he.val = joinKV(key, value)
		return he
	}
	i := (n + hotBlockStep - 1) / hotBlockStep
	bt := hotBlockTypes[i].Load()
	if bt == nil {
		t := reflect.StructOf([]reflect.StructField{
			{Name: "E", Type: reflect.TypeFor[hotEntry]()},
			{Name: "B", Type: reflect.ArrayOf(i*hotBlockStep, reflect.TypeFor[byte]())},
		})
		bt = &hotBlockType{t: t, off: t.Field(1).Offset}
		hotBlockTypes[i].Store(bt) // a racing caller stores an identical type
	}
	p := reflect.New(bt.t).UnsafePointer()
	b := unsafe.Slice((*byte)(unsafe.Add(p, bt.off)), i*hotBlockStep)
	kl := copy(b, key)
	copy(b[kl:], value)
	he := (*hotEntry)(p)
	he.key, he.val = b[:kl:kl], b[kl:n:n]
	return he
}
