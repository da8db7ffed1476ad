package server

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// FuzzCommands (S8) feeds arbitrary command arguments through dispatch
// (with a cache of hot DRAM): every command gets a reply (but CLIENT
// REPLY OFF and SKIP, which answer nothing) and nothing panics.
func FuzzCommands(f *testing.F) {
	for _, s := range []string{
		"SET\x00k\x00v\x00EX\x0010\x00NX\x00GET", "SET\x00k\x00v\x00PXAT\x001", "EXPIRE\x00k\x00-5\x00GT",
		"HELLO\x003\x00SETNAME\x00x", "CLIENT\x00SETINFO\x00lib-name\x00a b", "CONFIG\x00GET\x00*",
		"COMMAND\x00INFO\x00get\x00nope", "MSET\x00a\x00b\x00c", "INFO\x00tiers\x00server", "TTL\x00k",
		"COPY\x00a\x00b\x00DB\x00x\x00REPLACE", "EXPIREAT\x00k\x00100\x00NX\x00XX", "WATCH\x00k\x00k", "RENAMENX\x00a\x00a",
		"CONFIG\x00SET\x00save\x00\x00maxclients\x001", "RANDOMKEY", "PEXPIRETIME\x00k",
		"HSET\x00h\x00f\x00v\x00g\x00w", "HINCRBYFLOAT\x00h\x00f\x001.5", "HRANDFIELD\x00h\x00-5\x00WITHVALUES",
		"HSCAN\x00h\x000\x00MATCH\x00*\x00COUNT\x002", "SETRANGE\x00k\x005\x00x", "BITPOS\x00k\x001\x000\x00-1\x00BIT",
		"INCRBYFLOAT\x00n\x001e308", "MSETNX\x00a\x001\x00b\x002", "OBJECT\x00ENCODING\x00h",
		"RPUSH\x00l\x00a\x00b", "LPOS\x00l\x00a\x00RANK\x00-1\x00COUNT\x000", "LMOVE\x00l\x00l\x00LEFT\x00RIGHT",
		"BLPOP\x00l\x00x\x000", "BLMOVE\x00x\x00l\x00LEFT\x00LEFT\x000.1", "LRANGE\x00l\x00-100\x00100",
		"CLUSTER\x00GETKEYSINSLOT\x003300\x001", "CLUSTER\x00SHARDS", "COMMAND\x00GETKEYS\x00mset\x00a\x001\x00b",
		"MGET\x00b\x00f\x00{b}x", "EXEC", "CLUSTER\x00COUNT-FAILURE-REPORTS\x00x",
		"BITFIELD\x00k\x00OVERFLOW\x00SAT\x00INCRBY\x00i64\x00#3\x00-1\x00GET\x00u63\x000", "BITOP\x00XOR\x00d\x00k\x00h",
		"LCS\x00k\x00d\x00IDX\x00MINMATCHLEN\x001\x00WITHMATCHLEN", "BITFIELD_RO\x00k\x00GET\x00i1\x00#8388607",
		"RESET", "LASTSAVE", "CLIENT\x00REPLY\x00ON", "CLIENT\x00UNBLOCK\x001\x00ERROR",
	} {
		f.Add([]byte(s))
	}
	// Values of at most 1 MiB: SETRANGE, SETBIT, BITFIELD and BITOP may build
	// one, and LCS's table is at most 1 MiB.
	s, err := New(newClockedCache(f, newTestClock()), Options{UnixSocket: "unused", MaxValueBytes: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	// Inputs of odd length run in cluster mode (cluster.go, crossslot.go).
	cs, err := New(newClockedCache(f, newTestClock()), Options{UnixSocket: "unused", MaxValueBytes: 1 << 20,
		Cluster: true, TCPAddr: "127.0.0.1:0", RequirePass: "x"})
	if err != nil {
		f.Fatal(err)
	}
	// Blocking commands answer at once, as at Close: nothing would push.
	s.blk.shutdown()
	cs.blk.shutdown()
	f.Fuzz(func(t *testing.T, in []byte) {
		args := bytes.Split(in, []byte{0})
		if len(args) == 0 || len(args) > 64 {
			return
		}
		a, b := net.Pipe()
		defer a.Close()
		srv := s
		if len(in)%2 == 1 {
			srv = cs
		}
		c := srv.newConn(b, false)
		done := make(chan []byte)
		go func() {
			out, _ := io.ReadAll(a)
			done <- out
		}()
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic on %q: %v", args, r)
				}
			}()
			c.dispatch(args)
			c.flush()
			c.unwatch() // as serve does when the connection ends
		}()
		b.Close()
		select {
		case out := <-done:
			muted := len(args) == 3 && bytes.EqualFold(args[0], []byte("client")) && bytes.EqualFold(args[1], []byte("reply")) &&
				(bytes.EqualFold(args[2], []byte("off")) || bytes.EqualFold(args[2], []byte("skip")))
			if len(out) == 0 && !bytes.EqualFold(args[0], []byte("quit")) && !muted {
				t.Fatalf("no reply to %q", args)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("reply never finished")
		}
	})
}
