// Command kvchunks writes and reads KV-cache chunks the way LMCache's
// redis:// connector stores them: each chunk is a big value under
// "<key>kv_bytes" beside a small "<key>metadata" value, one command at a
// time on one connection. It sends each chunk from, and reads it into,
// buffers allocated once before the clock starts, with one writev per
// SET, so that the client's own copies do not bound the figure. For
// scripts/bench-kvchunks.
//
// -mode set writes chunks 0..n-1; -mode get reads them back (in the same
// order, rounds times) and checks each chunk's first and last bytes and
// length. It prints "bytes seconds GB/s" of the chunks moved (metadata
// excluded from the bytes, included in the time).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"
)

func main() {
	sock := flag.String("s", "", "Unix socket")
	mode := flag.String("mode", "set", "set or get")
	size := flag.Int("size", 32<<20, "chunk bytes")
	n := flag.Int("n", 8, "chunks")
	rounds := flag.Int("rounds", 1, "passes over the chunks (get)")
	prefix := flag.String("prefix", "chunk", "key prefix")
	flag.Parse()
	if err := run(*sock, *mode, *prefix, *size, *n, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "kvchunks:", err)
		os.Exit(1)
	}
}

// fill is the byte chunk i starts and ends with, so a GET can tell chunks apart.
func fill(i int) byte { return byte('A' + i%26) }

func run(sock, mode, prefix string, size, n, rounds int) error {
	nc, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 64<<10)
	chunk := make([]byte, size+2) // the value and its CRLF
	for i := range chunk {        // fault its pages in before the clock starts
		chunk[i] = byte(i)
	}
	meta := bytes.Repeat([]byte("m"), 256)
	start := time.Now()
	moved := 0
	switch mode {
	case "set":
		for i := range n {
			chunk[0], chunk[size-1] = fill(i), fill(i)
			copy(chunk[size:], "\r\n")
			key := prefix + strconv.Itoa(i)
			if err := set(nc, br, key+"metadata", append(meta, "\r\n"...)); err != nil {
				return err
			}
			if err := set(nc, br, key+"kv_bytes", chunk); err != nil {
				return err
			}
			moved += size
		}
	case "get":
		for range rounds {
			for i := range n {
				key := prefix + strconv.Itoa(i)
				if _, err := get(nc, br, key+"metadata", chunk); err != nil {
					return err
				}
				got, err := get(nc, br, key+"kv_bytes", chunk)
				if err != nil {
					return err
				}
				if got != size || chunk[0] != fill(i) || chunk[size-1] != fill(i) {
					return fmt.Errorf("GET %skv_bytes: %d bytes, not the chunk SET", key, got)
				}
				moved += size
			}
		}
	default:
		return fmt.Errorf("unknown -mode %q", mode)
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("%d %.3f %.3f\n", moved, secs, float64(moved)/secs/1e9)
	return nil
}

// set sends SET key value (valueCRLF ends with its CRLF) as one writev and
// waits for +OK.
func set(nc net.Conn, br *bufio.Reader, key string, valueCRLF []byte) error {
	head := fmt.Appendf(nil, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n", len(key), key, len(valueCRLF)-2)
	bufs := net.Buffers{head, valueCRLF}
	if _, err := bufs.WriteTo(nc); err != nil {
		return err
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+OK\r\n" {
		return fmt.Errorf("SET %s: %q", key, line)
	}
	return nil
}

// get sends GET key and reads the bulk into buf (which must hold it and
// its CRLF); it returns the value's length.
func get(nc net.Conn, br *bufio.Reader, key string, buf []byte) (int, error) {
	if _, err := fmt.Fprintf(nc, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(key), key); err != nil {
		return 0, err
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 4 || line[0] != '$' {
		return 0, fmt.Errorf("GET %s: %q", key, line)
	}
	size, err := strconv.Atoi(line[1 : len(line)-2])
	if err != nil || size < 0 {
		return 0, fmt.Errorf("GET %s: %q", key, line)
	}
	if size+2 > len(buf) {
		return 0, errors.New("GET " + key + ": value larger than the buffer")
	}
	if _, err := io.ReadFull(br, buf[:size+2]); err != nil {
		return 0, err
	}
	return size, nil
}
