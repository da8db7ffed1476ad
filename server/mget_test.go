package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestMGetChunksOutliveTheirReply (S26): connections pipelining MGETs of
// their own keys at the same time, each reply larger than the Writer's
// buffer and than one chunk, get every value byte for byte: a chunk given
// back to the pool before its reply was written would be refilled by
// another connection's MGET, and its bytes would belong to another key.
func TestMGetChunksOutliveTheirReply(t *testing.T) {
	cache := newTierCache(t)
	_, path := startServerWith(t, cache, nil)
	const conns, keys, size, rounds, depth = 3, 60, 3000, 20, 4
	value := func(c, k int) []byte {
		v := bytes.Repeat([]byte(fmt.Sprintf("c%d-k%d|", c, k)), size)
		return v[:size]
	}
	setup := dialRaw(t, path)
	for c := range conns {
		for k := range keys {
			setup.cmd("SET", fmt.Sprintf("c%d:%d", c, k), string(value(c, k)))
			if got := setup.reply(); got != "+OK" {
				t.Fatalf("SET: %q", got)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- mgetRounds(path, c, keys, rounds, depth, value)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// mgetRounds sends rounds pipelines of depth MGETs of connection c's keys
// and checks every value of every reply.
func mgetRounds(path string, c, keys, rounds, depth int, value func(c, k int) []byte) error {
	nc, err := net.Dial("unix", path)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(60 * time.Second))
	var req bytes.Buffer
	fmt.Fprintf(&req, "*%d\r\n$4\r\nMGET\r\n", keys+1)
	for k := range keys {
		key := fmt.Sprintf("c%d:%d", c, k)
		fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(key), key)
	}
	pipe := bytes.Repeat(req.Bytes(), depth)
	rd := bufio.NewReader(nc)
	for r := range rounds {
		if _, err := nc.Write(pipe); err != nil {
			return err
		}
		for range depth {
			if line, err := rd.ReadString('\n'); err != nil || line != fmt.Sprintf("*%d\r\n", keys) {
				return fmt.Errorf("conn %d round %d: array header %q, %v", c, r, line, err)
			}
			for k := range keys {
				line, err := rd.ReadString('\n')
				if err != nil {
					return err
				}
				n, _ := strconv.Atoi(line[1 : len(line)-2])
				got := make([]byte, n+2)
				if _, err := io.ReadFull(rd, got); err != nil {
					return err
				}
				if want := value(c, k); !bytes.Equal(got[:n], want) {
					return fmt.Errorf("conn %d round %d key %d: got %.20q..., want %.20q...", c, r, k, got, want)
				}
			}
		}
	}
	return nil
}
