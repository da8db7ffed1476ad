package server

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/tier"
)

// TestLoading (S27): a server made by NewLoading answers PING, ECHO, TIME,
// HELLO, CLIENT, SELECT, RESET, LASTSAVE and INFO (loading:1 with the progress) before it
// has its cache, and "-LOADING ..." to every command that touches data,
// queued in MULTI too (EXEC then aborts) and pipelined GETs alike; once
// Loaded hands it a real tier.Cache, a connection made before and one
// made after run every command, INFO says loading:0, and Loaded again is
// refused.
func TestLoading(t *testing.T) {
	var keys atomic.Int64
	keys.Store(7)
	progress := func() LoadProgress {
		return LoadProgress{Method: "scan", LoadedBytes: 1 << 20, TotalBytes: 4 << 20, Keys: keys.Load()}
	}
	o := Options{UnixSocket: shortSocket(t), ShutdownTimeout: 2 * time.Second}
	s, err := NewLoading(o, progress)
	if err != nil {
		t.Fatal(err)
	}
	startClosed(t, s)
	const loading = "-LOADING Redis is loading the dataset in memory"
	c := dialRaw(t, o.UnixSocket)
	c.expect([]step{
		{[]string{"PING"}, "+PONG"},
		{[]string{"ECHO", "hi"}, "$hi"},
		{[]string{"TIME", "x"}, "-ERR wrong number of arguments for 'time' command"},
		{[]string{"CLIENT", "SETNAME", "loader"}, "+OK"},
		{[]string{"SELECT", "0"}, "+OK"},
		{[]string{"GET", "k"}, loading},
		{[]string{"SET", "k", "v"}, loading},
		{[]string{"DBSIZE"}, loading},
		{[]string{"WATCH", "k"}, loading},
		{[]string{"CONFIG", "GET", "maxmemory"}, loading},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"GET", "k"}, loading},
		{[]string{"PING"}, "+QUEUED"},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors."},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"RESET"}, "+RESET"},
		{[]string{"CLIENT", "GETNAME"}, "nil"},
		{[]string{"EXEC"}, "-ERR EXEC without MULTI"},
	})
	c.cmd("LASTSAVE")
	if got := c.reply(); !strings.HasPrefix(got, ":") {
		t.Errorf("LASTSAVE while loading: %q", got)
	}
	c.send("*2\r\n$3\r\nGET\r\n$1\r\na\r\n*2\r\n$3\r\nGET\r\n$1\r\nb\r\n")
	for i := 0; i < 2; i++ {
		if got := c.reply(); got != loading {
			t.Errorf("pipelined GET %d: %q", i, got)
		}
	}
	c.cmd("INFO", "persistence")
	info := c.reply()
	for _, want := range []string{"loading:1\r\n", "loading_loaded_perc:25.00\r\n", "loading_total_bytes:4194304\r\n",
		"loading_loaded_bytes:1048576\r\n", "loading_loaded_keys:7\r\n", "loading_method:scan\r\n", "loading_elapsed_seconds:"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO persistence while loading has no %q:\n%s", want, info)
		}
	}
	c.cmd("INFO") // every section, with no cache behind it
	if info := c.reply(); !strings.Contains(info, "loading:1\r\n") || !strings.Contains(info, "# Tiers") {
		t.Errorf("INFO while loading:\n%s", info)
	}
	if !s.Snapshot().Server.Loading || !s.Loading() {
		t.Error("Snapshot or Loading says loaded while loading")
	}

	cache := newTierCache(t)
	if _, err := cache.Set([]byte("k"), []byte("v"), tier.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Loaded(cache); err != nil {
		t.Fatal(err)
	}
	if err := s.Loaded(cache); !errors.Is(err, ErrNotLoading) {
		t.Errorf("Loaded twice: %v, want ErrNotLoading", err)
	}
	after := dialRaw(t, o.UnixSocket)
	for _, rc := range []*rawConn{c, after} {
		rc.expect([]step{
			{[]string{"GET", "k"}, "$v"},
			{[]string{"SET", "k2", "v2"}, "+OK"},
			{[]string{"DBSIZE"}, ":2"},
			{[]string{"LPUSH", "l", "x"}, ":1"},
			{[]string{"DEL", "l"}, ":1"},
		})
		rc.cmd("INFO", "persistence")
		if info := rc.reply(); !strings.Contains(info, "loading:0\r\n") || strings.Contains(info, "loading_loaded_perc") {
			t.Errorf("INFO persistence once loaded:\n%s", info)
		}
	}
	if s.Snapshot().Server.Loading || s.Loading() {
		t.Error("Snapshot or Loading says loading once loaded")
	}
}

// TestNewRefusesNilCache: New wants a cache (NewLoading is the way to
// start without one), and Loaded a non-nil one.
func TestNewRefusesNilCache(t *testing.T) {
	if _, err := New(nil, Options{UnixSocket: "/tmp/x.sock"}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("New(nil): %v", err)
	}
	s, err := NewLoading(Options{UnixSocket: "/tmp/x.sock"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Loaded(nil); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Loaded(nil): %v", err)
	}
}

// TestLoadedWhileConnecting (S27): clients that connect and send GET and
// LPUSH while Loaded hands the cache over get -LOADING or a real answer,
// never anything else, and all get real answers afterwards (run with
// -race: the cache is published by the loading flag alone).
func TestLoadedWhileConnecting(t *testing.T) {
	o := Options{UnixSocket: shortSocket(t), ShutdownTimeout: 2 * time.Second}
	s, err := NewLoading(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	startClosed(t, s)
	cache := newTierCache(t)
	const clients = 4
	errs := make(chan string, clients)
	for g := 0; g < clients; g++ {
		go func() {
			for i := 0; ; i++ {
				c := dialRaw(t, o.UnixSocket)
				c.cmd("GET", "k")
				get := c.reply()
				c.cmd("LPUSH", "l", "x")
				push := c.reply()
				c.nc.Close()
				switch {
				case get == "nil" && strings.HasPrefix(push, ":"):
					errs <- ""
					return
				case strings.HasPrefix(get, "-LOADING") && (strings.HasPrefix(push, "-LOADING") || strings.HasPrefix(push, ":")):
				default:
					errs <- "GET " + get + ", LPUSH " + push
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := s.Loaded(cache); err != nil {
		t.Fatal(err)
	}
	for g := 0; g < clients; g++ {
		if e := <-errs; e != "" {
			t.Errorf("while Loaded ran: %s", e)
		}
	}
}
