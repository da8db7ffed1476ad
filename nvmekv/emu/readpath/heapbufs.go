package readpath

import "sync"

// Reads larger than a read slot take a buffer from the Go heap instead of
// a registered one (E24): a pooled buffer of the read's power-of-two size
// class, from 16 KiB (2 × SlotBytes) to 4 MiB, given back when its wave is
// done, and freed by the garbage collector when the pools sit idle
// (sync.Pool drops what two collections did not reuse). The heap allocates
// objects of 16 KiB and more in whole pages, so these buffers are aligned
// for O_DIRECT and passthrough; one that is not (never seen) is not used.
// The collector never moves an object, and the wave holds the buffer until
// the read completed.
const (
	heapMinBytes = 2 * SlotBytes
	heapClasses  = 9 // 16 KiB << 0..8: up to 4 MiB
	heapMaxBytes = heapMinBytes << (heapClasses - 1)
)

// heapBufs pools heap buffers by size class.
type heapBufs [heapClasses]sync.Pool // of *[]byte, so Put does not allocate

// class is the size class of an n-byte read (n > SlotBytes), or -1 above
// heapMaxBytes.
func heapClass(n int) int {
	for c := 0; c < heapClasses; c++ {
		if n <= heapMinBytes<<c {
			return c
		}
	}
	return -1
}

// get returns a buffer of at least n bytes (class c) aligned to align, or
// nil.
func (h *heapBufs) get(c, align int) *[]byte {
	if b, ok := h[c].Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, heapMinBytes<<c)
	if !aligned(b, align) {
		return nil
	}
	return &b
}

func (h *heapBufs) put(c int, b *[]byte) { h[c].Put(b) }
