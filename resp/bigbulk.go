package resp

import (
	"io"
	"runtime"
)

// A bulk too large for the read buffer is received on its own (R6, and
// the server's S18), into a recycled off-heap buffer (bigbuf.go) or a
// slice of the Go heap, yielding the P as it goes.

// bigBulk is a big bulk of the current command: b holds it (and CRLF),
// off says b is an off-heap buffer (getBig); b is nil once kept.
type bigBulk struct {
	b   []byte
	off bool
}

// readBig reads a bulk of n bytes (+CRLF) into a big slice of its own
// (R6). With MayKeep set and false for n, that is an off-heap buffer,
// recycled, received straight into. Otherwise it is a slice of the Go
// heap of exactly its size: its first half goes into pieces of pieceBytes
// lent by a pool, and once half has arrived the slice is allocated, the
// pieces copied into it and the rest read there: a declared length
// commits at most twice the bytes that arrived, and a 64 MiB value costs
// one allocation of 64 MiB and a copy of 32 MiB. Receiving it yields the
// P every yieldEvery bytes.
func (rd *Reader) readBig(n int) error {
	need := n + 2
	if rd.query+need > rd.maxQuery {
		return protoErr("query buffer limit exceeded")
	}
	var b []byte
	got := 0
	off := rd.MayKeep != nil && !rd.MayKeep(n)
	if off {
		var err error
		if b, err = getBig(need); err != nil {
			off = false // no mapping: on the heap, as any other
		} else {
			got = copy(b[:need], rd.buf[rd.p:rd.w])
			rd.p += got
		}
	}
	if !off {
		var err error
		if b, got, err = rd.heapBig(need); err != nil {
			return err
		}
	}
	err := rd.readRest(b[:need], got)
	if err == nil && (b[n] != '\r' || b[n+1] != '\n') {
		err = protoErr("bulk string is not terminated by CRLF")
	}
	if err != nil {
		if off {
			putBig(b)
		}
		return err
	}
	rd.query += need
	rd.bigs = append(rd.bigs, bigBulk{b: b, off: off})
	rd.addSpan(span{off: -int32(len(rd.bigs)), end: int32(n)})
	return nil
}

// heapBig returns a slice of the Go heap of need bytes holding the first
// got bytes (half, at least) of a big bulk, received into pieces first.
func (rd *Reader) heapBig(need int) (b []byte, got int, err error) {
	pieces, got, err := rd.readPieces(need)
	if err != nil {
		return nil, 0, err
	}
	b = make([]byte, need)
	off := 0
	for _, p := range pieces {
		off += copy(b[off:], p)
		bigPieces.put(p)
		runtime.Gosched() // one piece at a time: a memmove cannot be preempted
	}
	return b, got, nil
}

// readRest receives b's bytes past the first got.
func (rd *Reader) readRest(b []byte, got int) error {
	yielded := got
	for got < len(b) {
		if got-yielded >= yieldEvery {
			runtime.Gosched()
			yielded = got
		}
		m, err := rd.readSome(b[got:])
		got += m
		if err != nil {
			return err
		}
	}
	return nil
}

// readPieces receives the first half (at least) of a bulk of need bytes,
// starting with what buf holds past p, into pieces lent by bigPieces; got
// is how many bytes they hold. On an error the pieces are given back.
func (rd *Reader) readPieces(need int) (pieces [][]byte, got int, err error) {
	cur := newPiece(rd.w - rd.p)
	cur = append(cur, rd.buf[rd.p:min(rd.w, rd.p+need)]...)
	rd.p += len(cur)
	got = len(cur)
	yielded := got
	for got < need/2 {
		if len(cur) == cap(cur) {
			pieces = append(pieces, cur)
			cur = newPiece(got)
			if got-yielded >= yieldEvery {
				// A long receive shares the CPU: others' requests wait at
				// most about one yieldEvery's worth of reads.
				runtime.Gosched()
				yielded = got
			}
		}
		var m int
		m, err = rd.readSome(cur[len(cur):min(cap(cur), len(cur)+need-got)])
		cur = cur[:len(cur)+m]
		got += m
		if err != nil {
			for _, p := range append(pieces, cur) {
				bigPieces.put(p)
			}
			return nil, 0, err
		}
	}
	return append(pieces, cur), got, nil
}

// readSome is one read of a big bulk's bytes into p (len(p) > 0): an end
// of input before the bulk's end is io.ErrUnexpectedEOF.
func (rd *Reader) readSome(p []byte) (int, error) {
	if rd.BeforeBlock != nil {
		if err := rd.BeforeBlock(); err != nil {
			return 0, err
		}
	}
	m, err := rd.rd.Read(p)
	rd.reads++
	if m == 0 && err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	return m, nil
}

// Keep reports whether arg, an argument of the last command read, is a
// big bulk's slice of the Go heap (R6), and if so gives it to the caller,
// who may keep it instead of copying it: the Reader forgets it. An
// off-heap one is never given (false).
func (rd *Reader) Keep(arg []byte) bool {
	if len(arg) == 0 {
		return false
	}
	for i, bb := range rd.bigs {
		if !bb.off && len(bb.b) > 0 && &bb.b[0] == &arg[0] {
			rd.bigs[i].b = nil
			return true
		}
	}
	return false
}

// Recycle gives the off-heap buffers of the big bulks of the commands
// before the current one back, for the next big bulks to be received into
// (R6). Call it once nothing refers to those commands' arguments: their
// replies were flushed.
func (rd *Reader) Recycle() {
	for i, b := range rd.done {
		if rd.PoisonBig {
			Poison(b)
		}
		putBig(b)
		rd.done[i] = nil
	}
	rd.done = rd.done[:0]
}

// retireBigs moves the last command's off-heap buffers to done, for
// Recycle, and forgets its big bulks.
func (rd *Reader) retireBigs() {
	for _, bb := range rd.bigs {
		if bb.off {
			rd.done = append(rd.done, bb.b)
		}
	}
	clear(rd.bigs)
	rd.bigs = rd.bigs[:0]
}

// yieldEvery is how many bytes a big bulk's receive or copy handles
// between yields to other goroutines (the server's S18).
const yieldEvery = 1 << 20

// pieceBytes is the size of the pieces that receive the first half of a
// big bulk; bigPieces lends them.
const pieceBytes = 1 << 20

var bigPieces = poolFor(pieceBytes)

// newPiece returns an empty piece to receive a big bulk's bytes into once
// got of them have arrived: one bigPieces lends (memory the process holds
// already), else a new one of at most got bytes (at least bigMinChunk), so
// that a declared length makes new memory only as bytes arrive: a client
// that declares 512 MiB and sends a few bytes costs 64 KiB here, not a
// piece of 1 MiB (R12).
func newPiece(got int) []byte {
	if b, ok := bigPieces.tryGet(); ok {
		return b[:0]
	}
	return make([]byte, 0, min(pieceBytes, max(bigMinChunk, got)))
}
