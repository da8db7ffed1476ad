// Command ingestload drives one cache server (RESP or memcached's text
// protocol, on a Unix socket) for scripts/bench-ingest: a bulk load of
// -keys new keys of -value-bytes each, written once, -pipeline SETs per
// round trip on each of -conns connections; then every key is read back
// (MGET, or memcached's multi-key get, -mget keys a round trip) and
// checked: its key, version 1 and every byte. The client writes and
// parses the protocol itself, from buffers it reuses, so that it is not
// the bottleneck.
//
// -phase load writes the keys and saves which were acknowledged in
// -state; -phase verify reads them back in another process (so that a
// script can read the server's counters between the two).
//
// It prints one RESULT line: keys acknowledged, the load's seconds and
// keys per second, keys read back whole (kept), the kept fraction of the
// acknowledged keys, errors (error replies to SETs, by their first text)
// and mismatches. It exits 1 on a mismatch or a broken connection; an
// acknowledged key missing afterwards is reported, not an exit status.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tiercache/tiercache/bench/internal/load"
)

func main() {
	f := load.RegisterFlags(4, "ing:")
	proto := flag.String("proto", "resp", "resp (tiercache, redis-server) or memcache")
	pipeline := flag.Int("pipeline", 64, "SETs per round trip on a connection")
	mget := flag.Int("mget", 100, "keys per read-back round trip")
	phase := flag.String("phase", "both", "load, verify (the keys -state says were acknowledged) or both")
	state := flag.String("state", "", "file the load phase writes the acknowledged keys to, and the verify phase reads")
	flag.Parse()
	if !f.Valid() || *pipeline < 1 || *mget < 1 || (*proto != "resp" && *proto != "memcache") ||
		(*phase != "load" && *phase != "verify" && *phase != "both") || (*phase != "both" && *state == "") {
		flag.Usage()
		os.Exit(2)
	}
	conns := make([]*conn, f.Conns)
	for g := range conns {
		c, err := dial(*proto, f.Socket)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ingestload:", err)
			os.Exit(2)
		}
		conns[g] = c
		defer c.close()
	}
	acked := make([]bool, f.Keys)
	var errs errCount
	var broken error
	loadS := 0.0
	if *phase == "verify" {
		b, err := os.ReadFile(*state)
		if err != nil || len(b) != f.Keys {
			fmt.Fprintf(os.Stderr, "ingestload: -state %s: %v (%d bytes for %d keys)\n", *state, err, len(b), f.Keys)
			os.Exit(2)
		}
		for i, a := range b {
			acked[i] = a == 1
		}
	} else {
		loadS, broken = loadKeys(conns, f, *pipeline, acked, &errs)
	}
	if *phase == "load" {
		b := make([]byte, f.Keys)
		for i, a := range acked {
			if a {
				b[i] = 1
			}
		}
		if err := os.WriteFile(*state, b, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "ingestload:", err)
			os.Exit(2)
		}
	}
	var nAcked int
	for _, a := range acked {
		if a {
			nAcked++
		}
	}
	var kept, mismatches atomic.Int64
	verifyS := 0.0
	if *phase != "load" && broken == nil {
		t1 := time.Now()
		broken = verifyKeys(conns, f, *mget, acked, &kept, &mismatches)
		verifyS = time.Since(t1).Seconds()
	}
	if broken != nil {
		fmt.Fprintln(os.Stderr, "ingestload:", broken)
	}
	keptFrac := 0.0
	if nAcked > 0 {
		keptFrac = float64(kept.Load()) / float64(nAcked)
	}
	keysPerS := 0.0
	if loadS > 0 {
		keysPerS = float64(nAcked) / loadS
	}
	load.Result("keys", f.Keys, "acked", nAcked, "load_s", loadS, "keys_per_s", keysPerS,
		"kept", kept.Load(), "kept_frac", keptFrac, "lost", int64(nAcked)-kept.Load(), "verify_s", verifyS,
		"errors", errs.n.Load(), "mismatches", mismatches.Load(), "first_error", fmt.Sprintf("%q", errs.first())) // last: it has spaces
	if broken != nil || mismatches.Load() > 0 {
		os.Exit(1)
	}
}

// loadKeys writes version 1 of every key, -pipeline SETs a round trip,
// the keys i with i%len(conns) == g on connection g, and marks those
// acknowledged; it returns the seconds it took.
func loadKeys(conns []*conn, f *load.Flags, pipeline int, acked []bool, errs *errCount) (float64, error) {
	t0 := time.Now()
	err := each(conns, func(g int, c *conn) error {
		val := make([]byte, f.Size)
		idx := make([]int, 0, pipeline)
		for i := g; i < f.Keys; i += len(conns) {
			idx = append(idx, i)
			if len(idx) == pipeline || i+len(conns) >= f.Keys {
				if err := c.setBatch(f.Prefix, idx, val, acked, errs); err != nil {
					return err
				}
				idx = idx[:0]
			}
		}
		return nil
	})
	return time.Since(t0).Seconds(), err
}

// verifyKeys reads every key back, mget keys a round trip, and counts in
// kept the acknowledged ones read whole at version 1; a value that is
// not is a mismatch.
func verifyKeys(conns []*conn, f *load.Flags, mget int, acked []bool, kept, mismatches *atomic.Int64) error {
	return each(conns, func(g int, c *conn) error {
		idx := make([]int, 0, mget)
		var scratch []byte
		check := func(i int, v []byte, found bool) {
			if !found {
				return
			}
			ver, s, err := load.Check(v, i, f.Size, scratch)
			scratch = s
			if err == nil && ver != 1 {
				err = fmt.Errorf("%w: key %d: version %d, only 1 was written", load.ErrMismatch, i, ver)
			}
			if err != nil {
				if mismatches.Add(1) <= 10 {
					fmt.Fprintln(os.Stderr, "ingestload:", err)
				}
				return
			}
			if acked[i] {
				kept.Add(1)
			}
		}
		for i := g; i < f.Keys; i += len(conns) {
			idx = append(idx, i)
			if len(idx) == mget || i+len(conns) >= f.Keys {
				if err := c.getBatch(f.Prefix, idx, check); err != nil {
					return err
				}
				idx = idx[:0]
			}
		}
		return nil
	})
}

// each runs fn on one goroutine per connection and returns the first
// error any returned (a broken connection).
func each(conns []*conn, fn func(g int, c *conn) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for g, c := range conns {
		wg.Go(func() { errs[g] = fn(g, c) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// errCount counts error replies to SETs and keeps the first one's text.
type errCount struct {
	n    atomic.Int64
	mu   sync.Mutex
	text string
}

func (e *errCount) add(text string) {
	if e.n.Add(1) == 1 {
		e.mu.Lock()
		e.text = text
		e.mu.Unlock()
	}
}

func (e *errCount) first() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.text
}

func dial(proto, path string) (*conn, error) {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, mc: proto == "memcache", r: newReader(c)}, nil
}
