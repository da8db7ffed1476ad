package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/tier"
)

func TestCommandReplies(t *testing.T) {
	_, path := startServer(t, nil)
	c := dialRaw(t, path)
	steps := []step{
		{[]string{"PING"}, "+PONG"},
		{[]string{"ping", "hi"}, "$hi"},
		{[]string{"ECHO", "a\r\nb"}, "$a\r\nb"},
		{[]string{"SET", "k", "v"}, "+OK"},
		{[]string{"GET", "k"}, "$v"},
		{[]string{"GET", "missing"}, "nil"},
		{[]string{"SET", "k", "v2", "NX"}, "nil"},
		{[]string{"SET", "k", "v2", "XX", "GET"}, "$v"},
		{[]string{"SET", "new", "x", "XX"}, "nil"},
		{[]string{"SET", "k", "v", "EX", "0"}, "-ERR invalid expire time in 'set' command"},
		{[]string{"SET", "k", "v", "EX", "ten"}, "-ERR value is not an integer or out of range"},
		{[]string{"SET", "k", "v", "NX", "XX"}, "-ERR syntax error"},
		{[]string{"SET", "k", "v", "EX", "10", "PX", "5"}, "-ERR syntax error"},
		{[]string{"SET", "k", "v", "EX", "100"}, "+OK"},
		{[]string{"TTL", "k"}, ":100"},
		{[]string{"SET", "k", "v3", "KEEPTTL"}, "+OK"},
		{[]string{"TTL", "k"}, ":100"},
		{[]string{"PERSIST", "k"}, ":1"},
		{[]string{"TTL", "k"}, ":-1"},
		{[]string{"TTL", "nope"}, ":-2"},
		{[]string{"PEXPIRE", "k", "5000"}, ":1"},
		{[]string{"PTTL", "k"}, ":5000"},
		{[]string{"EXPIRE", "k", "50", "GT"}, ":1"},
		{[]string{"EXPIRE", "k", "10", "GT"}, ":0"},
		{[]string{"EXPIRE", "nope", "10"}, ":0"},
		{[]string{"EXPIRE", "k", "60", "NX"}, ":0"},
		{[]string{"EXPIRE", "k", "0", "GT"}, ":0"},
		{[]string{"EXPIRE", "k", "60", "LT"}, ":0"},
		{[]string{"EXPIRE", "k", "40", "LT"}, ":1"},
		{[]string{"TTL", "k"}, ":40"},
		{[]string{"EXPIRE", "k", "60", "NX", "XX"}, "-ERR NX and XX, GT or LT options at the same time are not compatible"},
		{[]string{"EXPIRE", "k", "60", "GT", "LT"}, "-ERR GT and LT options at the same time are not compatible"},
		{[]string{"EXPIRE", "k", "60", "ZZ"}, "-ERR Unsupported option ZZ"},
		{[]string{"SET", "pk", "v"}, "+OK"},
		{[]string{"EXPIRE", "pk", "60", "XX"}, ":0"},
		{[]string{"EXPIRE", "pk", "60", "GT"}, ":0"},
		{[]string{"EXPIRE", "pk", "60", "LT"}, ":1"},
		{[]string{"EXPIRE", "pk", "70", "NX"}, ":0"},
		{[]string{"TTL", "pk"}, ":60"},
		{[]string{"EXPIRE", "pk", "0", "XX"}, ":1"},
		{[]string{"EXISTS", "pk"}, ":0"},
		{[]string{"SET", "gone", "x", "PXAT", "1000"}, "+OK"},
		{[]string{"EXISTS", "gone"}, ":0"},
		{[]string{"MSET", "a", "1", "b", "2"}, "+OK"},
		{[]string{"MSET", "a", "1", "b"}, "-ERR wrong number of arguments for 'mset' command"},
		{[]string{"MGET", "a", "nope", "b"}, "*[$1 nil $2]"},
		{[]string{"EXISTS", "a", "b", "a", "nope"}, ":3"},
		{[]string{"DBSIZE"}, ":3"},
		{[]string{"TIER", "a"}, "$hot"},
		{[]string{"TIER", "nope"}, "nil"},
		{[]string{"DEL", "a", "nope"}, ":1"},
		{[]string{"UNLINK", "b"}, ":1"},
		{[]string{"SET", "neg", "x"}, "+OK"},
		{[]string{"EXPIRE", "neg", "-9223372036854775"}, ":1"},
		{[]string{"EXISTS", "neg"}, ":0"},
		{[]string{"EXPIRE", "k", "9223372036854775807"}, "-ERR invalid expire time in 'expire' command"},
		{[]string{"EXPIRE", "k", "-1"}, ":1"},
		{[]string{"DBSIZE"}, ":0"},
		{[]string{"SET", "x", "y"}, "+OK"},
		{[]string{"FLUSHALL"}, "+OK"},
		{[]string{"FLUSHDB", "ASYNC"}, "+OK"},
		{[]string{"DBSIZE"}, ":0"},
		{[]string{"SETEX", "sx", "100", "v"}, "+OK"},
		{[]string{"TTL", "sx"}, ":100"},
		{[]string{"PSETEX", "sx", "0", "v"}, "-ERR invalid expire time in 'psetex' command"},
		{[]string{"SETNX", "sx", "w"}, ":0"},
		{[]string{"SETNX", "sy", "w"}, ":1"},
		{[]string{"STRLEN", "sx"}, ":1"},
		{[]string{"STRLEN", "nope"}, ":0"},
		{[]string{"TYPE", "sx"}, "+string"},
		{[]string{"TYPE", "nope"}, "+none"},
		{[]string{"TOUCH", "sx", "sy", "nope"}, ":2"},
		{[]string{"EXPIREAT", "sx", "4000000000"}, ":1"},
		{[]string{"EXPIREAT", "sx", "99999999999"}, ":1"}, // year 5138: Redis 7.0 takes it (only an overflowing time is refused)
		{[]string{"PEXPIREAT", "sx", "1"}, ":1"},
		{[]string{"EXISTS", "sx"}, ":0"},
		{[]string{"DEL", "sy"}, ":1"},
		{[]string{"SET", "sg", "v", "GET"}, "nil"},
		{[]string{"SET", "sg", "w", "NX", "GET"}, "$v"},
		{[]string{"GET", "sg"}, "$v"},
		{[]string{"SET", "sg", "w", "GET", "EX", "100"}, "$v"},
		{[]string{"TTL", "sg"}, ":100"},
		{[]string{"SET", "sg", "x", "GET", "PXAT", "1"}, "$w"},
		{[]string{"EXISTS", "sg"}, ":0"},
		{[]string{"SET", "gd", "v"}, "+OK"},
		{[]string{"GETDEL", "gd"}, "$v"},
		{[]string{"GETDEL", "gd"}, "nil"},
		{[]string{"EXISTS", "gd"}, ":0"},
		{[]string{"GETDEL", "a", "b"}, "-ERR wrong number of arguments for 'getdel' command"},
		{[]string{"SET", "gx", "v"}, "+OK"},
		{[]string{"GETEX", "gx"}, "$v"},
		{[]string{"TTL", "gx"}, ":-1"},
		{[]string{"GETEX", "gx", "EX", "100"}, "$v"},
		{[]string{"TTL", "gx"}, ":100"},
		{[]string{"GETEX", "gx", "px", "5000"}, "$v"},
		{[]string{"PTTL", "gx"}, ":5000"},
		{[]string{"GETEX", "gx", "PERSIST"}, "$v"},
		{[]string{"TTL", "gx"}, ":-1"},
		{[]string{"GETEX", "gx", "EXAT", "4000000000"}, "$v"},
		{[]string{"GETEX", "gx", "EX", "0"}, "-ERR invalid expire time in 'getex' command"},
		{[]string{"GETEX", "gx", "EX", "x"}, "-ERR value is not an integer or out of range"},
		{[]string{"GETEX", "gx", "EX"}, "-ERR syntax error"},
		{[]string{"GETEX", "gx", "EX", "10", "PERSIST"}, "-ERR syntax error"},
		{[]string{"GETEX", "gx", "PERSIST", "PERSIST"}, "$v"}, // a repeat is allowed, as Redis 7.0
		{[]string{"GETEX", "gx", "KEEPTTL"}, "-ERR syntax error"},
		{[]string{"GETEX", "nope", "EX", "10"}, "nil"},
		{[]string{"GETEX", "gx", "PXAT", "1"}, "$v"},
		{[]string{"EXISTS", "gx"}, ":0"},
		{[]string{"SELECT", "0"}, "+OK"},
		{[]string{"SELECT", "1"}, "-ERR DB index is out of range"},
		{[]string{"CLIENT", "SETNAME", "me"}, "+OK"},
		{[]string{"CLIENT", "GETNAME"}, "$me"},
		{[]string{"CLIENT", "SETNAME", "a b"}, "-ERR Client names cannot contain spaces, newlines or special characters."},
		{[]string{"CLIENT", "SETINFO", "LIB-NAME", "test"}, "+OK"},
		{[]string{"CLIENT", "NOPE"}, "-ERR unknown subcommand 'NOPE'. Try CLIENT HELP."},
		{[]string{"COMMAND", "DOCS"}, "*[]"},
		{[]string{"COMMAND", "INFO", "get"}, "*[*[$get :2 *[+readonly +fast] :1 :1 :1 *[] *[] *[] *[]]]"},
		{[]string{"CONFIG", "GET", "save"}, "*[$save $]"},
		{[]string{"AUTH", "x"}, "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"},
		{[]string{"NOSUCH", "a", "b"}, "-ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b' "},
		{[]string{"GET"}, "-ERR wrong number of arguments for 'get' command"},
		{[]string{"GET", "a", "b"}, "-ERR wrong number of arguments for 'get' command"},
		{[]string{"PING", "a", "b"}, "-ERR wrong number of arguments for 'ping' command"},
		{[]string{"HELLO", "4"}, "-NOPROTO unsupported protocol version"},
		{[]string{"PING"}, "+PONG"},
	}
	c.expect(steps)
	c.cmd("CLIENT", "ID")
	if got := c.reply(); !strings.HasPrefix(got, ":") {
		t.Errorf("CLIENT ID: %q", got)
	}
	c.cmd("COMMAND", "COUNT")
	if got, want := c.reply(), fmt.Sprintf(":%d", len(CommandNames())); got != want {
		t.Errorf("COMMAND COUNT: %q, want %q", got, want)
	}
	c.cmd("COMMAND", "COUNT", "x")
	if got, want := c.reply(), "-ERR wrong number of arguments for 'command|count' command"; got != want {
		t.Errorf("COMMAND COUNT x: %q, want %q", got, want)
	}
	c.cmd("INFO", "cluster")
	if got := c.reply(); !strings.Contains(got, "# Cluster\r\ncluster_enabled:0\r\n") {
		t.Errorf("INFO cluster: %q, want a Cluster section with cluster_enabled:0", got)
	}
	c.cmd("INFO")
	info := c.reply()
	for _, want := range []string{"# Server", "# Clients", "# Memory", "# Stats", "# Keyspace", "# Tiers",
		"tier_hot_items:", "flusher_drops:", "warm_numa_node:", "cold_backend:", "cold_free_bytes:",
		"cold_stalled_io:", "cold_oldest_io_ms:", "cold_errors:", "flusher_errors:", "lost:", "cold_writable:0\r\n", "cold_write_error:\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO lacks %q", want)
		}
	}
	c.cmd("INFO", "tiers")
	if got := c.reply(); strings.Contains(got, "# Server") || !strings.Contains(got, "# Tiers") {
		t.Errorf("INFO tiers: %q", got)
	}
	c.cmd("QUIT")
	if got := c.reply(); got != "+OK" {
		t.Errorf("QUIT: %q", got)
	}
	c.expectClosed()
}

