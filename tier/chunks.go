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
	// The arrays of the last MGet, reused by the next: its values and
	// kinds, and the keys it had to read from cold.
	vals  [][]byte
	kinds []Kind
	need  []mgetPending
}

// keptArrays is the most keys whose arrays a Chunks keeps for the next
// MGet: a connection that once asked for a million keys does not hold
// 25 MB of arrays for the rest of its life (server S17).
const keptArrays = 4096

// arrays returns an MGet's values and kinds for n keys, cleared: ch's,
// reused (valid until ch's next MGet), or fresh if ch is nil or n is
// above keptArrays.
func (ch *Chunks) arrays(n int) ([][]byte, []Kind, []mgetPending) {
	if ch == nil || n > keptArrays {
		return make([][]byte, n), make([]Kind, n), nil
	}
	if cap(ch.vals) < n {
		ch.vals, ch.kinds = make([][]byte, n), make([]Kind, n)
	}
	ch.vals, ch.kinds = ch.vals[:n], ch.kinds[:n]
	clear(ch.vals)
	clear(ch.kinds)
	return ch.vals, ch.kinds, ch.need[:0]
}

// keep holds on to need's array for ch's next MGet (one of at most
// keptArrays keys).
func (ch *Chunks) keep(need []mgetPending) {
	if ch != nil && cap(need) <= keptArrays {
		ch.need = need[:0]
	}
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
// from them must not be used after it. (The arrays stay, for the next.)
func (ch *Chunks) Release() {
	for i, b := range ch.bufs {
		chunkPool.Put(b)
		ch.bufs[i] = nil
	}
	ch.bufs = ch.bufs[:0]
}

// Held is the number of bytes ch holds.
func (ch *Chunks) Held() int { return len(ch.bufs) * mgetChunk }

// chunkFill lays one mget's values end to end in chunks (ch's, or fresh
// ones if ch is nil): a new chunk when the current one is full, so no value
// is copied twice, as appending to one growing buffer would.
type chunkFill struct {
	ch  *Chunks
	cur []byte
}

// take returns room for n bytes: len and cap n, so an append to it cannot
// reach the next value.
func (f *chunkFill) take(n int) []byte {
	if cap(f.cur)-len(f.cur) < n {
		f.cur = f.ch.get(n)
	}
	b := f.cur[len(f.cur) : len(f.cur)+n : len(f.cur)+n]
	f.cur = f.cur[:len(f.cur)+n]
	return b
}
