package nvmekv

import (
	"math/bits"
	"sync"
	"unsafe"
)

// recBufs lends the buffers of header records, read and written, by size
// class: powers of two from recBufMin to recBufMax. A sized read
// (GetSized, GetManySized) asks for the whole inline record, so its
// buffer is the record's size rather than HeaderReadBytes, and a Put's
// header record holds its inline value: without the classes each of them
// was fresh memory, most of what a busy MGET path left for the collector.
type recBufs struct {
	// classes[i] holds the first bytes (unsafe.Pointer, which an
	// interface holds without an allocation) of buffers of recBufMin << i
	// bytes.
	classes [recBufClasses]sync.Pool
}

const (
	recBufMin     = 512
	recBufClasses = 8 // 512 B .. 64 KiB
	recBufMax     = recBufMin << (recBufClasses - 1)
)

// class is the index of the smallest class holding n bytes, -1 if none.
func recClass(n int) int {
	if n > recBufMax {
		return -1
	}
	if n <= recBufMin {
		return 0
	}
	return bits.Len(uint(n-1)) - bits.Len(recBufMin-1)
}

// get returns a buffer of len n: pooled up to recBufMax, fresh above.
// Its bytes are not cleared.
func (p *recBufs) get(n int) []byte {
	c := recClass(n)
	if c < 0 {
		return make([]byte, n)
	}
	if b, ok := p.classes[c].Get().(unsafe.Pointer); ok {
		return unsafe.Slice((*byte)(b), recBufMin<<c)[:n]
	}
	return make([]byte, n, recBufMin<<c)
}

// put takes back a buffer get returned, once nothing refers to it (the
// namespace no longer holds it: Do returned); a buffer of another
// capacity is left to the collector.
func (p *recBufs) put(b []byte) {
	c := recClass(cap(b))
	if c < 0 || cap(b) != recBufMin<<c {
		return
	}
	p.classes[c].Put(unsafe.Pointer(unsafe.SliceData(b)))
}
