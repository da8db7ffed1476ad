package nvmens

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
)

// benchTargets are the same namespace (nvme1) three ways: through the
// block layer (io_uring read/write, O_DIRECT, on /dev/nvme1n1), through
// NVM passthrough (uring_cmd on /dev/ng1n1), and through passthrough
// with polled read rings. Only their ratio means anything under TCG.
var benchTargets = []struct {
	name string
	opts emu.Options
}{
	{"block", emu.Options{Path: blockPath}},
	{"passthrough", emu.Options{Path: ngPath, NVMe: true}},
	{"passthrough-iopoll", emu.Options{Path: ngPath, NVMe: true, IOPoll: true}},
}

const (
	benchKeys  = 2048
	benchBatch = 16   // one Do of 16 ops: the sidecar's MGET of cold keys
	benchValue = 4000 // an extent: one aligned 4 KiB read per Retrieve
)

func benchOpen(b *testing.B, o emu.Options) *emu.Namespace {
	wipe(b)
	o.Capacity, o.RegionBytes, o.MaxValueBytes, o.ReadSlots, o.RingEntries = 32<<20, 1<<20, 64<<10, 64, 128
	o.CheckpointPath = "-"
	ns, err := emu.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ns.Close() })
	return ns
}

func benchKey(i int) []byte {
	var k [8]byte
	binary.LittleEndian.PutUint64(k[:], uint64(i))
	return k[:]
}

// BenchmarkNVMeRetrieve: batches of 16 Retrieves of 4000-byte values
// (random keys of 2048) on each target, benchRounds interleaved rounds.
func BenchmarkNVMeRetrieve(b *testing.B) {
	rounds(b, func(b *testing.B, ns *emu.Namespace) {
		v := make([]byte, benchValue)
		for i := range benchKeys {
			if err := ns.Store(ctx, benchKey(i), v, 0); err != nil {
				b.Fatal(err)
			}
		}
		if err := ns.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		ops := make([]*nvmekv.Op, benchBatch)
		for i := range ops {
			ops[i] = &nvmekv.Op{Code: nvmekv.OpRetrieve, Buf: make([]byte, benchValue)}
		}
		st0 := ns.Stats()
		b.SetBytes(benchBatch * benchValue)
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			for _, op := range ops {
				op.Key, op.Err = benchKey((n*7919)%benchKeys), nil
				n++
			}
			if err := ns.Do(ctx, ops...); err != nil {
				b.Fatal(err)
			}
		}
		st := ns.Stats()
		b.ReportMetric(float64(st.DiskReads-st0.DiskReads)/float64(b.N), "diskreads/op")
	})
}

// BenchmarkNVMeStore: batches of 16 Stores of 4000-byte values on each
// target, a Flush (NVM Flush or fdatasync) every 64 batches and at the end.
func BenchmarkNVMeStore(b *testing.B) {
	rounds(b, func(b *testing.B, ns *emu.Namespace) {
		v := make([]byte, benchValue)
		ops := make([]*nvmekv.Op, benchBatch)
		for i := range ops {
			ops[i] = &nvmekv.Op{Code: nvmekv.OpStore, Buf: v}
		}
		b.SetBytes(benchBatch * benchValue)
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			for _, op := range ops {
				op.Key, op.Err = benchKey(n%benchKeys), nil
				n++
			}
			if err := ns.Do(ctx, ops...); err != nil {
				b.Fatal(err)
			}
			if n%(64*benchBatch) == 0 {
				if err := ns.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := ns.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	})
}

// benchRounds is how many interleaved rounds rounds runs.
const benchRounds = 5

// rounds runs bench on a fresh namespace on each target, benchRounds
// interleaved rounds (round=R/target), for a median and a range.
func rounds(b *testing.B, bench func(b *testing.B, ns *emu.Namespace)) {
	requireGuest(b)
	for round := range benchRounds {
		for _, tg := range benchTargets {
			b.Run(fmt.Sprintf("round=%d/%s", round, tg.name), func(b *testing.B) { bench(b, benchOpen(b, tg.opts)) })
		}
	}
}
