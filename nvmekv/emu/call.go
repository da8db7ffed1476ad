package emu

import (
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/readpath"
)

// call is the reusable state of one Do, Retrieve, Store or Delete (pooled
// in Namespace.calls), so that a call allocates nothing in steady state:
// the pending disk reads and flushes of its batch, and for the single-op
// methods their one Op.
type call struct {
	reads   []readpath.Pending
	flushes []*nvmekv.Op
	op      nvmekv.Op
	one     [1]*nvmekv.Op
}

func (e *Namespace) getCall() *call {
	if c, ok := e.calls.Get().(*call); ok {
		return c
	}
	return &call{}
}

// maxPooledReads bounds the pending-read array a pooled call keeps (a huge
// batch's is left to the GC).
const maxPooledReads = 1024

// putCall drops c's references to the caller's ops and buffers and pools it.
func (e *Namespace) putCall(c *call) {
	clear(c.reads)
	clear(c.flushes)
	c.reads, c.flushes = c.reads[:0], c.flushes[:0]
	if cap(c.reads) > maxPooledReads {
		c.reads = nil
	}
	if cap(c.flushes) > maxPooledReads {
		c.flushes = nil
	}
	c.op, c.one[0] = nvmekv.Op{}, nil
	e.calls.Put(c)
}
