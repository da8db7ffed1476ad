package redistest

import (
	"net"
	"testing"
)

// Silent listens on a loopback port, accepts every connection and never
// answers (a server that hangs), until the test ends; it returns the
// address.
func Silent(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // hold it, read nothing
		}
	}()
	return l.Addr().String()
}
