package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawPeer is a connection whose replies are read as their exact bytes,
// for comparing with redis-server byte for byte (RESP2 and RESP3, pushes
// included).
type rawPeer struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dialPeer(t testing.TB, path string) *rawPeer {
	t.Helper()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawPeer{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (p *rawPeer) send(args ...string) {
	p.t.Helper()
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	if _, err := p.nc.Write(b); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// read returns the next reply's bytes, or "" after timeout.
func (p *rawPeer) read(timeout time.Duration) string {
	p.t.Helper()
	p.nc.SetReadDeadline(time.Now().Add(timeout))
	defer p.nc.SetReadDeadline(time.Time{})
	var out []byte
	if err := readRaw(p.br, &out); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() && len(out) == 0 {
			return ""
		}
		p.t.Fatalf("read reply: %v (have %q)", err, out)
	}
	return string(out)
}

// do sends a command and reads its reply.
func (p *rawPeer) do(args ...string) string {
	p.t.Helper()
	p.send(args...)
	return p.read(10 * time.Second)
}

func readRaw(br *bufio.Reader, out *[]byte) error {
	line, err := br.ReadString('\n')
	*out = append(*out, line...)
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("short line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '$', '=', '!':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(br, b); err != nil {
			return err
		}
		*out = append(*out, b...)
	case '*', '~', '>':
		n, _ := strconv.Atoi(body)
		for i := 0; i < n; i++ {
			if err := readRaw(br, out); err != nil {
				return err
			}
		}
	case '%':
		n, _ := strconv.Atoi(body)
		for i := 0; i < 2*n; i++ {
			if err := readRaw(br, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// peers is a pair of sessions, one to tiercache and one to redis-server,
// each of several connections.
type peers struct {
	t          *testing.T
	ours, peer []*rawPeer
}

// newPeers starts a tiercache server (mod changes its options) and a
// redis-server, and opens n connections to each, in protocol proto.
func newPeers(t *testing.T, n, proto int, mod func(*Options), redisArgs ...string) *peers {
	t.Helper()
	rpath := startRedis(t, redisArgs...)
	_, opath := startServerWith(t, newTierCache(t), mod)
	p := &peers{t: t}
	for i := 0; i < n; i++ {
		o, r := dialPeer(t, opath), dialPeer(t, rpath)
		if proto == 3 {
			o.do("HELLO", "3")
			r.do("HELLO", "3")
		}
		p.ours = append(p.ours, o)
		p.peer = append(p.peer, r)
	}
	return p
}

// same sends args on connection i of both and fails if the replies
// differ; it returns tiercache's.
func (p *peers) same(i int, args ...string) string {
	p.t.Helper()
	a, b := p.ours[i].do(args...), p.peer[i].do(args...)
	if a != b {
		p.t.Errorf("conn %d %q:\n tiercache    %q\n redis-server %q", i, args, a, b)
	}
	return a
}

// sameRead reads the next reply (or push) on connection i of both and
// fails if they differ ("" for none within timeout).
func (p *peers) sameRead(i int, timeout time.Duration, what string) string {
	p.t.Helper()
	// redis-server's first: when it answered, tiercache is given 10 s for
	// the same reply (the race detector slows only tiercache), so a late
	// push is not read as a missing one.
	b := p.peer[i].read(timeout)
	wait := timeout
	if b != "" {
		wait = max(timeout, 10*time.Second)
	}
	a := p.ours[i].read(wait)
	if a != b {
		p.t.Errorf("conn %d %s:\n tiercache    %q\n redis-server %q", i, what, a, b)
	}
	return a
}

// waitBlocked waits until n clients are blocked on both servers, asking
// on connection i (INFO clients' blocked_clients).
func (p *peers) waitBlocked(i, n int) {
	p.t.Helper()
	want := "blocked_clients:" + strconv.Itoa(n) + "\r\n"
	deadline := time.Now().Add(20 * time.Second)
	for side, c := range []*rawPeer{p.ours[i], p.peer[i]} {
		for info := ""; !strings.Contains(info, want); info = c.do("INFO", "clients") {
			if time.Now().After(deadline) {
				p.t.Fatalf("not %d blocked clients after 20s on %s: %q", n, []string{"tiercache", "redis-server"}[side], info)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// eachProto runs f on new peers of n connections, in RESP2 and in RESP3.
func eachProto(t *testing.T, n int, f func(t *testing.T, p *peers, proto int)) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) { f(t, newPeers(t, n, proto, nil), proto) })
	}
}

// blockThenPush sends block on connection i of both, waits until it
// blocks on both (no other client blocked), runs push on connection 0
// and compares the replies of block.
func (p *peers) blockThenPush(i int, block []string, push ...[]string) {
	p.t.Helper()
	p.ours[i].send(block...)
	p.peer[i].send(block...)
	p.waitBlocked(0, 1)
	for _, c := range push {
		p.same(0, c...)
	}
	p.sameRead(i, 5*time.Second, "the reply of "+strings.Join(block, " "))
}

// events reads, on connection i of both (subscribed), the messages that
// came before a PING's answer, failing where they differ: what was
// published before the PING, with no wait for what may not come.
func (p *peers) events(i int, what string) {
	p.t.Helper()
	p.ours[i].send("PING")
	p.peer[i].send("PING")
	for {
		a, b := p.ours[i].read(5*time.Second), p.peer[i].read(5*time.Second)
		if a != b {
			p.t.Errorf("conn %d %s:\n tiercache    %q\n redis-server %q", i, what, a, b)
		}
		if isPong(a) || isPong(b) || a == "" || b == "" {
			return
		}
	}
}

// isPong reports whether r is PING's answer on a subscribed connection.
func isPong(r string) bool { return r == "+PONG\r\n" || r == "*2\r\n$4\r\npong\r\n$0\r\n\r\n" }

// awaitReply waits until c answers args with want (a write on another
// sidecar reaching c through the remote tier), failing after 5 s.
func awaitReply(t *testing.T, c *rawPeer, want string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.do(args...) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%q never answered %q (last %q)", args, want, c.do(args...))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
