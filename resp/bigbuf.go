package resp

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// Off-heap buffers for big bulks (R6): a Reader with MayKeep set receives
// a big bulk it may not give away into one of these, mapped once and
// used again by the next big bulk of its size class, so the bytes are
// received once, into pages already in memory, with nothing cleared and
// nothing for the collector (the Go memory limit does not count them).

// maxFreeBig bounds the bytes of the free big buffers kept for reuse;
// past it, the oldest are unmapped.
const maxFreeBig = 256 << 20

// bigBuffers is the process's free list of off-heap big buffers.
var bigBuffers struct {
	mu        sync.Mutex
	free      []freeBig // oldest first
	freeBytes int
}

// bigMapped counts the bytes of off-heap big buffers mapped (in use or
// free).
var bigMapped atomic.Int64

type freeBig struct {
	b  []byte
	at time.Time // when it was given back
}

// getBig returns an off-heap buffer of len bigClass(need): a free one of
// that size, else a new mapping.
func getBig(need int) ([]byte, error) {
	size := bigClass(need)
	bb := &bigBuffers
	bb.mu.Lock()
	for i := len(bb.free) - 1; i >= 0; i-- { // the most recent first: its pages are likeliest in memory
		if f := bb.free[i]; len(f.b) == size {
			bb.free = append(bb.free[:i], bb.free[i+1:]...)
			bb.freeBytes -= size
			bb.mu.Unlock()
			return f.b, nil
		}
	}
	bb.mu.Unlock()
	b, err := mapBig(size)
	if err != nil {
		return nil, err
	}
	bigMapped.Add(int64(size))
	return b, nil
}

// putBig gives back a buffer getBig returned (no reference to it may
// remain); the oldest free buffers past maxFreeBig are unmapped.
func putBig(b []byte) {
	b = b[:cap(b)]
	var drop [][]byte
	bb := &bigBuffers
	bb.mu.Lock()
	bb.free = append(bb.free, freeBig{b: b, at: time.Now()})
	bb.freeBytes += len(b)
	for bb.freeBytes > maxFreeBig {
		drop = append(drop, bb.free[0].b)
		bb.freeBytes -= len(bb.free[0].b)
		bb.free = bb.free[1:]
	}
	bb.mu.Unlock()
	unmapAll(drop)
}

// LendBig returns an off-heap buffer of n bytes or more (len n) from the
// big bulks' buffers, or nil when none could be mapped: a server reads a
// big value into it and sends it from there. GiveBackBig takes it back
// once nothing refers to it.
func LendBig(n int) []byte {
	b, err := getBig(n)
	if err != nil {
		return nil
	}
	return b[:n]
}

// PoisonByte is what Poison fills a buffer with (the Reader's PoisonBig
// test seam).
const PoisonByte = 0xA5

// Poison overwrites the whole of b's capacity with PoisonByte.
func Poison(b []byte) {
	b = b[:cap(b)]
	for i := range b {
		b[i] = PoisonByte
	}
}

// GiveBackBig takes back a buffer LendBig returned.
func GiveBackBig(b []byte) { putBig(b) }

// TrimBigBuffers unmaps the free off-heap big buffers unused for idle or
// longer (a server calls it from time to time, so that a burst of big
// values leaves no memory behind), and returns the bytes still mapped.
func TrimBigBuffers(idle time.Duration) int64 {
	var drop [][]byte
	bb := &bigBuffers
	bb.mu.Lock()
	keep := bb.free[:0]
	for _, f := range bb.free {
		if time.Since(f.at) >= idle {
			drop = append(drop, f.b)
			bb.freeBytes -= len(f.b)
			continue
		}
		keep = append(keep, f)
	}
	clear(bb.free[len(keep):])
	bb.free = keep
	bb.mu.Unlock()
	unmapAll(drop)
	return bigMapped.Load()
}

// BigBufferBytes is the bytes of off-heap big buffers mapped now, in use
// or free.
func BigBufferBytes() int64 { return bigMapped.Load() }

func unmapAll(bs [][]byte) {
	for _, b := range bs {
		if unmapBig(b) == nil { // an error leaves it mapped: counted still
			bigMapped.Add(-int64(len(b)))
		}
	}
}

// bigClass is the size of the buffers a bulk of need bytes is received
// into: need rounded up to the next eighth of its power of two (and to
// pages), so bulks of close sizes share buffers, and a buffer is at most
// 1/8 larger than its bulk.
func bigClass(need int) int {
	shift := max(bits.Len(uint(need))-4, 12) // an eighth of the power of two at or below need, at least a page
	step := 1 << shift
	return (need + step - 1) &^ (step - 1)
}
