package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tiercache/tiercache/cmd/tiercache/crashloop"
)

// socketActivate is systemd's tool that listens, waits for the first
// connection and execs a program with the sockets (LISTEN_FDS).
const socketActivate = "/usr/bin/systemd-socket-activate"

func needSocketActivate(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(socketActivate); err != nil {
		skipOrFail(t, "%s is missing (apt-get install systemd): %v", socketActivate, err)
	}
}

// activated starts systemd-socket-activate with saArgs, running this test
// binary as `tiercache serveArgs` (TestMain) once a client connects.
func activated(t *testing.T, saArgs []string, serveArgs string) *serveProc {
	t.Helper()
	args := append(append([]string{}, saArgs...), "-E", serveEnv+"="+serveArgs, "--", os.Args[0])
	return spawn(t, exec.Command(socketActivate, args...))
}

// waitPath waits until systemd-socket-activate made its socket file.
func waitPath(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Lstat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
	}
}

// dialUntil dials until the address accepts (systemd-socket-activate binds
// it a moment after it starts); the connection is what starts the child.
func dialUntil(t *testing.T, network, addr string) net.Conn {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := net.Dial(network, addr)
		if err == nil {
			t.Cleanup(func() { c.Close() })
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("dial %s %s: %v", network, addr, err)
		}
	}
}

// readyOnPassedSocket waits until the sidecar p answers ready on the Unix
// socket sock that systemd-socket-activate passes it, and returns a
// client of that socket (closed at cleanup).
func readyOnPassedSocket(t *testing.T, p *serveProc, sock string) *redis.Client {
	t.Helper()
	waitPath(t, sock)
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, MaxRetries: -1})
	t.Cleanup(func() { rc.Close() })
	for deadline := time.Now().Add(30 * time.Second); crashloop.Ready(context.Background(), rc) != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not ready on the passed socket:\n%s", p.output())
		}
	}
	return rc
}

// freeTCPAddr is a loopback address nothing listens on now.
func freeTCPAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestSocketActivationServes (C12): under systemd-socket-activate with a
// Unix socket and a TCP socket named tcp, the sidecar serves both (TCP
// clients AUTH first), opens no socket of its own at server.socket,
// reports the passed path in CONFIG GET unixsocket, exits 0 on SIGTERM,
// and leaves the passed socket file to its owner.
func TestSocketActivationServes(t *testing.T) {
	needSocketActivate(t)
	sock, unused, tcp := shortSocket(t), shortSocket(t), freeTCPAddr(t)
	p := activated(t, []string{"-l", sock, "-l", tcp, "--fdname=tiercache.socket:tcp"},
		"serve -socket "+unused+" -metrics off -log-level warn -requirepass pw -data "+t.TempDir())
	ctx := context.Background()
	rc := readyOnPassedSocket(t, p, sock)
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := rc.ConfigGet(ctx, "unixsocket").Result(); err != nil || got["unixsocket"] != sock {
		t.Errorf("CONFIG GET unixsocket: %v %v, want %s", got, err, sock)
	}
	tc := redis.NewClient(&redis.Options{Addr: tcp, MaxRetries: -1})
	defer tc.Close()
	if err := tc.Get(ctx, "k").Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("GET over the passed TCP socket without AUTH: %v, want NOAUTH", err)
	}
	ta := redis.NewClient(&redis.Options{Addr: tcp, Password: "pw", MaxRetries: -1})
	defer ta.Close()
	if v, err := ta.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Errorf("GET over the passed TCP socket after AUTH: %q %v", v, err)
	}
	if _, err := os.Lstat(unused); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("server.socket %s was created beside the passed socket (%v)", unused, err)
	}
	if !strings.Contains(p.output(), "(passed by the service manager)") {
		t.Errorf("the start line does not say the socket was passed:\n%s", p.output())
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.exitOf(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
	t.Logf("output:\n%s", p.output())
	if fi, err := os.Lstat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("the passed socket file is gone after the exit (%v): it belongs to the service manager", err)
	}
}

