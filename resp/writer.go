package resp

import (
	"io"
	"net"
	"strconv"
)

// Writer encodes RESP2 or RESP3 replies into a buffered stream. Errors are
// sticky and surface on Flush.
//
// Replies are encoded into one buffer, except the values passed to
// BulkShared: those stay where they are and are written with the buffer's
// pieces around them in one writev, so a large cached value is copied once
// (by the kernel) instead of twice.
type Writer struct {
	w     io.Writer
	bw    BuffersWriter // w, if it writes a net.Buffers itself
	buf   []byte        // encoded bytes; nil between flushes (lent by pool); never reallocated while segs may point into it
	size  int           // cap of buf
	pool  *bufPool
	mark  int         // buf[:mark] is already in segs
	segs  net.Buffers // pending pieces in order: buffer slices and shared values
	iov   net.Buffers // backing array of segs, kept across flushes
	held  int         // bytes held by reference in segs
	err   error
	proto int // 2 or 3
	num   [24]byte
	dnum  [32]byte // Double's digits (a local array would escape to the heap)
	nerr  uint64   // Error replies written
	mute  bool     // replies are dropped (Mute)

	// CountError, when set, is called with every Error reply's message
	// (a server counts them by code).
	CountError func(msg string)
}

// GatherMin is the smallest value BulkShared writes by reference; smaller
// ones are cheaper to copy than an extra iovec.
const GatherMin = 512

// maxSegs bounds the iovecs of one writev (Linux IOV_MAX is 1024).
const maxSegs = 512

// BuffersWriter writes and consumes bufs in order, as one writev.
type BuffersWriter interface {
	WriteBuffers(bufs *net.Buffers) error
}

// NewWriter returns a RESP2 Writer over w with a size-byte buffer.
func NewWriter(w io.Writer, size int) *Writer {
	bw, _ := w.(BuffersWriter)
	return &Writer{w: w, bw: bw, size: size, pool: poolFor(size), proto: 2}
}

// SetProto selects RESP2 (2) or RESP3 (3).
func (w *Writer) SetProto(p int) { w.proto = p }

// Proto is the protocol version in use.
func (w *Writer) Proto() int { return w.proto }

// Buffered is the number of bytes not yet flushed.
func (w *Writer) Buffered() int { return len(w.buf) + w.held }

// Err is the first write error, which every later Flush returns too.
func (w *Writer) Err() error { return w.err }

// Mute drops (on) or writes again (off) every reply written from now on,
// and returns whether replies were dropped before: a server's CLIENT
// REPLY OFF and SKIP. Nothing already buffered is dropped, and Error
// replies still count (Errors, CountError), as Redis counts an error it
// does not send.
func (w *Writer) Mute(on bool) (was bool) {
	was, w.mute = w.mute, on
	return was
}

// Errors counts the Error replies written so far.
func (w *Writer) Errors() uint64 { return w.nerr }

// Flush writes the buffered replies.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.held == 0 {
		if len(w.buf) > 0 {
			_, w.err = w.w.Write(w.buf)
		}
	} else {
		if w.mark < len(w.buf) {
			w.segs = append(w.segs, w.buf[w.mark:])
		}
		w.iov = w.segs[:0]
		if w.bw != nil {
			w.err = w.bw.WriteBuffers(&w.segs)
		} else {
			_, w.err = w.segs.WriteTo(w.w) // consumes segs
		}
		clear(w.iov[:cap(w.iov)]) // drop the references to shared values
		w.segs = w.iov
	}
	// Every byte is with the socket (or outConn's spill) now: the buffer
	// goes back to the pool until the next reply.
	if w.buf != nil {
		w.pool.put(w.buf)
	}
	w.buf, w.mark, w.held = nil, 0, 0
	return w.err
}

// Detach returns the replies written since the last Flush and forgets
// them without writing them, when the buffer holds them all (nothing was
// flushed on the way, no BulkShared value is held by reference): a caller
// that reads its own replies back (a script's commands) is spared the copy.
// They stay valid until the next write. ok false: Flush instead.
func (w *Writer) Detach() (b []byte, ok bool) {
	if w.held != 0 || w.err != nil {
		return nil, false
	}
	b, w.buf, w.mark = w.buf, w.buf[:0], 0
	return b, true
}

// room makes space for n more bytes in buf, flushing if needed; it reports
// false when n does not fit even an empty buffer.
func (w *Writer) room(n int) bool {
	if w.buf == nil {
		w.buf = w.pool.get()[:0]
	}
	if len(w.buf)+n <= cap(w.buf) {
		return true
	}
	w.Flush()
	if n > w.size {
		return false
	}
	w.buf = w.pool.get()[:0]
	return true
}

func (w *Writer) write(b []byte) {
	if w.mute {
		return
	}
	if w.room(len(b)) {
		w.buf = append(w.buf, b...)
		return
	}
	if w.err == nil { // larger than the whole buffer: write it through
		_, w.err = w.w.Write(b)
	}
}

func (w *Writer) writeString(s string) {
	if w.mute {
		return
	}
	if w.room(len(s)) {
		w.buf = append(w.buf, s...)
		return
	}
	if w.err == nil {
		_, w.err = io.WriteString(w.w, s)
	}
}

