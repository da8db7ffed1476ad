package resp

import "sync"

// bufPool lends fixed-size byte buffers to connections while they work: an
// idle connection holds neither a read nor a write buffer (R5), so ten
// thousand idle clients cost their goroutines and sockets, not 48 KiB of
// buffers each.
type bufPool struct {
	size int
	pool sync.Pool // *[]byte of len size
	// holders keeps the *[]byte that get emptied for put to fill again:
	// a Put of &b would allocate b's header anew at every put, once per
	// flushed reply.
	holders sync.Pool
}

// bufPools has one pool per buffer size in use (the Options' sizes).
var bufPools sync.Map // int -> *bufPool

func poolFor(size int) *bufPool {
	if p, ok := bufPools.Load(size); ok {
		return p.(*bufPool)
	}
	p, _ := bufPools.LoadOrStore(size, &bufPool{size: size})
	return p.(*bufPool)
}

// get returns a buffer of len p.size (its bytes are not cleared).
func (p *bufPool) get() []byte {
	if b, ok := p.tryGet(); ok {
		return b
	}
	return make([]byte, p.size)
}

// tryGet returns a buffer of len p.size that was given back, if any.
func (p *bufPool) tryGet() ([]byte, bool) {
	h, ok := p.pool.Get().(*[]byte)
	if !ok {
		return nil, false
	}
	b := *h
	*h = nil
	p.holders.Put(h)
	return b, true
}

// put takes b back; a buffer of another size is left to the collector.
func (p *bufPool) put(b []byte) {
	if cap(b) != p.size {
		return
	}
	h, ok := p.holders.Get().(*[]byte)
	if !ok {
		h = new([]byte)
	}
	*h = b[:p.size]
	p.pool.Put(h)
}
