package resp

import (
	"math"
	"strconv"
)

// The RESP3 types a Lua script and the pushes of pub/sub and client
// tracking need, each written as redis-server 7.0 writes it to a RESP2
// client too (networking.c addReplyBool, addReplyDouble, addReplyBigNum).

// Bool writes a boolean: RESP3 "#t"/"#f", RESP2 the integer 1 or 0.
func (w *Writer) Bool(b bool) {
	switch {
	case w.proto == 3 && b:
		w.writeString("#t\r\n")
	case w.proto == 3:
		w.writeString("#f\r\n")
	case b:
		w.writeString(":1\r\n")
	default:
		w.writeString(":0\r\n")
	}
}

// Double writes a double as redis-server 7.0 does (addReplyDouble):
// "%.17g", a RESP3 double (","), in RESP2 a bulk string; infinities as
// inf and -inf.
func (w *Writer) Double(d float64) {
	b := AppendDouble(w.dnum[:0], d)
	if w.proto == 3 {
		w.writeByte(',')
		w.write(b)
		w.writeString("\r\n")
		return
	}
	w.Bulk(b)
}

// AppendDouble appends d as C's "%.17g" prints it (inf, -inf, nan).
func AppendDouble(dst []byte, d float64) []byte {
	switch {
	case math.IsInf(d, 1):
		return append(dst, "inf"...)
	case math.IsInf(d, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(d):
		return append(dst, "nan"...)
	case d != 0 && d > -1e17 && d < 1e17 && d == math.Trunc(d):
		// An integer of at most 17 digits: "%.17g" prints its digits and
		// nothing more, as AppendInt does without strconv's slow path for
		// a fixed precision.
		return strconv.AppendInt(dst, int64(d), 10)
	}
	return strconv.AppendFloat(dst, d, 'g', 17, 64)
}

// BigNumber writes a big number: RESP3 "(", RESP2 a bulk string.
func (w *Writer) BigNumber(s string) {
	if w.proto != 3 {
		w.BulkString(s)
		return
	}
	w.writeByte('(')
	w.writeString(s)
	w.writeString("\r\n")
}

// Push writes the header of an out-of-band push of n elements: RESP3
// ">", RESP2 an array (pub/sub messages).
func (w *Writer) Push(n int) {
	if w.proto == 3 {
		w.prefixInt('>', int64(n))
		return
	}
	w.prefixInt('*', int64(n))
}

// Raw writes bytes another Writer or Append function encoded: pushes
// queued for a connection by other goroutines (pub/sub messages,
// invalidations), written between its replies.
func (w *Writer) Raw(b []byte) { w.write(b) }

// AppendArray appends an array header of n elements.
func AppendArray(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// AppendBulk appends the bulk string b.
func AppendBulk(dst, b []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// AppendNull appends a RESP2 null bulk string.
func AppendNull(dst []byte) []byte { return append(dst, "$-1\r\n"...) }
