package nvmens

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/vmtest"
)

var ctx = context.Background()

func nsOptions() emu.Options {
	return emu.Options{Path: ngPath, NVMe: true, Capacity: 8 << 20, RegionBytes: 1 << 20, MaxValueBytes: 768 << 10,
		ReadSlots: 32, RingEntries: 128}
}

func val(i, n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(i), 7))
	for j := range b {
		b[j] = byte(r.Uint32())
	}
	return b
}

// sizes: inline records, a 4 KiB-block extent, and a value larger than
// QEMU's largest transfer (MDTS 7: 512 KiB), read in pieces.
var sizes = []int{100, 3000, 3600, 4000, 9000, 600 << 10}

// TestNVMeNamespace: the emulated namespace on /dev/ng1n1 through NVM
// passthrough (plain, with polled read rings on the driver's poll queues,
// with an SQPOLL main ring): Store, Retrieve one at a time and in
// batches, Flush, then a reopen that scans the namespace and finds every
// key; then the log wraps, reclaimed regions are deallocated (their
// unwritten blocks read as zeros). On Linux 6.2 and later every transfer
// uses registered buffers (IORING_URING_CMD_FIXED, Stats.Fixed); before,
// the namespace falls back to plain addresses, and refuses IOPOLL while
// the driver has poll queues.
func TestNVMeNamespace(t *testing.T) {
	requireGuest(t)
	newKernel := vmtest.KernelAtLeast(6, 2)
	for _, tc := range []struct {
		name           string
		iopoll, sqpoll bool
	}{{"plain", false, false}, {"iopoll", true, false}, {"sqpoll", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			wipe(t)
			o := nsOptions()
			o.IOPoll, o.SQPoll = tc.iopoll, tc.sqpoll
			ns, err := emu.Open(o)
			if tc.iopoll && !newKernel && pollQueues(t) > 0 {
				if err == nil || !strings.Contains(err.Error(), "poll") {
					t.Fatalf("IOPoll with poll queues before Linux 6.2: Open = %v, want a refusal naming polling", err)
				}
				t.Logf("before 6.2, as expected: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			want := map[string][]byte{}
			for i := 0; i < 24; i++ {
				k := fmt.Sprintf("k%03d", i)
				v := val(i, sizes[i%len(sizes)])
				if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
					t.Fatalf("Store %s (%d bytes): %v", k, len(v), err)
				}
				keys, want[k] = append(keys, k), v
			}
			if err := ns.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			check := func(ns *emu.Namespace, what string) {
				t.Helper()
				buf := make([]byte, 768<<10)
				for _, k := range keys {
					n, err := ns.Retrieve(ctx, []byte(k), buf)
					if err != nil || !bytes.Equal(buf[:n], want[k]) {
						t.Fatalf("%s: Retrieve %s = %d bytes, %v; want the %d stored", what, k, n, err, len(want[k]))
					}
				}
				ops := make([]*nvmekv.Op, 0, len(keys))
				for _, k := range keys {
					ops = append(ops, &nvmekv.Op{Code: nvmekv.OpRetrieve, Key: []byte(k), Buf: make([]byte, len(want[k]))})
				}
				if err := ns.Do(ctx, ops...); err != nil {
					t.Fatalf("%s: batch of %d Retrieves: %v", what, len(ops), err)
				}
				for i, op := range ops {
					if op.Err != nil || !bytes.Equal(op.Buf, want[keys[i]]) {
						t.Fatalf("%s: batched Retrieve %s: %v", what, keys[i], op.Err)
					}
				}
			}
			check(ns, "open")
			st := ns.Stats()
			t.Logf("open: %d disk reads (%d batch/polled, %d quick), %d region writes, %d syncs, registered buffers %v", st.DiskReads, st.BatchReads, st.QuickReads, st.RegionWrites, st.Syncs, st.Fixed)
			if tc.iopoll && st.BatchReads == 0 {
				t.Fatalf("IOPoll: no read ran on a polled ring: %+v", st)
			}
			if st.Fixed != newKernel {
				t.Fatalf("registered buffers in use: %v on a kernel where they work: %v (IORING_URING_CMD_FIXED with a transfer shorter than its buffer fails before 6.2)", st.Fixed, newKernel)
			}
			if err := ns.Close(); err != nil {
				t.Fatal(err)
			}
			ns, err = emu.Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer ns.Close()
			if r := ns.Stats().Recovered; r != "scan" {
				t.Fatalf("reopened by %s, want scan (a namespace has no checkpoint file)", r)
			}
			check(ns, "reopened")
			if tc.name != "plain" {
				return
			}
			// Wrap the log (8 regions): region 0 is reclaimed, deallocated and
			// written again from its start.
			for i := 0; ns.Stats().Reclaimed == 0; i++ {
				if err := ns.Store(ctx, []byte(fmt.Sprintf("w%05d", i)), val(i, 60000), 0); err != nil { // inline (no extent at the region end)
					t.Fatal(err)
				}
				if i > 10000 {
					t.Fatal("the log never wrapped")
				}
			}
			if err := ns.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			d, err := dev.OpenNVMe(ngPath, dev.NVMeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			tail := make([]byte, 64<<10)
			if err := d.ReadAt(tail, 4096+int64(o.RegionBytes)-int64(len(tail))); err != nil {
				t.Fatal(err)
			}
			if !d.DeallocatedReadsZero() {
				t.Fatal("the namespace does not read deallocated blocks as zeros (DLFEAT)")
			}
			if !bytes.Equal(tail, make([]byte, len(tail))) {
				t.Fatal("the end of reclaimed region 0 still holds old bytes: it was not deallocated")
			}
		})
	}
}

// TestNVMeReadErrorIsClear: a device read error (dev.Fault under the NVMe
// device) fails that Retrieve with an error naming the device and EIO; the
// namespace keeps serving, and a failed NVM Flush makes it read-only with
// a clear error, its data still readable.
func TestNVMeReadErrorIsClear(t *testing.T) {
	requireGuest(t)
	wipe(t)
	d, err := dev.OpenNVMe(ngPath, dev.NVMeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var fail atomic.Int32 // 1 reads, 2 syncs
	o := nsOptions()
	o.Device = dev.NewFault(d, func(op dev.Op, off int64, n int) (int32, bool) {
		return -int32(syscall.EIO), fail.Load() == 1 && (op == dev.OpRead || op == dev.OpReadAt) || fail.Load() == 2 && op == dev.OpSync
	})
	ns, err := emu.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	for i := 0; i < 8; i++ { // 4 MiB: the first values are on the device only
		if err := ns.Store(ctx, []byte(fmt.Sprintf("k%d", i)), val(i, 512<<10), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512<<10)
	fail.Store(1)
	_, err = ns.Retrieve(ctx, []byte("k0"), buf)
	if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), ngPath) {
		t.Fatalf("Retrieve with the device failing reads = %v, want EIO naming %s", err, ngPath)
	}
	t.Logf("read error: %v", err)
	fail.Store(0)
	if n, err := ns.Retrieve(ctx, []byte("k0"), buf); err != nil || !bytes.Equal(buf[:n], val(0, 512<<10)) {
		t.Fatalf("Retrieve after the fault: %d, %v", n, err)
	}
	fail.Store(2)
	if err := ns.Store(ctx, []byte("x"), []byte("y"), 0); err != nil {
		t.Fatal(err)
	}
	if err := ns.Flush(ctx); !errors.Is(err, emu.ErrReadOnly) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Flush with NVM Flush failing = %v, want ErrReadOnly wrapping EIO", err)
	}
	fail.Store(0)
	if n, err := ns.Retrieve(ctx, []byte("k1"), buf); err != nil || !bytes.Equal(buf[:n], val(1, 512<<10)) {
		t.Fatalf("Retrieve on the read-only namespace: %d, %v", n, err)
	}
}
