package nvmekv

import "sync"

// chunkBufs lends the buffers of chunk records (K14): off the Go heap,
// mapped once and lent again, so a big value's reads and writes allocate
// nothing for the collector to clear or collect (a sidecar's Go memory
// limit is its heap budget, which a few MiB of chunk buffers passed and
// made the collector run all along), and page-aligned for O_DIRECT. Up to
// maxFreeChunks free buffers are kept; more are unmapped when given back.
type chunkBufs struct {
	size   int
	mu     sync.Mutex
	free   [][]byte
	mapped map[*byte]bool // the first byte of each buffer mapped and not unmapped
}

// maxFreeChunks: two read windows' buffers (readWindows holds two).
const maxFreeChunks = 2 * chunkWindow

// get lends a buffer of size bytes (not cleared): a free one, a new
// mapping, or without one a slice of the Go heap.
func (p *chunkBufs) get() []byte {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	b, err := mapAnon(p.size)
	if err != nil {
		return make([]byte, p.size)
	}
	b = b[:p.size:p.size]
	p.mu.Lock()
	if p.mapped == nil {
		p.mapped = map[*byte]bool{}
	}
	p.mapped[&b[0]] = true
	p.mu.Unlock()
	return b
}

// put takes back b, and reports true, if get mapped it (any other slice
// is left alone); the namespace must no longer hold it.
func (p *chunkBufs) put(b []byte) bool {
	if cap(b) != p.size {
		return false
	}
	b = b[:p.size]
	p.mu.Lock()
	if !p.mapped[&b[0]] {
		p.mu.Unlock()
		return false // a heap fallback, or not a chunk buffer
	}
	if len(p.free) < maxFreeChunks {
		p.free = append(p.free, b)
		p.mu.Unlock()
		return true
	}
	delete(p.mapped, &b[0])
	p.mu.Unlock()
	_ = unmapAnon(b) // an error leaves it mapped, unused
	return true
}

// close unmaps the free buffers (KV.Close).
func (p *chunkBufs) close() {
	p.mu.Lock()
	free := p.free
	p.free = nil
	for _, b := range free {
		delete(p.mapped, &b[0])
	}
	p.mu.Unlock()
	for _, b := range free {
		_ = unmapAnon(b)
	}
}
