package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/tier"
)

// BenchmarkGetPipelined16 measures the server path (parse, dispatch, reply,
// one flush per batch) over a real Unix socket, 16 GETs of one 1536-byte
// value per batch, from a tier.Cache of hot DRAM.
func BenchmarkGetPipelined16(b *testing.B) {
	tc := newTierCache(b)
	_, path := startServerWith(b, tc, nil)
	val := strings.Repeat("v", 1536)
	tc.Set([]byte("key:000000000042"), []byte(val), tier.SetOptions{})
	batch := strings.Repeat("*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r\n", 16)
	benchPipelined16(b, path, batch, 16*len(fmt.Sprintf("$%d\r\n%s\r\n", len(val), val)), "GET")
}

// BenchmarkSetPipelined16 is BenchmarkGetPipelined16 for SET: 16 keys of
// 1536-byte values per batch, each set again every batch.
func BenchmarkSetPipelined16(b *testing.B) {
	tc := newTierCache(b)
	_, path := startServerWith(b, tc, nil)
	val := strings.Repeat("v", 1536)
	var batch strings.Builder
	for i := range 16 {
		k := fmt.Sprintf("key:%012d", i)
		fmt.Fprintf(&batch, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, len(val), val)
	}
	benchPipelined16(b, path, batch.String(), 16*len("+OK\r\n"), "SET")
}

// benchPipelined16 sends batch (16 commands) and reads replyLen bytes of
// replies per round, and reports the time per command as ns/<unit>.
func benchPipelined16(b *testing.B, path, batch string, replyLen int, unit string) {
	req := []byte(batch)
	nc, err := net.Dial("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 64<<10)
	buf := make([]byte, replyLen)
	b.ReportAllocs()
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		if _, err := nc.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/"+unit)
}

// BenchmarkHSet100 measures HSET of one field of a 100-field hash on the
// real tier.Cache (decode, change, encode, store: O(hash size)), 16 per
// batch over a Unix socket.
func BenchmarkHSet100(b *testing.B) {
	tc := newTierCache(b)
	_, path := startServerWith(b, tc, nil)
	r := dialRaw(b, path)
	args := []string{"HSET", "h"}
	for i := range 100 {
		args = append(args, fmt.Sprint("element:", i), "xxx")
	}
	r.cmd(args...)
	r.reply()
	var batch strings.Builder
	for i := range 16 {
		f := fmt.Sprint("element:", i*6)
		fmt.Fprintf(&batch, "*4\r\n$4\r\nHSET\r\n$1\r\nh\r\n$%d\r\n%s\r\n$3\r\nyyy\r\n", len(f), f)
	}
	benchBatches(b, r, batch.String(), 16*len(":0\r\n"), "HSET")
}

// BenchmarkIncr16 measures INCR of 16 counters a batch over a Unix socket
// (a string record's read-modify-write in place).
func BenchmarkIncr16(b *testing.B) {
	tc := newTierCache(b)
	_, path := startServerWith(b, tc, nil)
	r := dialRaw(b, path)
	var batch strings.Builder
	for i := range 16 {
		k := fmt.Sprintf("counter:%d", i)
		fmt.Fprintf(&batch, "*2\r\n$4\r\nINCR\r\n$%d\r\n%s\r\n", len(k), k)
	}
	r.send(batch.String())
	if _, err := io.ReadFull(r.rd.br, make([]byte, 16*len(":1\r\n"))); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r.send(batch.String())
		for range 16 {
			if _, err := r.rd.br.ReadSlice('\n'); err != nil { // ":n\r\n"
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/INCR")
}

// benchBatches sends batch (16 commands) on r and reads replyLen bytes of
// replies per round, and reports the time per command as ns/<unit>.
func benchBatches(b *testing.B, r *rawConn, batch string, replyLen int, unit string) {
	buf := make([]byte, replyLen)
	b.ReportAllocs()
	for b.Loop() {
		r.send(batch)
		if _, err := io.ReadFull(r.rd.br, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/"+unit)
}

// BenchmarkEvalSHA measures EVALSHA of issue 33's 3-command script (SET,
// INCR, GET), 16 per batch over a Unix socket: the exclusive lock, the
// run's setup, three redis.calls and their replies back into Lua.
func BenchmarkEvalSHA(b *testing.B) {
	tc := newTierCache(b)
	_, path := startServerWith(b, tc, nil)
	r := dialRaw(b, path)
	r.cmd("SCRIPT", "LOAD", "redis.call('set', KEYS[1], ARGV[1]); redis.call('incr', KEYS[2]); return redis.call('get', KEYS[1])")
	sha := strings.TrimPrefix(r.reply(), "$")
	var batch strings.Builder
	for i := range 16 {
		k, c := fmt.Sprintf("s:%06d", i), fmt.Sprintf("c:%06d", i)
		fmt.Fprintf(&batch, "*6\r\n$7\r\nEVALSHA\r\n$40\r\n%s\r\n$1\r\n2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$5\r\nvalue\r\n", sha, len(k), k, len(c), c)
	}
	benchBatches(b, r, batch.String(), 16*len("$5\r\nvalue\r\n"), "EVALSHA")
}
