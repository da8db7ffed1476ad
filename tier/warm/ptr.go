package warm

import (
	"sync/atomic"
	"unsafe"
)

// The package's only unsafe code: the atomic key/flags word of a record in
// the arena. off is 8-aligned by construction (records are 8-byte aligned
// and the arena is page-aligned), so off+offKeyWord is 4-aligned.

func keyWordPtr(mem []byte, off int) *uint32 {
	return (*uint32)(unsafe.Pointer(&mem[off+offKeyWord]))
}

func loadKeyWord(mem []byte, off int) uint32 { return atomic.LoadUint32(keyWordPtr(mem, off)) }

func markHit(mem []byte, off int, w uint32) {
	if w&flagHit == 0 {
		atomic.OrUint32(keyWordPtr(mem, off), flagHit)
	}
}

func storeKeyWord(mem []byte, off int, w uint32) { atomic.StoreUint32(keyWordPtr(mem, off), w) }
