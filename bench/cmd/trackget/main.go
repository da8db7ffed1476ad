// Command trackget drives a Redis-protocol server with GETs from
// connections that have client tracking on (HELLO 3, CLIENT TRACKING ON),
// unpipelined, for scripts/bench-redis: redis-benchmark cannot turn
// tracking on. It prints requests per second.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

func main() {
	sock := flag.String("s", "", "Unix socket")
	conns := flag.Int("c", 50, "connections")
	n := flag.Int("n", 100000, "requests in all")
	keys := flag.Int("r", 10000, "key space: key:0 .. key:r-1")
	flag.Parse()
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < *conns; i++ {
		nc, err := net.Dial("unix", *sock)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		br, bw := bufio.NewReader(nc), bufio.NewWriter(nc)
		send := func(args ...string) {
			fmt.Fprintf(bw, "*%d\r\n", len(args))
			for _, a := range args {
				fmt.Fprintf(bw, "$%d\r\n%s\r\n", len(a), a)
			}
			bw.Flush()
		}
		send("HELLO", "3")
		skip(br)
		send("CLIENT", "TRACKING", "ON")
		skip(br)
		wg.Add(1)
		go func(each int) {
			defer wg.Done()
			for j := 0; j < each; j++ {
				send("GET", "key:"+strconv.Itoa(rand.IntN(*keys)))
				for skip(br) { // an invalidation push: the reply follows
				}
			}
			nc.Close()
		}(*n / *conns)
	}
	wg.Wait()
	fmt.Printf("%.0f\n", float64(*n)/time.Since(start).Seconds())
}

// skip reads one reply and reports whether it was a push.
func skip(br *bufio.Reader) bool {
	line, err := br.ReadString('\n')
	if err != nil || len(line) < 3 {
		fmt.Fprintln(os.Stderr, "read:", err)
		os.Exit(1)
	}
	n, _ := strconv.Atoi(line[1 : len(line)-2])
	switch line[0] {
	case '$', '=':
		if n >= 0 {
			br.Discard(n + 2)
		}
	case '*', '~', '>':
		for i := 0; i < n; i++ {
			skip(br)
		}
	case '%':
		for i := 0; i < 2*n; i++ {
			skip(br)
		}
	}
	return line[0] == '>'
}
