package nvmens

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/vmtest"
)

// pollQueues is the NVMe driver's nvme.poll_queues (vmtest.ModuleParams).
func pollQueues(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/sys/module/nvme/parameters/poll_queues")
	if err != nil {
		t.Fatalf("nvme.poll_queues: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("nvme.poll_queues %q: %v", b, err)
	}
	return n
}

// TestNVMeIOPollOnPollQueues: with the driver's poll queues (the guest
// loads nvme with poll_queues=1, and the namespace's queue says io_poll
// 1), a namespace opened with IOPoll reads every value through polled
// passthrough: each read runs on a polled ring (Stats.BatchReads), uses
// registered buffers, and completes without a single interrupt on the
// controller's I/O queues, since a poll queue has none and the polled
// ring reaps it; the same reads without IOPoll take interrupts (the
// control, which shows the count can move). Before Linux 6.2 the
// namespace refuses IOPoll on poll queues instead.
func TestNVMeIOPollOnPollQueues(t *testing.T) {
	requireGuest(t)
	if n := pollQueues(t); n < 1 {
		t.Fatalf("nvme.poll_queues = %d: the guest should load nvme with poll queues (vmtest.ModuleParams)", n)
	}
	if !vmtest.KernelAtLeast(6, 2) {
		// Polled passthrough on a poll queue never completes before 6.2:
		// the namespace refuses it up front (dev.NVMe.CheckIOPoll).
		wipe(t)
		o := nsOptions()
		o.IOPoll = true
		ns, err := emu.Open(o)
		if err == nil {
			ns.Close()
			t.Fatal("IOPoll on poll queues before Linux 6.2: Open succeeded, want a refusal")
		}
		t.Logf("before 6.2, refused as expected: %v", err)
		return
	}
	if b, err := os.ReadFile("/sys/block/nvme1n1/queue/io_poll"); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Fatalf("/sys/block/nvme1n1/queue/io_poll = %q, %v: the namespace's queue has no poll queue", b, err)
	}
	wipe(t)
	o := nsOptions()
	const keys, value = 96, 4000 // 4000 bytes: an extent, one aligned 4 KiB read each
	{
		ns, err := emu.Open(o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range keys {
			if err := ns.Store(ctx, []byte(fmt.Sprintf("p%03d", i)), val(i, value), 0); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 40 { // 2.4 MiB more: the keys' region is read from the device after the reopen
			if err := ns.Store(ctx, []byte(fmt.Sprintf("f%03d", i)), val(i, 60000), 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := ns.Close(); err != nil {
			t.Fatal(err)
		}
	}
	read := func(iopoll bool) (reads, batch, irqs uint64, fixed bool) {
		t.Helper()
		o := o
		o.IOPoll = iopoll
		ns, err := emu.Open(o) // a scan: nothing is in a write buffer but the last region
		if err != nil {
			t.Fatal(err)
		}
		defer ns.Close()
		st0 := ns.Stats()
		irq0, err := vmtest.QueueInterrupts("nvme1")
		if err != nil {
			t.Fatal(err)
		}
		for round := range 4 {
			ops := make([]*nvmekv.Op, keys)
			for i := range ops {
				ops[i] = &nvmekv.Op{Code: nvmekv.OpRetrieve, Key: []byte(fmt.Sprintf("p%03d", (i+round*7)%keys)), Buf: make([]byte, value+100)}
			}
			if err := ns.Do(ctx, ops...); err != nil {
				t.Fatal(err)
			}
			for i, op := range ops {
				if k := (i + round*7) % keys; op.Err != nil || int(op.DW0) != value || !bytes.Equal(op.Buf[:value], val(k, value)) {
					t.Fatalf("iopoll %v: Retrieve p%03d: %v, %d bytes", iopoll, k, op.Err, op.DW0)
				}
			}
		}
		irq1, err := vmtest.QueueInterrupts("nvme1")
		if err != nil {
			t.Fatal(err)
		}
		st := ns.Stats()
		return st.DiskReads - st0.DiskReads, st.BatchReads - st0.BatchReads, irq1 - irq0, st.Fixed
	}
	reads, batch, irqs, fixed := read(true)
	t.Logf("IOPoll: %d disk reads, %d on polled rings, %d interrupts on nvme1's I/O queues, registered buffers %v", reads, batch, irqs, fixed)
	if reads < keys || batch != reads || irqs != 0 || !fixed {
		t.Fatalf("IOPoll: %d disk reads, %d on polled rings, %d interrupts, fixed %v; want every read polled, registered, no interrupt", reads, batch, irqs, fixed)
	}
	reads, _, irqs, _ = read(false)
	t.Logf("interrupt-driven: %d disk reads, %d interrupts on nvme1's I/O queues", reads, irqs)
	if reads < keys || irqs == 0 {
		t.Fatalf("without IOPoll: %d disk reads and %d interrupts; the reads should have taken interrupts", reads, irqs)
	}
}
