package resp

import (
	"io"
	"runtime"
)

// A bulk too large for the read buffer is received on its own (R6, and
// the server's S18): its first half into pieces lent by a pool, then one
// slice of exactly its size, yielding the P as it goes.

// readBig reads a bulk of n bytes (+CRLF) into a slice of its own. Its
// first half goes into pieces of pieceBytes lent by a pool, and once half
// has arrived the bulk gets one slice of exactly its size, into which the
// pieces are copied and the rest is read (R6): a declared length commits
// at most twice the bytes that arrived, as when the slice doubled as bytes
// arrived, but a 64 MiB value costs one allocation of 64 MiB and a copy of
// 32 MiB instead of a series of doublings (128 MiB allocated, 64 MiB
// copied), and receiving it yields the P every yieldEvery bytes.
func (rd *Reader) readBig(n int) error {
	need := n + 2
	if rd.query+need > rd.maxQuery {
		return protoErr("query buffer limit exceeded")
	}
	pieces, got, err := rd.readPieces(need)
	if err != nil {
		return err
	}
	b := make([]byte, need)
	off := 0
	for _, p := range pieces {
		off += copy(b[off:], p)
		bigPieces.put(p)
		runtime.Gosched() // one piece at a time: a memmove cannot be preempted
	}
	yielded := got
	for got < need {
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
	if b[n] != '\r' || b[n+1] != '\n' {
		return protoErr("bulk string is not terminated by CRLF")
	}
	rd.query += need
	rd.bigs = append(rd.bigs, b)
	rd.addSpan(span{off: -int32(len(rd.bigs)), end: int32(n)})
	return nil
}

// readPieces receives the first half (at least) of a bulk of need bytes,
// starting with what buf holds past p, into pieces lent by bigPieces; got
// is how many bytes they hold. On an error the pieces are given back.
func (rd *Reader) readPieces(need int) (pieces [][]byte, got int, err error) {
	cur := bigPieces.get()[:0]
	cur = append(cur, rd.buf[rd.p:min(rd.w, rd.p+need)]...)
	rd.p += len(cur)
	got = len(cur)
	yielded := got
	for got < need/2 {
		if len(cur) == cap(cur) {
			pieces = append(pieces, cur)
			cur = bigPieces.get()[:0]
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

// yieldEvery is how many bytes a big bulk's receive or copy handles
// between yields to other goroutines (the server's S18).
const yieldEvery = 1 << 20

// pieceBytes is the size of the pieces that receive the first half of a
// big bulk; bigPieces lends them.
const pieceBytes = 1 << 20

var bigPieces = poolFor(pieceBytes)
