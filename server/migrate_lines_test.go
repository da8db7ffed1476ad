package server

import (
	"net"
	"strconv"
	"sync"
	"testing"
)

// cannedTarget listens on loopback and answers each connection's first
// read with reply, then reads on without answering; it returns the port.
func cannedTarget(t *testing.T, reply string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				buf := make([]byte, 4096)
				if _, err := c.Read(buf); err != nil {
					return
				}
				if reply != "" {
					c.Write([]byte(reply))
				}
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			})
		}
	})
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// TestMigrateReplyLinesAsRedis checks S93's reading of the target's
// replies as Redis's syncReadLine reads them: an empty line ("\r\n")
// acknowledges a RESTORE, a lone "\n" is a failed read. Each server
// migrates to a target of its own answering the same bytes; the replies
// and the keys left match redis-server 7.0's.
func TestMigrateReplyLinesAsRedis(t *testing.T) {
	for _, tc := range []struct{ name, reply string }{
		{"crlf-acks", "+OK\r\n\r\n+OK\r\n"}, // SELECT, then the two RESTOREs
		{"lf-fails", "+OK\r\n\n+OK\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPeers(t, 1, 2, nil)
			for _, k := range []string{"g1", "g2"} {
				p.same(0, "SET", k, "v")
			}
			ours, peer := cannedTarget(t, tc.reply), cannedTarget(t, tc.reply)
			args := func(port string) []string {
				return []string{"MIGRATE", "127.0.0.1", port, "", "0", "1000", "KEYS", "g1", "g2"}
			}
			if a, b := p.ours[0].do(args(ours)...), p.peer[0].do(args(peer)...); a != b {
				t.Errorf("MIGRATE:\n tiercache    %q\n redis-server %q", a, b)
			}
			p.same(0, "EXISTS", "g1", "g2")
		})
	}
}
