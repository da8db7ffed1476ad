package emu

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tiercache/tiercache/nvmekv"
)

func storeN(t *testing.T, ns *Namespace, from, to, size int) error {
	t.Helper()
	for i := from; i < to; i++ {
		if err := ns.Store(ctx, []byte(fmt.Sprintf("f%06d", i)), bytes.Repeat([]byte{byte(i)}, size), 0); err != nil {
			return err
		}
	}
	return nil
}

func checkN(t *testing.T, ns *Namespace, from, to, size int) {
	t.Helper()
	buf := make([]byte, size)
	for i := from; i < to; i++ {
		n, err := ns.Retrieve(ctx, []byte(fmt.Sprintf("f%06d", i)), buf)
		if err != nil || n != size || buf[0] != byte(i) || buf[n-1] != byte(i) {
			t.Fatalf("durable key %d: n=%d err=%v", i, n, err)
		}
	}
}

// TestInjectedEIO: a region write fails with EIO; Flush reports it clearly,
// Store then fails with ErrReadOnly, and flushed data stays readable, also
// after reopening.
func TestInjectedEIO(t *testing.T) {
	o := testOptions(t)
	var failWrites bool
	o.Fault = func(write bool, off int64, n int) syscall.Errno {
		if write && failWrites {
			return syscall.EIO
		}
		return 0
	}
	ns := mustOpen(t, o)
	if err := storeN(t, ns, 0, 100, 1000); err != nil {
		t.Fatal(err)
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if f := ns.Stats().Failed; f != nil {
		t.Fatalf("Stats().Failed = %v before any failure", f)
	}
	failWrites = true
	storeN(t, ns, 100, 120, 1000)
	err := ns.Flush(ctx)
	if !errors.Is(err, syscall.EIO) || !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), o.Path) {
		t.Fatalf("Flush after EIO = %v", err)
	}
	if err := ns.Store(ctx, []byte("after"), []byte("x"), 0); !errors.Is(err, syscall.EIO) || !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Store after EIO = %v", err)
	}
	if f := ns.Stats().Failed; !errors.Is(f, syscall.EIO) || !strings.Contains(f.Error(), o.Path) {
		t.Fatalf("Stats().Failed = %v after a failed region write, want the EIO naming %s", f, o.Path)
	}
	checkN(t, ns, 0, 100, 1000)
	ns.Close()
	failWrites = false
	ns = mustOpen(t, o)
	checkN(t, ns, 0, 100, 1000)
	ns.Close()
}

// TestInjectedReadEIO: a failed disk read is a clear error, not a miss.
func TestInjectedReadEIO(t *testing.T) {
	o := testOptions(t)
	var failReads bool
	o.Fault = func(write bool, off int64, n int) syscall.Errno {
		if !write && failReads {
			return syscall.EIO
		}
		return 0
	}
	ns := mustOpen(t, o)
	defer ns.Close()
	storeN(t, ns, 0, 300, 1000) // several regions: the first ones are on disk only
	ns.Flush(ctx)
	failReads = true
	_, err := ns.Retrieve(ctx, []byte("f000000"), make([]byte, 1000))
	if !errors.Is(err, syscall.EIO) || errors.Is(err, nvmekv.ErrKeyNotFound) {
		t.Fatalf("Retrieve with EIO = %v", err)
	}
}

// TestENOSPC fills a 2 MiB tmpfs under a sparse (Options.Sparse) 4 MiB
// store: the failing write gives ENOSPC, flushed data stays readable and
// survives reopening.
func TestENOSPC(t *testing.T) {
	dir := mountTmpfs(t, "2m")
	o := Options{Path: dir + "/ns", Capacity: 64 * (64 << 10), RegionBytes: 64 << 10, MaxValueBytes: 4096, ReadSlots: 8, RingEntries: 64,
		CheckpointPath: "-", Sparse: true}
	ns := mustOpen(t, o)
	if err := storeN(t, ns, 0, 200, 2000); err != nil {
		t.Fatal(err)
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatalf("flush of the first 400 KB: %v", err)
	}
	var err error
	for i := 200; i < 5000 && err == nil; i += 100 {
		if err = storeN(t, ns, i, i+100, 2000); err == nil {
			err = ns.Flush(ctx)
		}
	}
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), o.Path) {
		t.Fatalf("filling a 2 MiB tmpfs: %v, want ENOSPC naming %s", err, o.Path)
	}
	checkN(t, ns, 0, 200, 2000)
	ns.Close()
	ns = mustOpen(t, o)
	checkN(t, ns, 0, 200, 2000)
	ns.Close()
}

