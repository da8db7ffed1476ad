package server

import (
	"bufio"
	"io"
	"strconv"
)

// Writer encodes RESP2 or RESP3 replies into a buffered stream. Errors are
// sticky inside the bufio.Writer and surface on Flush.
type Writer struct {
	bw    *bufio.Writer
	proto int // 2 or 3
	num   [24]byte
}

// NewWriter returns a RESP2 Writer over w with a size-byte buffer.
func NewWriter(w io.Writer, size int) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, size), proto: 2}
}

// SetProto selects RESP2 (2) or RESP3 (3).
func (w *Writer) SetProto(p int) { w.proto = p }

// Proto is the protocol version in use.
func (w *Writer) Proto() int { return w.proto }

// Buffered is the number of bytes not yet flushed.
func (w *Writer) Buffered() int { return w.bw.Buffered() }

// Flush writes the buffered replies.
func (w *Writer) Flush() error { return w.bw.Flush() }

func (w *Writer) prefixInt(c byte, n int64) {
	b := append(w.num[:0], c)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, '\r', '\n')
	w.bw.Write(b)
}

// Simple writes a simple string (+OK). s must not contain CR or LF.
func (w *Writer) Simple(s string) {
	w.bw.WriteByte('+')
	w.bw.WriteString(s)
	w.bw.WriteString("\r\n")
}

// OK writes +OK.
func (w *Writer) OK() { w.bw.WriteString("+OK\r\n") }

// Error writes an error reply; msg starts with its code ("ERR ...") and has
// CR and LF replaced by spaces so the reply stays one line.
func (w *Writer) Error(msg string) {
	w.bw.WriteByte('-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		w.bw.WriteByte(c)
	}
	w.bw.WriteString("\r\n")
}

// Int writes an integer.
func (w *Writer) Int(n int64) { w.prefixInt(':', n) }

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	w.prefixInt('$', int64(len(b)))
	w.bw.Write(b)
	w.bw.WriteString("\r\n")
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) {
	w.prefixInt('$', int64(len(s)))
	w.bw.WriteString(s)
	w.bw.WriteString("\r\n")
}

// Null writes a null (RESP2 "$-1", RESP3 "_").
func (w *Writer) Null() {
	if w.proto == 3 {
		w.bw.WriteString("_\r\n")
		return
	}
	w.bw.WriteString("$-1\r\n")
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
	w.bw.WriteString(format)
	w.bw.WriteByte(':')
	w.bw.WriteString(s)
	w.bw.WriteString("\r\n")
}
