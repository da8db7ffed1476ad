package resp

import "bytes"

// inline parses an inline command (a text line of space-separated words,
// with "double" and 'single' quotes) at p, as redis-server 7.0 does
// (networking.c processInlineBuffer, sds.c sdssplitargs). Quoted words are
// unescaped in place: the result is never longer than its source.
func (rd *Reader) inline() (done bool, err error) {
	seg := rd.buf[rd.p:rd.w]
	lim := rd.maxInline
	if len(seg) > lim+1 {
		seg = seg[:lim+1]
	}
	i := bytes.IndexByte(seg, '\n')
	if i < 0 {
		// redis-server refuses a line once more than
		// PROTO_INLINE_MAX_SIZE bytes wait without a newline (R11).
		if len(seg) > lim {
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
	// No limit of its own before AUTH: redis-server has none for an
	// inline command, whose words the line's length bounds (R10).
	if len(rd.spans) > rd.maxArgs {
		return false, protoErr("invalid multibulk length")
	}
	rd.n = len(rd.spans)
	return true, nil
}

// splitInline splits buf[i:end] into words as sdssplitargs does (R11):
// words are separated by white space (isspace's six bytes) but end only at
// a space, tab, CR or LF, so a vertical tab or a form feed inside a word is
// part of it; a quote anywhere in a word opens a quoted part of it
// (a'b'c is abc); a closing quote must be followed by white space or the
// end of the line. One difference: a NUL byte is a byte of its word here,
// where redis-server's C strings end at it.
func (rd *Reader) splitInline(i, end int) error {
	b := rd.buf
	for {
		for i < end && isSpace(b[i]) {
			i++
		}
		if i >= end {
			return nil
		}
		start := i
		out := i // write position for the unescaped word
	word:
		for i < end {
			switch b[i] {
			case ' ', '\t', '\r', '\n':
				break word
			case '"':
				var err error
				if i, out, err = unquoteDouble(b, i+1, end, out); err != nil {
					return err
				}
				break word // a closing quote ends its word
			case '\'':
				var err error
				if i, out, err = unquoteSingle(b, i+1, end, out); err != nil {
					return err
				}
				break word // a closing quote ends its word
			default:
				b[out] = b[i]
				out++
				i++
			}
		}
		rd.spans = append(rd.spans, span{off: int32(rd.base + start), end: int32(rd.base + out)}) // at most MaxInlineBytes/2 of them
	}
}

// closeQuote checks what follows a closing quote at i: white space or the
// end of the line, else the quotes are unbalanced.
func closeQuote(b []byte, i, end int) error {
	if i+1 < end && !isSpace(b[i+1]) {
		return protoErr("unbalanced quotes in request")
	}
	return nil
}

// unquoteDouble copies the "double quoted" part of a word that starts at i
// (past the opening quote) to out, unescaping \n, \r, \t, \b, \a, \xHH
// and \<any byte>. It returns the position past the closing quote and the
// new out.
func unquoteDouble(b []byte, i, end, out int) (int, int, error) {
	for {
		if i >= end {
			return 0, 0, protoErr("unbalanced quotes in request")
		}
		c := b[i]
		switch {
		case c == '\\' && i+3 < end && b[i+1] == 'x' && isHex(b[i+2]) && isHex(b[i+3]):
			c = unhex(b[i+2])<<4 | unhex(b[i+3])
			i += 3
		case c == '\\' && i+1 < end:
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
			default:
				c = b[i]
			}
		case c == '"':
			return i + 1, out, closeQuote(b, i, end)
		}
		b[out] = c
		out++
		i++
	}
}

// unquoteSingle copies the 'single quoted' part of a word that starts at i
// (past the opening quote) to out, where only \' is an escape.
func unquoteSingle(b []byte, i, end, out int) (int, int, error) {
	for {
		if i >= end {
			return 0, 0, protoErr("unbalanced quotes in request")
		}
		c := b[i]
		switch {
		case c == '\\' && i+1 < end && b[i+1] == '\'':
			i++
			c = '\''
		case c == '\'':
			return i + 1, out, closeQuote(b, i, end)
		}
		b[out] = c
		out++
		i++
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
