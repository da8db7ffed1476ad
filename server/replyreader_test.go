package server

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// testReplyReader decodes replies into a compact text form for asserting:
// simple "+OK", error "-ERR ...", int ":1", bulk "$hello", null "nil",
// arrays/maps/sets "[a b]" with elements rendered recursively.
type testReplyReader struct{ br *bufio.Reader }

func newTestReplyReader(r io.Reader) *testReplyReader {
	return &testReplyReader{br: bufio.NewReaderSize(r, 1<<16)}
}

func (r *testReplyReader) line() (string, error) {
	s, err := r.br.ReadString('\n')
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(s, "\r\n") {
		return "", fmt.Errorf("line without CRLF: %q", s)
	}
	return s[:len(s)-2], nil
}

func (r *testReplyReader) read() (string, error) {
	l, err := r.line()
	if err != nil {
		return "", err
	}
	if l == "" {
		return "", fmt.Errorf("empty reply line")
	}
	switch l[0] {
	case '+', '-', ':', ',', '#', '(': // RESP3's double, boolean and big number are one line too
		return l, nil
	case '_':
		return "nil", nil
	case '$', '=':
		n, err := strconv.Atoi(l[1:])
		if err != nil {
			return "", err
		}
		if n < 0 {
			return "nil", nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r.br, b); err != nil {
			return "", err
		}
		return "$" + string(b[:n]), nil
	case '*', '%', '~':
		n, err := strconv.Atoi(l[1:])
		if err != nil {
			return "", err
		}
		if n < 0 {
			return "nil", nil
		}
		if l[0] == '%' {
			n *= 2
		}
		parts := make([]string, n)
		for i := range parts {
			if parts[i], err = r.read(); err != nil {
				return "", err
			}
		}
		return string(l[0]) + "[" + strings.Join(parts, " ") + "]", nil
	}
	return "", fmt.Errorf("unknown reply type %q", l)
}
