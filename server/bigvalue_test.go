package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/tier"
)

// TestPingServedDuringBigSet (S18): while one client sends a 64 MiB SET a
// MiB at a time, another client's PING sent after each MiB is answered
// before the SET is complete: receiving a big value holds up no other
// connection. The value is then read back whole.
func TestPingServedDuringBigSet(t *testing.T) {
	const size = 64 << 20
	cache := openColdCache(t, func(o *tier.Options, c *coldstore.Config) { o.MaxValue, c.Capacity = size, 4*size }) // the value goes to cold
	_, path := startServerWith(t, cache, func(o *Options) { o.MaxBulkBytes = size })
	big, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	big.SetDeadline(time.Now().Add(2 * time.Minute))
	ping := dialRaw(t, path)
	fmt.Fprintf(big, "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n", size)
	piece := bytes.Repeat([]byte{'v'}, 1<<20)
	for i := 0; i < size/len(piece); i++ {
		if _, err := big.Write(piece); err != nil {
			t.Fatal(err)
		}
		ping.cmd("PING")
		if got := ping.reply(); got != "+PONG" {
			t.Fatalf("PING after %d MiB of the SET: %q", i+1, got)
		}
	}
	big.Write([]byte("\r\n*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n"))
	br := bufio.NewReaderSize(big, 1<<20)
	if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("SET: %q %v", line, err)
	}
	if line, err := br.ReadString('\n'); err != nil || line != fmt.Sprintf("$%d\r\n", size) {
		t.Fatalf("GET: %q %v", line, err)
	}
	got := make([]byte, size+2)
	if _, err := io.ReadFull(br, got); err != nil || !bytes.Equal(got[:size], bytes.Repeat([]byte{'v'}, size)) {
		t.Fatalf("GET value: %v", err)
	}
}
