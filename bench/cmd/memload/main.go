// Command memload drives one cache server (RESP or memcached's text
// protocol, on a Unix socket) for scripts/bench-memory: it writes every key
// once, then sends a bounded number of requests over a Zipf key choice, a
// share of them GETs (a miss is followed by a SET of that key:
// read-through) and the rest SETs overwriting a key. Every value read is
// checked: its key, a version that may be there (no stale read), and every
// byte. It prints one RESULT line and exits 1 on any mismatch or error.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"

	"github.com/tiercache/tiercache/bench/internal/load"
)

func main() {
	f := load.RegisterFlags(8, "mem:")
	proto := flag.String("proto", "resp", "resp (redis-server, tiercache) or memcache")
	reqs := flag.Int("reqs", 1000000, "requests after populating")
	getPct := flag.Int("get-pct", 80, "percent of requests that are GETs; the rest overwrite")
	batch := flag.Int("populate-batch", 32, "SETs per pipelined round trip while populating")
	flag.Parse()
	if !f.Valid() {
		flag.Usage()
		os.Exit(2)
	}
	d, err := load.NewDialer(*proto, f.Socket, f.Conns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "memload:", err)
		os.Exit(2)
	}
	defer d.Close()

	var cnt load.Counts
	vs := load.NewVersions(f.Keys)
	t0 := time.Now()
	if err := load.Populate(d, vs, f.Prefix, f.Keys, f.Size, f.Conns, *batch, &cnt); err != nil {
		fmt.Fprintln(os.Stderr, "memload:", err)
		os.Exit(1)
	}
	populate := time.Since(t0)

	var gets, hits, sets atomic.Int64
	t1 := time.Now()
	err = load.Each(d, f.Conns, func(g int, c load.Conn) {
		ctx := context.Background()
		r := rand.New(rand.NewPCG(f.Seed, uint64(g)))
		z := load.NewZipf(r, f.Keys, f.Theta)
		val := make([]byte, f.Size)
		var buf, scratch []byte
		var ng, nh, ns int64
		set := func(i int) {
			ns++
			k := load.Key(f.Prefix, i)
			if err := vs.Write(i, val, func() error { return c.Set(ctx, k, val) }); err != nil {
				cnt.Fail(err)
			}
		}
		n := *reqs / f.Conns
		if g < *reqs%f.Conns {
			n++
		}
		for ; n > 0; n-- {
			i := z.Next()
			if r.IntN(100) >= *getPct {
				set(i)
				continue
			}
			ng++
			lo := vs.Acked(i)
			var ok bool
			var err error
			buf, ok, err = c.Get(ctx, buf, load.Key(f.Prefix, i))
			switch {
			case err != nil:
				cnt.Fail(err)
			case !ok:
				set(i) // read-through
			default:
				nh++
				if scratch, err = vs.CheckRead(buf, i, f.Size, lo, scratch); err != nil {
					cnt.Fail(err)
				}
			}
		}
		gets.Add(ng)
		hits.Add(nh)
		sets.Add(ns)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "memload:", err)
		os.Exit(1)
	}
	el := time.Since(t1)
	ratio := 0.0
	if g := gets.Load(); g > 0 {
		ratio = float64(hits.Load()) / float64(g)
	}
	load.Result("populate_s", populate.Seconds(), "load_s", el.Seconds(), "reqs", *reqs,
		"gets", gets.Load(), "hits", hits.Load(), "sets", sets.Load(), "hit_ratio", ratio,
		"ops_per_s", float64(*reqs)/el.Seconds(), "mismatches", cnt.Mismatches.Load(), "errors", cnt.Errors.Load())
	os.Exit(cnt.ExitCode())
}