// mountTmpfs mounts a tmpfs of size bytes on a temp dir (root only).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		skipf(t, "mounting a size-limited tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		skipf(t, "mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestReserve (E14) on a 2 MiB tmpfs: a new 4 MiB store fails Open with
// ENOSPC naming the path and the free space, and leaves the filesystem
// usable; a 1 MiB store gets all its blocks at Open; an existing sparse
// store that no longer fits opens with a warning and its data.
func TestReserve(t *testing.T) {
	dir := mountTmpfs(t, "2m")
	o := Options{Path: dir + "/big", Capacity: 64 * (64 << 10), RegionBytes: 64 << 10, MaxValueBytes: 4096, ReadSlots: 8, RingEntries: 64, CheckpointPath: "-"}
	ns, err := Open(o)
	if err == nil {
		ns.Close()
		t.Fatal("a 4 MiB store opened on a 2 MiB tmpfs")
	}
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), o.Path) || !strings.Contains(err.Error(), "free") {
		t.Fatalf("Open of a 4 MiB store on a 2 MiB tmpfs: %v, want ENOSPC naming the path and the free space", err)
	}
	if fi, err := os.Stat(o.Path); err != nil || fi.Size() != 0 {
		t.Fatalf("the refused store's file: %v, %v; want it left empty", fi, err)
	}
	os.Remove(o.Path)

	small := o
	small.Path, small.Capacity = dir+"/small", 16*(64<<10)
	ns = mustOpen(t, small)
	var st syscall.Stat_t
	if err := syscall.Stat(small.Path, &st); err != nil {
		t.Fatal(err)
	}
	if want := int64(4096 + 16*(64<<10)); st.Blocks*512 < want {
		t.Errorf("a 1 MiB store holds %d bytes of blocks after Open, want its %d reserved", st.Blocks*512, want)
	}
	if err := storeN(t, ns, 0, 100, 2000); err != nil {
		t.Fatal(err)
	}
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(small.Path)

	sparse := o
	sparse.Sparse = true
	ns = mustOpen(t, sparse) // sparse: opens though it could not be reserved
	if err := storeN(t, ns, 0, 100, 2000); err != nil {
		t.Fatal(err)
	}
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	again := o // reserving now, as a default Open does
	again.Logger = zap.New(core)
	ns = mustOpen(t, again)
	defer ns.Close()
	checkN(t, ns, 0, 100, 2000)
	if logs.FilterMessageSnippet("cannot reserve").Len() != 1 {
		t.Errorf("reopening a sparse store that cannot be reserved logged %v, want one warning", logs.All())
	}
}

