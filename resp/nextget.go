package resp

import "bytes"

// NextGet takes the next command if it is already wholly buffered and is
// a GET of one non-empty key in multibulk form ("*2\r\n$3\r\nGET\r\n$<n>
// \r\n<key>\r\n", the name in any case), and returns the key, valid until
// the next ReadCommand. Anything else (another command, an inline one, one
// not all received yet, a malformed one, or any command before AUTH) stays
// unread for ReadCommand to parse, and ok is false. It never reads from the
// connection and never allocates.
func (rd *Reader) NextGet() (key []byte, ok bool) {
	if rd.preAuth || rd.maxArgs < 2 {
		return nil, false
	}
	const head = "*2\r\n$3\r\n"
	b := rd.buf[rd.r:rd.w]
	if len(b) < len(head)+5+4 || string(b[:len(head)]) != head {
		return nil, false
	}
	b = b[len(head):]
	if b[0]|0x20 != 'g' || b[1]|0x20 != 'e' || b[2]|0x20 != 't' || b[3] != '\r' || b[4] != '\n' || b[5] != '$' {
		return nil, false
	}
	b = b[6:]
	i := bytes.IndexByte(b[:min(len(b), maxCountLine)], '\n')
	if i < 1 || b[i-1] != '\r' {
		return nil, false
	}
	n, ok := ParseInt(b[:i-1])
	if !ok || n < 1 || n > int64(rd.maxBulk) || int64(len(b)-i-1) < n+2 {
		return nil, false
	}
	b = b[i+1:]
	if b[n] != '\r' || b[n+1] != '\n' {
		return nil, false
	}
	key = b[:n:n]
	rd.r = rd.w - len(b) + int(n) + 2
	rd.p = rd.r
	return key, true
}
