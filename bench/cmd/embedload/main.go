// Command embedload drives one server on a Unix socket for
// scripts/bench-embedding, over RESP (tiercache, redis-server) or
// memcached's text protocol (-proto memcache): an embedding lookup is an
// MGET (memcached: a get of several keys) of -mget keys drawn Zipf(-theta)
// out of -keys vectors of -value-bytes each (768 fp16 = 1536 bytes by
// default). After each MGET, every missed key is written
// back (read-through: one pipelined round trip of SETs) unless
// -read-through=false. Every vector read is checked (its key, a version
// that may be there, every byte).
//
// -populate writes every key once first. The versions written are kept in
// -state between runs, so a later run (-populate=false) against the same
// server still checks versions. It prints one RESULT line and exits 1 on
// any mismatch or error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/tiercache/tiercache/bench/internal/load"
)

func main() {
	f := load.RegisterFlags(4, "emb:")
	mget := flag.Int("mget", 256, "keys per MGET")
	batches := flag.Int("batches", 2000, "MGETs in all, spread over the connections")
	populate := flag.Bool("populate", false, "write every key once before the MGETs")
	readThrough := flag.Bool("read-through", true, "SET each missed key after its MGET")
	state := flag.String("state", "", "file keeping the versions written, between runs")
	proto := flag.String("proto", "resp", "resp (redis-server, tiercache: MGET) or memcache (memcached: get of several keys)")
	flag.Parse()
	if !f.Valid() || *mget < 1 {
		flag.Usage()
		os.Exit(2)
	}
	d, err := load.NewDialer(*proto, f.Socket, f.Conns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedload:", err)
		os.Exit(2)
	}
	defer d.Close()

	var cnt load.Counts
	var vs *load.Versions
	if !*populate {
		var err error
		if vs, err = load.LoadVersions(*state, f.Keys); err != nil {
			fmt.Fprintln(os.Stderr, "embedload: without -populate, -state must hold the versions written:", err)
			os.Exit(2)
		}
	} else {
		vs = load.NewVersions(f.Keys)
		t0 := time.Now()
		if err := load.Populate(d, vs, f.Prefix, f.Keys, f.Size, f.Conns, 64, &cnt); err != nil {
			fmt.Fprintln(os.Stderr, "embedload:", err)
			os.Exit(1)
		}
		load.Result("populate_s", time.Since(t0).Seconds(), "keys", f.Keys, "errors", cnt.Errors.Load())
	}

	var hits, requested, written atomic.Int64
	var lat load.Latencies
	t1 := time.Now()
	err = load.Each(d, f.Conns, func(g int, c load.Conn) {
		ctx := context.Background()
		r := rand.New(rand.NewPCG(f.Seed, uint64(g)))
		z := load.NewZipf(r, f.Keys, f.Theta)
		idx := make([]int, *mget)
		names := make([]string, *mget)
		lo := make([]uint64, *mget)
		var missed []int
		var missedNames []string
		var vals [][]byte
		var scratch []byte
		n := *batches / f.Conns
		if g < *batches%f.Conns {
			n++
		}
		ds := make([]time.Duration, 0, n)
		var nh, nw int64
		for ; n > 0; n-- {
			for j := range idx {
				idx[j] = z.Next()
				names[j] = load.Key(f.Prefix, idx[j])
				lo[j] = vs.Acked(idx[j])
			}
			t := time.Now()
			res, err := c.GetMany(ctx, names)
			ds = append(ds, time.Since(t))
			if err == nil && len(res) != len(names) {
				err = fmt.Errorf("MGET of %d keys answered %d values", len(names), len(res))
			}
			if err != nil {
				cnt.Fail(err)
				continue
			}
			missed, missedNames = missed[:0], missedNames[:0]
			for j, v := range res {
				s, ok := v.(string)
				if !ok {
					if v != nil {
						cnt.Fail(fmt.Errorf("MGET %s: a %T", names[j], v))
					} else if !slices.Contains(missed, idx[j]) {
						missed = append(missed, idx[j])
						missedNames = append(missedNames, names[j])
					}
					continue
				}
				nh++
				if scratch, err = vs.CheckRead([]byte(s), idx[j], f.Size, lo[j], scratch); err != nil {
					cnt.Fail(err)
				}
			}
			if !*readThrough || len(missed) == 0 {
				continue
			}
			for len(vals) < len(missed) {
				vals = append(vals, make([]byte, f.Size))
			}
			if err := vs.WriteBatch(missed, vals[:len(missed)], func() error {
				return c.SetMany(ctx, missedNames, vals[:len(missed)])
			}); err != nil {
				cnt.Fail(fmt.Errorf("read-through: %w", err))
			}
			nw += int64(len(missed))
		}
		lat.Add(ds)
		hits.Add(nh)
		requested.Add(int64(len(ds) * *mget))
		written.Add(nw)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedload:", err)
		os.Exit(1)
	}
	el := time.Since(t1)
	if *state != "" {
		if err := vs.Save(*state); err != nil {
			cnt.Fail(errors.New("save state: " + err.Error()))
		}
	}
	if *batches > 0 {
		ratio := 0.0
		if q := requested.Load(); q > 0 {
			ratio = float64(hits.Load()) / float64(q)
		}
		load.Result("batches", *batches, "mget", *mget, "requested", requested.Load(), "hits", hits.Load(),
			"hit_ratio", ratio, "vectors_per_s", float64(hits.Load())/el.Seconds(),
			"p50_us", lat.Quantile(0.50).Microseconds(), "p99_us", lat.Quantile(0.99).Microseconds(),
			"read_through_sets", written.Load(), "load_s", el.Seconds(),
			"mismatches", cnt.Mismatches.Load(), "errors", cnt.Errors.Load())
	}
	os.Exit(cnt.ExitCode())
}