func (w *Writer) writeByte(c byte) {
	if !w.mute && w.room(1) {
		w.buf = append(w.buf, c)
	}
}

// BulkInto writes the header and trailer of a bulk string of n bytes into
// the buffer and returns the n bytes between them for the caller to fill
// at once (a cache copying a value straight into the reply), or nil,
// writing nothing, when the buffer has no room for it without a flush: it
// never flushes, so a cache may call it holding a lock. Muted, it is nil.
func (w *Writer) BulkInto(n int) []byte {
	if w.mute {
		return nil
	}
	if w.buf == nil {
		w.buf = w.pool.get()[:0]
	}
	b := append(w.num[:0], '$')
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '\r', '\n')
	if len(w.buf)+len(b)+n+2 > cap(w.buf) {
		return nil
	}
	w.buf = append(w.buf, b...)
	start := len(w.buf)
	w.buf = append(w.buf[:start+n], '\r', '\n')
	return w.buf[start : start+n : start+n]
}

// BulkShared writes a bulk string whose bytes the caller will not modify
// until the next Flush returned (an immutable cached value): a large one is
// written from where it is, without copying it into the buffer.
func (w *Writer) BulkShared(b []byte) {
	if len(b) < GatherMin || w.mute {
		w.Bulk(b)
		return
	}
	w.prefixInt('$', int64(len(b)))
	if len(w.segs) >= maxSegs-2 {
		w.Flush()
	}
	if w.mark < len(w.buf) {
		w.segs = append(w.segs, w.buf[w.mark:len(w.buf):len(w.buf)])
		w.mark = len(w.buf)
	}
	w.segs = append(w.segs, b)
	w.held += len(b)
	w.writeString("\r\n")
	if w.held >= 4*w.size {
		w.Flush()
	}
}

func (w *Writer) prefixInt(c byte, n int64) {
	b := append(w.num[:0], c)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, '\r', '\n')
	w.write(b)
}

// Simple writes a simple string (+OK). s must not contain CR or LF.
func (w *Writer) Simple(s string) {
	w.writeByte('+')
	w.writeString(s)
	w.writeString("\r\n")
}

// OK writes +OK.
func (w *Writer) OK() { w.writeString("+OK\r\n") }

// Error writes an error reply; msg starts with its code ("ERR ...") and has
// CR and LF replaced by spaces so the reply stays one line.
func (w *Writer) Error(msg string) {
	if w.CountError != nil {
		w.CountError(msg)
	}
	w.ErrorCounted(msg)
}

// ErrorCounted writes an error reply that was counted where it arose (a
// command's error a script passes on: Redis's ERR_REPLY_FLAG_NO_STATS_UPDATE),
// without calling CountError.
func (w *Writer) ErrorCounted(msg string) {
	w.nerr++
	if w.mute {
		return
	}
	if w.room(len(msg) + 3) {
		w.buf = AppendError(w.buf, msg)
		return
	}
	w.write(AppendError(nil, msg)) // longer than the whole buffer
}

// AppendError appends the error reply msg to dst, with CR and LF replaced
// by spaces so that it stays one line.
func AppendError(dst []byte, msg string) []byte {
	dst = append(dst, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return append(dst, '\r', '\n')
}

// Int writes an integer.
func (w *Writer) Int(n int64) { w.prefixInt(':', n) }

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	w.prefixInt('$', int64(len(b)))
	w.write(b)
	w.writeString("\r\n")
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) {
	w.prefixInt('$', int64(len(s)))
	w.writeString(s)
	w.writeString("\r\n")
}

// Null writes a null (RESP2 "$-1", RESP3 "_").
func (w *Writer) Null() {
	if w.proto == 3 {
		w.writeString("_\r\n")
		return
	}
	w.writeString("$-1\r\n")
}

// NullArray writes a null array (RESP2 "*-1", RESP3 "_"): EXEC's reply
// when WATCH aborted it.
func (w *Writer) NullArray() {
	if w.proto == 3 {
		w.writeString("_\r\n")
		return
	}
	w.writeString("*-1\r\n")
}

// Array writes an array header of n elements.
func (w *Writer) Array(n int) { w.prefixInt('*', int64(n)) }

// Map writes a map header of n pairs (a flat array of 2n in RESP2).
func (w *Writer) Map(n int) {
	if w.proto == 3 {
		w.prefixInt('%', int64(n))
		return
	}
	w.prefixInt('*', int64(2*n))
}

// Set writes a set header (an array in RESP2).
func (w *Writer) Set(n int) {
	if w.proto == 3 {
		w.prefixInt('~', int64(n))
		return
	}
	w.prefixInt('*', int64(n))
}

// Verbatim writes a verbatim text string (RESP3 "=") or a bulk string (RESP2).
func (w *Writer) Verbatim(format, s string) {
	if w.proto != 3 {
		w.BulkString(s)
		return
	}
	w.prefixInt('=', int64(len(s)+4))
	// The format is three bytes, whatever was given: cut, or padded with
	// spaces, as Redis's addReplyVerbatim makes it (a script's
	// verbatim_string table can hold any format).
	if len(format) > 3 {
		format = format[:3]
	}
	w.writeString(format)
	for i := len(format); i < 3; i++ {
		w.writeByte(' ')
	}
	w.writeByte(':')
	w.writeString(s)
	w.writeString("\r\n")
}
