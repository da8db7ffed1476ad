package tier

import "sync"

// mgetChunk is the size of the buffers mget copies DRAM records into.
const mgetChunk = 64 << 10

// Chunks holds the buffers an MGet copied DRAM records into, for a caller
// that is done with the values at a point it knows (the server: once their
// reply was written): Release gives the buffers back to a pool shared by
// every Cache, so a busy MGET path neither clears fresh memory nor makes
// garbage. The zero value is ready; a Chunks is used by one goroutine.
type Chunks struct {
	bufs []*[mgetChunk]byte
}

var chunkPool = sync.Pool{New: func() any { return new([mgetChunk]byte) }}

// get returns an empty chunk of capacity max(mgetChunk, n): one from the
// pool, held by ch until Release, or (ch nil, or n larger than a chunk) a
// fresh one that is the caller's.
func (ch *Chunks) get(n int) []byte {
	if ch == nil || n > mgetChunk {
		return make([]byte, 0, max(mgetChunk, n))
	}
	b := chunkPool.Get().(*[mgetChunk]byte)
	ch.bufs = append(ch.bufs, b)
	return b[:0]
}

// Release gives back every chunk ch holds. The values an MGet returned
// from them must not be used after it.
func (ch *Chunks) Release() {
	for i, b := range ch.bufs {
		chunkPool.Put(b)
		ch.bufs[i] = nil
	}
	ch.bufs = ch.bufs[:0]
}

// Held is the number of bytes ch holds.
func (ch *Chunks) Held() int { return len(ch.bufs) * mgetChunk }
