package kvtcp

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
)

const (
	benchKeys   = 1024
	benchBatch  = 16   // one Do: 16 commands in flight
	benchValue  = 4000 // a 4 KiB-class value, one Store each
	benchRounds = 5
)

func benchKey(i int) []byte {
	var k [8]byte
	binary.LittleEndian.PutUint64(k[:], uint64(i))
	return k[:]
}

// BenchmarkKVSSD measures Store and Retrieve (batches of 16, 4000-byte
// values, 1024 keys) on the emulated namespace called directly and on the
// same kind of namespace behind `tiercache kvtarget`, through the kernel's
// nvme-tcp host and NVME_URING_CMD_IO on /dev/ngXnY. Under TCG only the
// ratio of the two means anything. Run:
//
//	scripts/vmtest -pkgs ./vmtest/guest/kvtcp -run NONE -bench KVSSD -benchtime 2s
func BenchmarkKVSSD(b *testing.B) {
	requireGuest(b)
	direct, err := emu.Open(emu.Options{Path: "/tmp/kv-bench-direct.img", Capacity: 64 << 20, Mode: emu.Strict, CheckpointPath: "-"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { direct.Close() })
	d := Attach(b, "/tmp/kv-bench-tcp.img", "64MiB")
	pt, err := nvmekv.OpenPassthrough(d.NG, nvmekv.PassthroughOptions{RingEntries: 64})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pt.Close() })
	targets := []struct {
		name string
		ns   nvmekv.Namespace
	}{{"emulated", direct}, {"passthrough-tcp", pt}}
	v := make([]byte, benchValue)
	for i := range v {
		v[i] = byte(i)
	}
	for _, tg := range targets {
		for i := 0; i < benchKeys; i++ {
			if err := tg.ns.Store(context.Background(), benchKey(i), v, 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Interleaved rounds, so both targets see the same host load.
	for round := range benchRounds {
		for _, tg := range targets {
			for _, op := range []nvmekv.Opcode{nvmekv.OpStore, nvmekv.OpRetrieve} {
				b.Run(fmt.Sprintf("%s/%s/round%d", op, tg.name, round), func(b *testing.B) {
					ops := make([]*nvmekv.Op, benchBatch)
					bufs := make([][]byte, benchBatch)
					for i := range ops {
						bufs[i] = make([]byte, benchValue)
						ops[i] = &nvmekv.Op{Code: op}
					}
					b.SetBytes(benchValue * benchBatch)
					b.ReportAllocs()
					n := 0
					for b.Loop() {
						for i, o := range ops {
							o.Key, o.Buf = benchKey((n*7919+i*131)%benchKeys), bufs[i]
							if op == nvmekv.OpStore {
								o.Buf = v
							}
						}
						n++
						if err := tg.ns.Do(context.Background(), ops...); err != nil {
							b.Fatal(err)
						}
						for _, o := range ops {
							if o.Err != nil {
								b.Fatal(o.Err)
							}
						}
					}
					b.ReportMetric(float64(n*benchBatch)/b.Elapsed().Seconds(), "ops/s")
				})
			}
		}
	}
}
