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
	b, ok := rd.bufferedName("*2\r\n$3\r\n", 'g', 'e', 't')
	if !ok {
		return nil, false
	}
	key, b, ok = rd.bufferedBulk(b, 1)
	if !ok {
		return nil, false
	}
	rd.consume(b)
	return key, true
}

// NextSet takes the next command if it is already wholly buffered and is
// a SET of one non-empty key to a value, with no option, in multibulk
// form ("*3\r\n$3\r\nSET\r\n$<n>\r\n<key>\r\n$<n>\r\n<value>\r\n", the
// name in any case), and returns the name as sent, the key and the value,
// valid until the next ReadCommand. As with NextGet, anything else stays
// unread for ReadCommand, ok is false, and it never reads nor allocates.
// A wholly buffered bulk is never a big one (R6): it is in the read buffer.
func (rd *Reader) NextSet() (name, key, value []byte, ok bool) {
	if rd.preAuth || rd.maxArgs < 3 {
		return nil, nil, nil, false
	}
	b, ok := rd.bufferedName("*3\r\n$3\r\n", 's', 'e', 't')
	if !ok {
		return nil, nil, nil, false
	}
	name = rd.buf[rd.r+8 : rd.r+11 : rd.r+11]
	if key, b, ok = rd.bufferedBulk(b, 1); !ok {
		return nil, nil, nil, false
	}
	if value, b, ok = rd.bufferedBulk(b, 0); !ok {
		return nil, nil, nil, false
	}
	rd.consume(b)
	return name, key, value, true
}

// bufferedName checks that the buffered input starts with head (the array
// and the name's bulk header) and a three-letter name x, y, z (lower case;
// matched in any case) with its CRLF, and returns what follows.
func (rd *Reader) bufferedName(head string, x, y, z byte) ([]byte, bool) {
	b := rd.buf[rd.r:rd.w]
	if len(b) < len(head)+6 || string(b[:len(head)]) != head {
		return nil, false
	}
	b = b[len(head):]
	if b[0]|0x20 != x || b[1]|0x20 != y || b[2]|0x20 != z || b[3] != '\r' || b[4] != '\n' {
		return nil, false
	}
	return b[5:], true
}

// bufferedBulk takes a bulk string of at least least bytes and at most
// the bulk limit, wholly in b, and returns it and what follows it.
func (rd *Reader) bufferedBulk(b []byte, least int64) (arg, rest []byte, ok bool) {
	if len(b) < 4 || b[0] != '$' {
		return nil, nil, false
	}
	b = b[1:]
	i := bytes.IndexByte(b[:min(len(b), maxCountLine)], '\n')
	if i < 1 || b[i-1] != '\r' {
		return nil, nil, false
	}
	n, ok := ParseInt(b[:i-1])
	if !ok || n < least || n > int64(rd.maxBulk) || int64(len(b)-i-1) < n+2 {
		return nil, nil, false
	}
	b = b[i+1:]
	if b[n] != '\r' || b[n+1] != '\n' {
		return nil, nil, false
	}
	return b[:n:n], b[n+2:], true
}

// consume marks the buffered input up to rest (a tail of it) read.
func (rd *Reader) consume(rest []byte) {
	rd.r = rd.w - len(rest)
	rd.p = rd.r
}
