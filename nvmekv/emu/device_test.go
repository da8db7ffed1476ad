package emu

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/uring"
)

// smallXfer is a file whose largest transfer is small, like an NVMe
// namespace's MDTS: it fails any asynchronous transfer larger than that
// (so one that was not split is caught) and counts the rest.
type smallXfer struct {
	*dev.File
	max      int
	largest  atomic.Int64
	tooLarge atomic.Int64
}

func (s *smallXfer) MaxTransfer() int { return s.max }

func (s *smallXfer) Refuse(write bool, off int64, n int) (int32, bool) {
	if n > s.max {
		s.tooLarge.Add(1)
		return -int32(syscall.E2BIG), true
	}
	for {
		l := s.largest.Load()
		if int64(n) <= l || s.largest.CompareAndSwap(l, int64(n)) {
			break
		}
	}
	return 0, false
}

func (s *smallXfer) ReadAt(b []byte, off int64) error {
	for len(b) > 0 {
		n := min(len(b), s.max)
		if err := s.File.ReadAt(b[:n], off); err != nil {
			return err
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// TestDeviceSplitsTransfers: with a device whose largest transfer is 8
// KiB, region writes, region reads (reclaim, scan) and a 64 KiB value's
// read are all split, and every key comes back, also after a scan.
func TestDeviceSplitsTransfers(t *testing.T) {
	o := testOptions(t)
	o.MaxValueBytes = 40 << 10
	f, err := dev.OpenFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	sx := &smallXfer{File: f, max: 8 << 10}
	o.Device = sx
	ns := mustOpen(t, o)
	want := map[string][]byte{}
	var keys []string
	for i := 0; i < 60; i++ { // ~1.2 MiB through a 1 MiB log: reclaims
		k := fmt.Sprintf("k%03d", i)
		v := bytes.Repeat([]byte{byte(i)}, 1000+i*331)
		if i%7 == 0 {
			v = bytes.Repeat([]byte{byte(i)}, 40<<10) // read in pieces (ReadAt)
		}
		if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
			t.Fatal(err)
		}
		want[k] = v
		keys = append(keys, k)
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	live := func(ns *Namespace) []string {
		var ks []string
		for _, k := range keys {
			if ok, _ := ns.Exist(ctx, []byte(k)); ok {
				ks = append(ks, k)
			}
		}
		return ks
	}
	ks := live(ns)
	if len(ks) < 10 || ns.Stats().Reclaimed == 0 {
		t.Fatalf("%d keys live, %d regions reclaimed: the test wants both", len(ks), ns.Stats().Reclaimed)
	}
	retrieveAll(t, ns, ks, want)
	o.CheckpointPath = "-"
	ns.Close()
	f, err = dev.OpenFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	sx2 := &smallXfer{File: f, max: 8 << 10}
	o.Device = sx2
	ns = mustOpen(t, o)
	defer ns.Close()
	if ns.Stats().Recovered != "scan" {
		t.Fatalf("recovered by %s, want scan", ns.Stats().Recovered)
	}
	if got := live(ns); len(got) != len(ks) {
		t.Fatalf("after the scan %d keys, before %d", len(got), len(ks))
	}
	retrieveAll(t, ns, ks, want)
	for _, s := range []*smallXfer{sx, sx2} {
		if s.tooLarge.Load() != 0 || s.largest.Load() != 8<<10 {
			t.Fatalf("%d transfers larger than 8 KiB reached the device; the largest was %d", s.tooLarge.Load(), s.largest.Load())
		}
	}
}

// TestDeviceFaults: a dev.Fault under the namespace. A read error is a
// clear error naming the path and the errno, a short read is Unrecovered
// Error (SC 0x88), a failed sync makes Flush fail and the namespace
// read-only with ErrReadOnly, and ENOSPC on a write likewise; the
// namespace keeps serving reads of what it had.
func TestDeviceFaults(t *testing.T) {
	var mode atomic.Int32 // 0 none, 1 EIO reads, 2 short reads, 3 EIO sync, 4 ENOSPC writes
	open := func(o Options) *Namespace {
		f, err := dev.OpenFile(o.Path)
		if err != nil {
			t.Fatal(err)
		}
		o.Device = dev.NewFault(f, func(op dev.Op, off int64, n int) (int32, bool) {
			switch mode.Load() {
			case 1:
				return -int32(syscall.EIO), op == dev.OpRead
			case 2:
				return int32(n / 2), op == dev.OpRead
			case 3:
				return -int32(syscall.EIO), op == dev.OpSync
			case 4:
				return -int32(syscall.ENOSPC), op == dev.OpWrite
			}
			return 0, false
		})
		return mustOpen(t, o)
	}
	o := testOptions(t)
	ns := open(o)
	for i := 0; i < 120; i++ { // more than the 3 write buffers: the first ones are on disk only
		if err := ns.Store(ctx, []byte(fmt.Sprintf("f%06d", i)), bytes.Repeat([]byte{byte(i)}, 3000), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3000)
	mode.Store(1)
	_, err := ns.Retrieve(ctx, []byte("f000000"), buf)
	if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), o.Path) {
		t.Fatalf("Retrieve with the device failing reads = %v, want EIO naming %s", err, o.Path)
	}
	mode.Store(2)
	_, err = ns.Retrieve(ctx, []byte("f000001"), buf)
	var se *nvmekv.StatusError
	if !errors.As(err, &se) || se.SC != nvmekv.SCUnrecovered {
		t.Fatalf("Retrieve with a short read = %v, want Unrecovered Error", err)
	}
	mode.Store(0)
	checkN(t, ns, 0, 120, 3000)
	mode.Store(3)
	if err := ns.Store(ctx, []byte("x"), []byte("y"), 0); err != nil {
		t.Fatal(err)
	}
	if err := ns.Flush(ctx); !errors.Is(err, syscall.EIO) || !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Flush with the device failing syncs = %v, want ErrReadOnly wrapping EIO", err)
	}
	if err := ns.Store(ctx, []byte("z"), []byte("y"), 0); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Store after a failed sync = %v, want ErrReadOnly", err)
	}
	mode.Store(0)
	checkN(t, ns, 0, 120, 3000)
	ns.Close()

	ns = open(o)
	defer ns.Close()
	checkN(t, ns, 0, 120, 3000)
	mode.Store(4)
	if err := ns.Store(ctx, []byte("big"), make([]byte, 4000), 0); err != nil {
		t.Fatal(err)
	}
	if err := ns.Flush(ctx); !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Flush with the device out of space = %v, want ErrReadOnly wrapping ENOSPC", err)
	}
	mode.Store(0)
	checkN(t, ns, 0, 120, 3000)
}

// TestDeviceRingOptions: the device sets what its SQEs need on every ring
// (an NVMe namespace asks for SQE128|CQE32).
func TestDeviceRingOptions(t *testing.T) {
	o := testOptions(t)
	f, err := dev.OpenFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	o.Device = bigSQE{f}
	ns := mustOpen(t, o)
	defer ns.Close()
	if !ns.rg.Main().SQE128() || !ns.rg.Main().CQE32() {
		t.Fatal("main ring is not SQE128|CQE32")
	}
	if ns.rg.Quick() != nil && !ns.rg.Quick().SQE128() {
		t.Fatal("quick ring is not SQE128")
	}
	if err := ns.Store(ctx, []byte("a"), []byte("b"), 0); err != nil {
		t.Fatal(err)
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

type bigSQE struct{ *dev.File }

func (b bigSQE) Ring(o *uring.Options) { o.SQE128, o.CQE32 = true, true }
