package resp

import "bytes"

// inline parses an inline command (a text line of space-separated words,
// with "double" and 'single' quotes as in redis-cli) at p. Quoted words are
// unescaped in place: the result is never longer than its source.
func (rd *Reader) inline() (done bool, err error) {
	seg := rd.buf[rd.p:rd.w]
	lim := rd.maxInline
	if len(seg) > lim {
		seg = seg[:lim]
	}
	i := bytes.IndexByte(seg, '\n')
	if i < 0 {
		if len(seg) >= lim {
			return false, protoErr("too big inline request")
		}
		return false, nil
	}
	start := rd.p
	end := start + i
	if end > start && rd.buf[end-1] == '\r' {
		end--
	}
	rd.p = start + i + 1
	if err := rd.splitInline(start, end); err != nil {
		return false, err
	}
	if len(rd.spans) == 0 { // an empty line is ignored
		rd.r = rd.p
		rd.skipped = true
		return false, nil
	}
	limit := rd.maxArgs
	if rd.preAuth {
		limit = preAuthMaxArgs
	}
	if len(rd.spans) > limit {
		return false, protoErr("invalid multibulk length")
	}
	rd.n = len(rd.spans)
	return true, nil
}

func (rd *Reader) splitInline(i, end int) error {
	b := rd.buf
	for {
		for i < end && isSpace(b[i]) {
			i++
		}
		if i >= end {
			return nil
		}
		out := i // write position for the unescaped word
		start := out
		switch b[i] {
		case '"':
			i++
			for {
				if i >= end {
					return protoErr("unbalanced quotes in request")
				}
				c := b[i]
				if c == '"' {
					i++
					break
				}
				if c == '\\' && i+1 < end {
					i++
					switch b[i] {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					case 'x':
						if i+2 < end && isHex(b[i+1]) && isHex(b[i+2]) {
							c = unhex(b[i+1])<<4 | unhex(b[i+2])
							i += 2
						} else {
							c = 'x'
						}
					default:
						c = b[i]
					}
				}
				b[out] = c
				out++
				i++
			}
		case '\'':
			i++
			for {
				if i >= end {
					return protoErr("unbalanced quotes in request")
				}
				c := b[i]
				if c == '\'' {
					i++
					break
				}
				if c == '\\' && i+1 < end && b[i+1] == '\'' {
					i++
					c = '\''
				}
				b[out] = c
				out++
				i++
			}
		default:
			for i < end && !isSpace(b[i]) {
				i++
			}
			out = i
		}
		if i < end && !isSpace(b[i]) {
			return protoErr("unbalanced quotes in request") // closing quote must be followed by a space
		}
		rd.spans = append(rd.spans, span{off: int32(rd.base + start), end: int32(rd.base + out)}) // at most MaxInlineBytes/2 of them
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
