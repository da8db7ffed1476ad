package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
)

// BenchmarkGetPipelined16 measures the server path (parse, dispatch, reply,
// one flush per batch) over a real Unix socket, 16 GETs of 1536-byte values
// per batch, with the map cache behind it.
func BenchmarkGetPipelined16(b *testing.B) {
	s, path := startServer(b, nil)
	val := strings.Repeat("v", 1536)
	s.cache.Set([]byte("key:000000000042"), []byte(val), SetOptions{})
	nc, err := net.Dial("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	batch := []byte(strings.Repeat("*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r\n", 16))
	reply := fmt.Sprintf("$%d\r\n%s\r\n", len(val), val)
	br := bufio.NewReaderSize(nc, 64<<10)
	buf := make([]byte, 16*len(reply))
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if _, err := nc.Write(batch); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/GET")
}