func TestHello3(t *testing.T) {
	_, path := startServer(t, nil)
	c := dialRaw(t, path)
	c.cmd("HELLO", "3", "SETNAME", "r3")
	got := c.reply()
	if !strings.HasPrefix(got, "%[$server $tiercache $version ") || !strings.Contains(got, "$proto :3") {
		t.Fatalf("HELLO 3: %q", got)
	}
	c.cmd("GET", "nope")
	if got := c.reply(); got != "nil" {
		t.Fatalf("RESP3 null: %q", got)
	}
	c.cmd("CONFIG", "GET", "appendonly")
	if got := c.reply(); got != "%[$appendonly $no]" {
		t.Fatalf("RESP3 map: %q", got)
	}
	c.cmd("CLIENT", "GETNAME")
	if got := c.reply(); got != "$r3" {
		t.Fatalf("name: %q", got)
	}
	c.cmd("HELLO", "2")
	c.reply()
	c.cmd("GET", "nope")
	if got := c.reply(); got != "nil" {
		t.Fatalf("RESP2 null: %q", got)
	}
}

func TestInlineCommands(t *testing.T) {
	_, path := startServer(t, nil)
	c := dialRaw(t, path)
	c.send("SET \"a key\" 'v 1'\r\nGET \"a key\"\r\n\r\nPING\n")
	for _, want := range []string{"+OK", "$v 1", "+PONG"} {
		if got := c.reply(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

// TestProtocolErrors: malformed input is answered with an error, then the
// connection is closed; the server keeps serving others.
func TestProtocolErrors(t *testing.T) {
	_, path := startServer(t, func(o *Options) { o.MaxBulkBytes = 1 << 20; o.MaxArgs = 100; o.MaxInlineBytes = 1024 })
	cases := []struct{ in, want string }{
		{"*1\r\n$-2\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*1\r\n$2000000\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*1\r\n$99999999999999999999\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*1\r\n$x\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*101\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"*abc\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"*1\r\n+PING\r\n", "-ERR Protocol error: expected '$', got '+'"},
		{"*2\r\n$3\r\nGET\r\n$1\r\nab\r\n", "-ERR Protocol error: bulk string is not terminated by CRLF"},
		{strings.Repeat("x", 2000), "-ERR Protocol error: too big inline request"},
		{"SET \"unbalanced\r\n", "-ERR Protocol error: unbalanced quotes in request"},
	}
	for _, tc := range cases {
		c := dialRaw(t, path)
		c.cmd("PING")
		c.reply()
		c.send(tc.in)
		if got := c.reply(); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
		c.expectClosed()
	}
	// A truncated frame followed by EOF just ends the connection.
	c := dialRaw(t, path)
	c.send("*2\r\n$3\r\nGET\r\n$5\r\nab")
	c.nc.(*net.UnixConn).CloseWrite()
	c.expectClosed()

	c = dialRaw(t, path)
	c.cmd("PING")
	if got := c.reply(); got != "+PONG" {
		t.Fatalf("server after protocol errors: %q", got)
	}
}

func TestMaxConnections(t *testing.T) {
	s, path := startServer(t, func(o *Options) { o.MaxConns = 2 })
	a, b := dialRaw(t, path), dialRaw(t, path)
	a.cmd("PING")
	b.cmd("PING")
	a.reply()
	b.reply()
	c := dialRaw(t, path)
	if got := c.reply(); got != "-ERR max number of clients reached" {
		t.Fatalf("third connection: %q", got)
	}
	c.expectClosed()
	if s.Stats().RejectedConns != 1 {
		t.Fatalf("rejected = %d", s.Stats().RejectedConns)
	}
	a.nc.Close()
	// The slot frees once the server notices the close.
	for i := 0; ; i++ {
		d := dialRaw(t, path)
		// While the server still counts a, it answers "max number of
		// clients" and closes, possibly before the PING is written: a
		// failed write or read is one more try, not a failure.
		_, werr := d.nc.Write([]byte("*1\r\n$4\r\nPING\r\n"))
		got, rerr := d.rd.read()
		d.nc.Close()
		if werr == nil && rerr == nil && got == "+PONG" {
			break
		}
		if i > 200 {
			t.Fatal("slot never freed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConcurrentConnections(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 200
	}
	_, path := startServer(t, nil)
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = dialRaw(t, path)
	}
	var wg sync.WaitGroup
	var bad atomic.Int64
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := fmt.Sprintf("k%d", i)
			if _, err := c.nc.Write([]byte(fmt.Sprintf("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n",
				len(k), k, len(k), k, len(k), k))); err != nil {
				bad.Add(1)
				return
			}
			r1, err1 := c.rd.read()
			r2, err2 := c.rd.read()
			if err1 != nil || err2 != nil || r1 != "+OK" || r2 != "$"+k {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d of %d connections failed", bad.Load(), n)
	}
}

// TestPipelineOneFlush: a batch of requests that arrives together is
// answered with one write.
func TestPipelineOneFlush(t *testing.T) {
	s, err := New(newTierCache(t), Options{UnixSocket: "unused"})
	if err != nil {
		t.Fatal(err)
	}
	path := shortSocket(t)
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: l}
	go s.Serve(cl, false)
	t.Cleanup(func() { s.Close() })
	c := dialRaw(t, path)
	var batch strings.Builder
	for i := 0; i < 100; i++ {
		batch.WriteString("*1\r\n$4\r\nPING\r\n")
	}
	c.send(batch.String())
	for i := 0; i < 100; i++ {
		if got := c.reply(); got != "+PONG" {
			t.Fatalf("reply %d: %q", i, got)
		}
	}
	if w := cl.writes.Load(); w != 1 {
		t.Fatalf("100 pipelined PINGs were answered in %d writes, want 1", w)
	}
}

type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &l.writes}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(b)
}

func TestTCPRequiresAuth(t *testing.T) {
	s, _ := startServer(t, func(o *Options) { o.TCPAddr = "127.0.0.1:0"; o.RequirePass = "s3cret" })
	addr := tcpAddr(s)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &rawConn{t: t, nc: nc, rd: newTestReplyReader(nc)}
	c.expect([]step{
		{[]string{"GET", "k"}, "-NOAUTH Authentication required."},
		{[]string{"HELLO", "3"}, "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"},
		{[]string{"AUTH", "wrong"}, "-WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"AUTH", "default", "s3cret"}, "+OK"},
		{[]string{"SET", "k", "v"}, "+OK"},
		{[]string{"GET", "k"}, "$v"},
	})
	// Before AUTH a big bulk is refused at its header.
	nc2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	c2 := &rawConn{t: t, nc: nc2, rd: newTestReplyReader(nc2)}
	c2.send("*2\r\n$4\r\nAUTH\r\n$100000\r\n")
	if got := c2.reply(); got != "-ERR Protocol error: unauthenticated bulk length" {
		t.Fatalf("pre-auth big bulk: %q", got)
	}
}

func TestOptionsValidateListsEveryProblem(t *testing.T) {
	o := Options{UnixSocket: "/" + strings.Repeat("a", 200), TCPAddr: "127.0.0.1:1", MaxConns: -1, MaxArgs: -2}
	o.EnsureDefaults()
	err := o.Validate()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"unix socket path", "requirepass", "max connections", "max args"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestStaleSocketHandling(t *testing.T) {
	path := shortSocket(t)
	// A stale socket (nothing listening) is replaced.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	s, err := New(newTierCache(t), Options{UnixSocket: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("start over a stale socket: %v", err)
	}
	defer s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %o, want 600", fi.Mode().Perm())
	}
	// A live server's socket is never removed.
	s2, _ := New(newTierCache(t), Options{UnixSocket: path})
	if err := s2.Start(); !errors.Is(err, ErrSocketInUse) {
		t.Fatalf("second server on a live socket: %v", err)
	}
	c := dialRaw(t, path)
	c.cmd("PING")
	if got := c.reply(); got != "+PONG" {
		t.Fatalf("first server after the second tried: %q", got)
	}
	// A regular file is not a socket: left alone.
	file := shortSocket(t)
	os.WriteFile(file, []byte("data"), 0o600)
	s3, _ := New(newTierCache(t), Options{UnixSocket: file})
	if err := s3.Start(); !errors.Is(err, ErrNotSocket) {
		t.Fatalf("server on a regular file: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "data" {
		t.Fatal("regular file was touched")
	}
}

func TestCloseIsOrderedAndIdempotent(t *testing.T) {
	s, path := startServer(t, nil)
	c := dialRaw(t, path)
	c.cmd("SET", "k", "v")
	c.reply()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c.expectClosed()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("socket file left after Close: %v", err)
	}
}

func TestObserveLatency(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	var longest time.Duration
	_, path := startServer(t, func(o *Options) {
		o.ObserveLatency = func(cmd string) func(time.Duration, int) {
			return func(d time.Duration, n int) {
				mu.Lock()
				seen[cmd] += n
				if d < 0 {
					t.Errorf("%s observed a negative duration %v", cmd, d)
				}
				longest = max(longest, d)
				mu.Unlock()
			}
		}
	})
	c := dialRaw(t, path)
	c.cmd("SET", "k", "v")
	c.reply()
	// The wait for the next command is never part of its time.
	const idle = 300 * time.Millisecond
	time.Sleep(idle)
	c.cmd("GET", "k")
	c.reply()
	c.cmd("get", "k")
	c.reply()
	c.cmd("QUIT")
	c.reply()
	c.expectClosed()
	mu.Lock()
	defer mu.Unlock()
	if seen["set"] != 1 || seen["get"] != 2 {
		t.Fatalf("observed %v", seen)
	}
	if longest >= idle {
		t.Fatalf("a command was timed %v: the %v wait for it was counted", longest, idle)
	}
}

// TestPanicClosesOnlyThatConnection: a panic behind a command is answered
// with an error and drops that connection; the server keeps serving.
func TestPanicClosesOnlyThatConnection(t *testing.T) {
	path := shortSocket(t)
	s, err := New(newTierCache(t), Options{UnixSocket: path})
	if err != nil {
		t.Fatal(err)
	}
	// A command whose handler has a bug, added before the server starts.
	s.cmds["boom"] = &command{name: "boom", arity: 1, run: func(*conn, [][]byte) { panic("test panic") }}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := dialRaw(t, path)
	c.cmd("BOOM")
	if got := c.reply(); got != "-ERR internal error; connection closed" {
		t.Fatalf("reply: %q", got)
	}
	c.expectClosed()
	d := dialRaw(t, path)
	d.cmd("GET", "fine")
	if got := d.reply(); got != "nil" {
		t.Fatalf("after a panic: %q", got)
	}
}

func TestMultiExec(t *testing.T) {
	_, path := startServer(t, nil)
	c := dialRaw(t, path)
	c.expect([]step{
		{[]string{"EXEC"}, "-ERR EXEC without MULTI"},
		{[]string{"DISCARD"}, "-ERR DISCARD without MULTI"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"MULTI"}, "-ERR MULTI calls can not be nested"},
		{[]string{"SET", "tx", "1"}, "+QUEUED"},
		{[]string{"GET", "tx"}, "+QUEUED"},
		{[]string{"MGET", "tx", "nope"}, "+QUEUED"},
		{[]string{"EXEC"}, "*[+OK $1 *[$1 nil]]"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"SET", "tx", "2"}, "+QUEUED"},
		{[]string{"DISCARD"}, "+OK"},
		{[]string{"GET", "tx"}, "$1"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"SET", "tx", "3"}, "+QUEUED"},
		{[]string{"GET"}, "-ERR wrong number of arguments for 'get' command"},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors."},
		{[]string{"GET", "tx"}, "$1"},
		{[]string{"WATCH", "tx"}, "+OK"},
		{[]string{"UNWATCH"}, "+OK"},
	})
}