// TestSocketActivationRefusesBadSockets (C12): each wrong socket or
// environment makes the sidecar exit 1 at once with an error
// naming it, never hang.
func TestSocketActivationRefusesBadSockets(t *testing.T) {
	needSocketActivate(t)
	serve := func(t *testing.T, extra string) string {
		return "serve -metrics off -log-level warn -data " + t.TempDir() + " " + extra
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T) *serveProc
		want []string
	}{
		{"udp", func(t *testing.T) *serveProc {
			addr := freeTCPAddr(t)
			p := activated(t, []string{"--datagram", "-l", addr, "--fdname=tcp"}, serve(t, "-requirepass pw"))
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				c, err := net.Dial("udp", addr) // a datagram starts the child
				if err == nil {
					c.Write([]byte("x"))
					c.Close()
				}
				select {
				case err := <-p.done:
					p.done <- err
					return p
				default:
				}
			}
			return p
		}, []string{"fd 3 (named \"tcp\"): is an IPv4 datagram (SOCK_DGRAM) socket, not a stream socket"}},
		{"seqpacket", func(t *testing.T) *serveProc {
			sock := shortSocket(t)
			p := activated(t, []string{"--seqpacket", "-l", sock}, serve(t, ""))
			waitPath(t, sock)
			dialUntil(t, "unixpacket", sock)
			return p
		}, []string{"fd 3: is a Unix SOCK_SEQPACKET socket, not a stream socket"}},
		{"tcp not named tcp", func(t *testing.T) *serveProc {
			addr := freeTCPAddr(t)
			p := activated(t, []string{"-l", addr}, serve(t, "-requirepass pw"))
			dialUntil(t, "tcp", addr)
			return p
		}, []string{"is a TCP socket: name it tcp (FileDescriptorName=tcp"}},
		{"tcp without requirepass", func(t *testing.T) *serveProc {
			addr := freeTCPAddr(t)
			p := activated(t, []string{"-l", addr, "--fdname=tcp"}, serve(t, ""))
			dialUntil(t, "tcp", addr)
			return p
		}, []string{"needs server.requirepass"}},
		{"regular file", func(t *testing.T) *serveProc {
			f, err := os.CreateTemp(t.TempDir(), "not-a-socket")
			if err != nil {
				t.Fatal(err)
			}
			return execWithListenPID(t, serve(t, ""), []string{"LISTEN_FDS=1"}, f)
		}, []string{"fd 3: is a regular file, not a socket"}},
		{"malformed LISTEN_FDS", func(t *testing.T) *serveProc {
			return execWithListenPID(t, serve(t, ""), []string{"LISTEN_FDS=3x"})
		}, []string{`LISTEN_FDS="3x" is not a positive number of descriptors`}},
		{"LISTEN_PID of another process", func(t *testing.T) *serveProc {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), serveEnv+"="+serve(t, ""), "LISTEN_PID=1", "LISTEN_FDS=1")
			return spawn(t, cmd)
		}, []string{"LISTEN_PID=1 is not this process"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.run(t)
			code := p.exitOf(t)
			out := p.output()
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			t.Logf("exit %d: %s", code, strings.TrimSpace(out))
		})
	}
}

// execWithListenPID runs this test binary as `tiercache serveArgs` with
// LISTEN_PID set to its own pid (sh execs it, keeping $$), env added and
// files passed from fd 3 on.
func execWithListenPID(t *testing.T, serveArgs string, env []string, files ...*os.File) *serveProc {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `LISTEN_PID=$$; export LISTEN_PID; exec "$0"`, os.Args[0])
	cmd.Env = append(append(os.Environ(), serveEnv+"="+serveArgs), env...)
	cmd.ExtraFiles = files
	return spawn(t, cmd)
}

// TestSocketActivationCluster (C12, C20): with server.cluster emulated
// and no server.tcp, the TCP socket systemd passes (named tcp) is the
// TCP listener cluster mode needs: the sidecar starts, and a go-redis
// ClusterClient seeded with that address is told it in CLUSTER SLOTS and
// works through it.
func TestSocketActivationCluster(t *testing.T) {
	needSocketActivate(t)
	sock, tcp := shortSocket(t), freeTCPAddr(t)
	p := activated(t, []string{"-l", sock, "-l", tcp, "--fdname=tiercache.socket:tcp", "-E", "TIERCACHE_SERVER_CLUSTER=emulated"},
		"serve -metrics off -log-level warn -requirepass pw -data "+t.TempDir())
	ctx := context.Background()
	readyOnPassedSocket(t, p, sock)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{tcp}, Password: "pw", MaxRedirects: 1})
	defer cc.Close()
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil || len(slots) != 1 || slots[0].Nodes[0].Addr != tcp {
		t.Fatalf("CLUSTER SLOTS over the passed TCP socket: %+v, %v; want one node at %s", slots, err, tcp)
	}
	if err := cc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("ClusterClient SET: %v", err)
	}
	if v, err := cc.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Errorf("ClusterClient GET: %q %v", v, err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.exitOf(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}
