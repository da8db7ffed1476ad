package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/tiercache/tiercache/bench/internal/load"
)

// conn is one connection, used by one goroutine: requests are appended to
// out and written at once, replies read through r.
type conn struct {
	c   net.Conn
	mc  bool // memcached's text protocol, else RESP
	r   *bufio.Reader
	out []byte
	v   []byte // a value read
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReaderSize(c, 256<<10) }

func (c *conn) close() { c.c.Close() }

// appendKey appends the name of key i: load.Key's, without its allocation.
func appendKey(b []byte, prefix string, i int) []byte {
	b = append(b, prefix...)
	var d [20]byte
	s := strconv.AppendInt(d[:0], int64(i), 10)
	for n := len(s); n < 8; n++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// setBatch writes version 1 of every key of idx (val is the scratch value)
// in one round trip and marks the keys whose SET was acknowledged; an
// error reply is counted in errs.
func (c *conn) setBatch(prefix string, idx []int, val []byte, acked []bool, errs *errCount) error {
	c.out = c.out[:0]
	var kb [64]byte
	for _, i := range idx {
		load.Fill(val, i, 1)
		k := appendKey(kb[:0], prefix, i)
		if c.mc {
			c.out = append(c.out, "set "...)
			c.out = append(c.out, k...)
			c.out = append(c.out, " 0 0 "...)
			c.out = strconv.AppendInt(c.out, int64(len(val)), 10)
			c.out = append(c.out, "\r\n"...)
		} else {
			c.out = append(c.out, "*3\r\n$3\r\nSET\r\n$"...)
			c.out = strconv.AppendInt(c.out, int64(len(k)), 10)
			c.out = append(c.out, "\r\n"...)
			c.out = append(c.out, k...)
			c.out = append(c.out, "\r\n$"...)
			c.out = strconv.AppendInt(c.out, int64(len(val)), 10)
			c.out = append(c.out, "\r\n"...)
		}
		c.out = append(c.out, val...)
		c.out = append(c.out, "\r\n"...)
	}
	if err := c.write(); err != nil {
		return err
	}
	for _, i := range idx {
		line, err := c.line()
		if err != nil {
			return err
		}
		switch {
		case !c.mc && string(line) == "+OK", c.mc && string(line) == "STORED":
			acked[i] = true
		case !c.mc && len(line) > 0 && line[0] == '-', c.mc && (bytes.HasPrefix(line, []byte("SERVER_ERROR")) || bytes.HasPrefix(line, []byte("ERROR"))):
			errs.add(string(line))
		default:
			return fmt.Errorf("SET: unexpected reply %q", line)
		}
	}
	return nil
}

// getBatch reads every key of idx in one round trip (MGET, or a multi-key
// get) and calls check for each with its value and whether it was found.
func (c *conn) getBatch(prefix string, idx []int, check func(i int, v []byte, found bool)) error {
	c.out = c.out[:0]
	if c.mc {
		c.out = append(c.out, "get"...)
		for _, i := range idx {
			c.out = append(c.out, ' ')
			c.out = appendKey(c.out, prefix, i)
		}
		c.out = append(c.out, "\r\n"...)
	} else {
		c.out = append(c.out, '*')
		c.out = strconv.AppendInt(c.out, int64(len(idx)+1), 10)
		c.out = append(c.out, "\r\n$4\r\nMGET\r\n"...)
		var kb [64]byte
		for _, i := range idx {
			k := appendKey(kb[:0], prefix, i)
			c.out = append(c.out, '$')
			c.out = strconv.AppendInt(c.out, int64(len(k)), 10)
			c.out = append(c.out, "\r\n"...)
			c.out = append(c.out, k...)
			c.out = append(c.out, "\r\n"...)
		}
	}
	if err := c.write(); err != nil {
		return err
	}
	if c.mc {
		return c.mcValues(prefix, idx, check)
	}
	line, err := c.line()
	if err != nil {
		return err
	}
	if string(line) != "*"+strconv.Itoa(len(idx)) {
		return fmt.Errorf("MGET: reply %q", line)
	}
	for _, i := range idx {
		v, found, err := c.bulk()
		if err != nil {
			return err
		}
		check(i, v, found)
	}
	return nil
}

// mcValues reads a multi-key get's reply: a VALUE block per key found, in
// the order asked, then END.
func (c *conn) mcValues(prefix string, idx []int, check func(i int, v []byte, found bool)) error {
	var kb [64]byte
	j := 0
	for {
		line, err := c.line()
		if err != nil {
			return err
		}
		if string(line) == "END" {
			for ; j < len(idx); j++ {
				check(idx[j], nil, false)
			}
			return nil
		}
		// VALUE <key> <flags> <bytes>
		f := bytes.Fields(line)
		if len(f) != 4 || string(f[0]) != "VALUE" {
			return fmt.Errorf("get: reply %q", line)
		}
		for ; j < len(idx) && string(appendKey(kb[:0], prefix, idx[j])) != string(f[1]); j++ {
			check(idx[j], nil, false)
		}
		if j == len(idx) {
			return fmt.Errorf("get: value of a key not asked for: %q", line)
		}
		n, err := strconv.Atoi(string(f[3]))
		if err != nil || n < 0 {
			return fmt.Errorf("get: reply %q", line)
		}
		if err := c.value(n); err != nil {
			return err
		}
		check(idx[j], c.v, true)
		j++
	}
}

// bulk reads one RESP bulk string: nil and false for a null.
func (c *conn) bulk() ([]byte, bool, error) {
	line, err := c.line()
	if err != nil {
		return nil, false, err
	}
	if len(line) == 0 || line[0] != '$' {
		return nil, false, fmt.Errorf("MGET: element %q", line)
	}
	n, err := strconv.Atoi(string(line[1:]))
	if err != nil {
		return nil, false, fmt.Errorf("MGET: element %q", line)
	}
	if n < 0 {
		return nil, false, nil
	}
	if err := c.value(n); err != nil {
		return nil, false, err
	}
	return c.v, true, nil
}

// value reads n bytes and their CRLF into c.v.
func (c *conn) value(n int) error {
	if cap(c.v) < n+2 {
		c.v = make([]byte, n+2)
	}
	c.v = c.v[:n+2]
	if _, err := io.ReadFull(c.r, c.v); err != nil {
		return err
	}
	if string(c.v[n:]) != "\r\n" {
		return fmt.Errorf("a value of %d bytes not followed by CRLF", n)
	}
	c.v = c.v[:n]
	return nil
}

// line reads one reply line without its CRLF; it is valid until the next
// read.
func (c *conn) line() ([]byte, error) {
	b, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b[:len(b)-1], []byte("\r")), nil
}

func (c *conn) write() error {
	c.c.SetDeadline(time.Now().Add(60 * time.Second)) // the replies to this round trip too
	_, err := c.c.Write(c.out)
	return err
}