// TestLoopDevice runs the namespace on a loop block device, lone
// Retrieves and a batch of 64 (on the batch ring) alike.
func TestLoopDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		skipf(t, "losetup needs root")
	}
	img := t.TempDir() + "/loop.img"
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Truncate(img, 8<<20)
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		skipf(t, "losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	defer exec.Command("losetup", "-d", dev).Run()
	time.Sleep(50 * time.Millisecond)
	o := Options{Path: dev, RegionBytes: 64 << 10, MaxValueBytes: 4096, ReadSlots: 64, RingEntries: 64}
	ns := mustOpen(t, o)
	if lim := ns.Limits(); lim.Capacity != (8<<20-4096)/(64<<10)*(64<<10) {
		t.Fatalf("capacity %d on an 8 MiB device", lim.Capacity)
	}
	if err := storeN(t, ns, 0, 300, 1500); err != nil {
		t.Fatal(err)
	}
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	ns = mustOpen(t, o)
	defer ns.Close()
	if st := ns.Stats(); st.Recovered != "scan" || !st.Direct {
		t.Fatalf("block device reopened by %q direct=%v, want scan with O_DIRECT", st.Recovered, st.Direct)
	}
	checkN(t, ns, 0, 300, 1500)
	ops := make([]*nvmekv.Op, 64)
	for i := range ops {
		ops[i] = &nvmekv.Op{Code: nvmekv.OpRetrieve, Key: []byte(fmt.Sprintf("f%06d", i)), Buf: make([]byte, 1500)}
	}
	before := ns.Stats().BatchReads
	if err := ns.Do(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	for i, op := range ops {
		if op.Err != nil || op.DW0 != 1500 || op.Buf[0] != byte(i) || op.Buf[1499] != byte(i) {
			t.Fatalf("batch Retrieve of key %d: %v (%d bytes)", i, op.Err, op.DW0)
		}
	}
	if got := ns.Stats().BatchReads - before; got != 64 {
		t.Fatalf("%d of a batch of 64 disk reads ran on the batch ring, want 64", got)
	}
}

// TestCacheReclaim: a full log reclaims its oldest region and reports each
// dropped key once; Strict mode answers Capacity Exceeded instead.
func TestCacheReclaim(t *testing.T) {
	o := testOptions(t) // 16 regions of 64 KiB
	reclaimed := map[string]int{}
	o.OnReclaim = func(k [16]byte) { reclaimed[string(bytes.TrimRight(k[:], "\x00"))]++ }
	ns := mustOpen(t, o)
	if err := storeN(t, ns, 0, 2000, 1000); err != nil { // ~2 MB into 1 MiB
		t.Fatal(err)
	}
	st := ns.Stats()
	if st.Reclaimed == 0 || len(reclaimed) == 0 {
		t.Fatalf("no reclaim after 2 MB into 1 MiB: %+v", st)
	}
	if st.ReclaimedKeys != uint64(len(reclaimed)) {
		t.Errorf("Stats.ReclaimedKeys %d, but OnReclaim was called for %d keys", st.ReclaimedKeys, len(reclaimed))
	}
	buf := make([]byte, 1000)
	for i := 0; i < 2000; i++ {
		k := fmt.Sprintf("f%06d", i)
		_, err := ns.Retrieve(ctx, []byte(k), buf)
		if n := reclaimed[k]; n > 1 || (n == 1) != errors.Is(err, nvmekv.ErrKeyNotFound) {
			t.Fatalf("key %s reclaimed %d times, retrieve: %v", k, n, err)
		}
	}
	ns.Close()

	o = testOptions(t)
	o.Mode = Strict
	ns = mustOpen(t, o)
	defer ns.Close()
	err := storeN(t, ns, 0, 2000, 1000)
	if !errors.Is(err, nvmekv.ErrCapacityExceeded) {
		t.Fatalf("strict mode overflow: %v", err)
	}
	var se *nvmekv.StatusError
	if !errors.As(err, &se) || se.SC != 0x81 || !se.DNR {
		t.Fatalf("strict mode status %+v", se)
	}
}

// TestControllerStatus checks the controller's answers to edge commands.
func TestControllerStatus(t *testing.T) {
	ns := mustOpen(t, testOptions(t))
	defer ns.Close()
	k := []byte("key")
	if err := ns.Store(ctx, k, []byte("v1"), nvmekv.StoreMustExist); !errors.Is(err, nvmekv.ErrKeyNotFound) {
		t.Fatalf("must-exist on a new key: %v", err)
	}
	if err := ns.Store(ctx, k, []byte("v1"), nvmekv.StoreMustNotExist); err != nil {
		t.Fatal(err)
	}
	if err := ns.Store(ctx, k, []byte("v2"), nvmekv.StoreMustNotExist); !errors.Is(err, nvmekv.ErrKeyExists) {
		t.Fatalf("must-not-exist on an existing key: %v", err)
	}
	if err := ns.Store(ctx, k, make([]byte, 4097), 0); !errors.Is(err, nvmekv.ErrInvalidValueSize) {
		t.Fatalf("oversized value: %v", err)
	}
	if err := ns.Store(ctx, make([]byte, 17), nil, 0); !errors.Is(err, nvmekv.ErrInvalidKeySize) {
		t.Fatalf("17-byte key: %v", err)
	}
	small := make([]byte, 1)
	if n, err := ns.Retrieve(ctx, k, small); err != nil || n != 2 || small[0] != 'v' {
		t.Fatalf("short buffer retrieve: n=%d err=%v", n, err)
	}
	if ok, err := ns.Exist(ctx, k); !ok || err != nil {
		t.Fatalf("exist: %v %v", ok, err)
	}
	// A failed link breaks the rest of its chain.
	ops := []*nvmekv.Op{{Code: nvmekv.OpDelete, Key: []byte("nope"), Link: true}, {Code: nvmekv.OpStore, Key: []byte("b"), Buf: []byte("x")}}
	ns.Do(ctx, ops...)
	if !errors.Is(ops[0].Err, nvmekv.ErrKeyNotFound) || !errors.Is(ops[1].Err, nvmekv.ErrCanceled) {
		t.Fatalf("chain: %v / %v", ops[0].Err, ops[1].Err)
	}
	ns.Store(ctx, []byte("a"), nil, 0)
	ns.Store(ctx, []byte("c"), nil, 0)
	keys, total, err := ns.List(ctx, []byte("b"), 64)
	if err != nil || total != 2 || len(keys) != 2 || string(keys[0]) != "c" || string(keys[1]) != "key" {
		t.Fatalf("list from b: %q total %d err %v", keys, total, err)
	}
	if err := ns.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	if ok, _ := ns.Exist(ctx, k); ok {
		t.Fatal("deleted key exists")
	}
	// Identify through the admin path parses back to the limits.
	id := nvmekv.EncodeIdentify(1, nvmekv.CNSIOCSNamespace, 0, nvmekv.CSIKV)
	raw, buf := id.Bytes(), make([]byte, 4096)
	if res, err := ns.Admin(&raw, buf); res != 0 || err != nil {
		t.Fatal(res, err)
	}
	kn, _ := nvmekv.ParseKVNamespace(buf)
	if f := kn.Format(); f.MaxKeyLen != 16 || f.MaxValueLen != 4096 || kn.Size != 16*(64<<10) {
		t.Fatalf("identify %+v", kn)
	}
	id = nvmekv.EncodeIdentify(1, nvmekv.CNSNSDescriptorList, 0, 0)
	raw = id.Bytes()
	ns.Admin(&raw, buf)
	ds, _ := nvmekv.ParseNSDescriptors(buf)
	if nvmekv.CSIFromDescriptors(ds) != nvmekv.CSIKV {
		t.Fatal("emulated namespace does not report CSI 1")
	}
}
