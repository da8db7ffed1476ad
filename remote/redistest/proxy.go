package redistest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy is a loopback address that forwards each new connection to its
// current target, as a DNS name or a cloud provider's primary endpoint
// moves to the new master after a failover: connections made before a
// Retarget keep their old server (RT3).
type Proxy struct {
	Addr string

	mu     sync.Mutex
	target string
}

// StartProxy listens on a free loopback port and forwards to target until
// the test ends.
func StartProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{Addr: l.Addr().String(), target: target}
	var mu sync.Mutex
	var conns []net.Conn
	tb.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.Target())
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			go pipe(in, out)
			go pipe(out, in)
		}
	}()
	return p
}

// pipe copies src to dst until either ends, then closes both.
func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// Target is where new connections go.
func (p *Proxy) Target() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.target
}

// Retarget sends new connections to addr (RT3).
func (p *Proxy) Retarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}