// TestInfoColdWriteError: a cold store that takes no more writes shows in
// INFO tiers as cold_writable:0 with the reason on one line.
func TestInfoColdWriteError(t *testing.T) {
	snap := Snapshot{Cache: tier.Stats{ColdBackend: "emulated:/tmp/x", ColdWriteError: errors.New("emu: write failed:\r\nno space left on device")}}
	var b strings.Builder
	writeStats(&b, "tiers", &snap)
	for _, want := range []string{"cold_writable:0\r\n", "cold_write_error:emu: write failed:  no space left on device\r\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("INFO tiers lacks %q:\n%s", want, b.String())
		}
	}
}

// TestInfoMemory: INFO memory reports the process's real resident set (not
// the Go runtime's mapped total), the DRAM budget as maxmemory and the Go
// memory limit in force.
func TestInfoMemory(t *testing.T) {
	_, path := startServer(t, nil)
	c := dialRaw(t, path)
	c.cmd("INFO", "memory")
	info := c.reply()
	fields := map[string]string{}
	for _, line := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = v
		}
	}
	rss, peak := residentBytes()
	if rss == 0 || peak < rss {
		t.Fatalf("residentBytes = %d, %d", rss, peak)
	}
	if n, err := strconv.ParseUint(fields["used_memory_rss"], 10, 64); err != nil || n == 0 || n > 2*rss {
		t.Errorf("used_memory_rss %q, this process's RSS is %d", fields["used_memory_rss"], rss)
	}
	if fields["maxmemory"] != strconv.Itoa(testHotBytes) { // the test cache's hot budget
		t.Errorf("maxmemory %q, want %d", fields["maxmemory"], testHotBytes)
	}
	for _, k := range []string{"used_memory", "used_memory_peak_rss", "go_memory_limit", "tier_heap_budget", "tier_directory_bytes"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("INFO memory lacks %s:\n%s", k, info)
		}
	}
}

// TestInfoTiers: INFO tiers has the rows of every tier of a cache with
// hot, warm and cold, and names its cold store.
func TestInfoTiers(t *testing.T) {
	_, _, path := startColdServer(t, nil)
	c := dialRaw(t, path)
	c.cmd("INFO", "tiers")
	info := c.reply()
	for _, want := range []string{"tier_hot_items:", "tier_cold_items:", "cold_backend:emulated:", "cold_writable:1\r\n", "cold_write_error:\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO tiers lacks %q:\n%s", want, info)
		}
	}
}
