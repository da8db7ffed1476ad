package emu

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// clearKeyOf names key i of round r.
func clearKeyOf(r, i int) []byte { return []byte(fmt.Sprintf("r%d-%d", r, i)) }

// storeRound stores n keys of round r in batches of 256 commands: one in
// 50 with a 4096-byte value (an extent), the others 24 bytes.
func storeRound(t testing.TB, ns *Namespace, r, n int) error {
	t.Helper()
	ops := make([]*nvmekv.Op, 0, 256)
	for i := 0; i < n; i++ {
		size := 24
		if i%50 == 0 {
			size = 4096
		}
		v := make([]byte, size)
		copy(v, fmt.Sprintf("%d/%d", r, i))
		ops = append(ops, &nvmekv.Op{Code: nvmekv.OpStore, Key: clearKeyOf(r, i), Buf: v})
		if len(ops) == cap(ops) || i == n-1 {
			if err := ns.Do(ctx, ops...); err != nil {
				return err
			}
			for _, op := range ops {
				if op.Err != nil {
					return op.Err
				}
			}
			ops = ops[:0]
		}
	}
	return nil
}

// roundPresent counts the keys of round r that Retrieve finds with their
// value; every one it does not find must answer Key Does Not Exist.
func roundPresent(t testing.TB, ns *Namespace, r, n int) int {
	t.Helper()
	found := 0
	ops := make([]*nvmekv.Op, 0, 256)
	check := func() {
		if err := ns.Do(ctx, ops...); err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			switch {
			case op.Err == nil:
				want := strings.SplitN(string(op.Key[1:]), "-", 2)
				if got := string(op.Buf[:len(want[0])+1+len(want[1])]); got != want[0]+"/"+want[1] {
					t.Fatalf("key %s holds %q", op.Key, got)
				}
				found++
			case !errors.Is(op.Err, nvmekv.ErrKeyNotFound):
				t.Fatalf("Retrieve %s: %v", op.Key, op.Err)
			}
		}
		ops = ops[:0]
	}
	for i := 0; i < n; i++ {
		ops = append(ops, &nvmekv.Op{Code: nvmekv.OpRetrieve, Key: clearKeyOf(r, i), Buf: make([]byte, 4096)})
		if len(ops) == cap(ops) {
			check()
		}
	}
	check()
	return found
}

// TestClearNamespace: E34 through the namespace, on a store file. Clear
// of 100k keys (inline and extents, flushed or not) makes every Retrieve
// and Exist of them answer not found and Items 0; keys stored after it
// are kept; and so after a clean close (checkpoint) and after a crash
// (the namespace dropped unclosed: a scan). In Cache and Strict mode.
func TestClearNamespace(t *testing.T) {
	for _, m := range []Mode{Cache, Strict} {
		t.Run(m.String(), func(t *testing.T) {
			const n, after = 100_000, 2000
			o := Options{Path: t.TempDir() + "/ns", Capacity: 64 << 20, RegionBytes: 1 << 20, MaxValueBytes: 4096, Mode: m, ReadSlots: 8, RingEntries: 64}
			ns := mustOpen(t, o)
			if err := storeRound(t, ns, 0, n/2); err != nil {
				t.Fatal(err)
			}
			if err := ns.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := storeRound(t, ns, 1, n/2); err != nil {
				t.Fatal(err)
			}
			if items := ns.Stats().Items; items != n {
				t.Fatalf("Items = %d before Clear, want %d", items, n)
			}
			if err := ns.Clear(ctx); err != nil {
				t.Fatal(err)
			}
			check := func(ns *Namespace, items int, when string) {
				t.Helper()
				if got := ns.Stats().Items; got != items {
					t.Fatalf("%s: Items = %d, want %d", when, got, items)
				}
				for r := range 2 {
					if got := roundPresent(t, ns, r, n/2); got != 0 {
						t.Fatalf("%s: %d keys of round %d found after Clear", when, got, r)
					}
				}
				for _, k := range [][]byte{clearKeyOf(0, 0), clearKeyOf(0, 1), clearKeyOf(1, 7)} {
					if ok, err := ns.Exist(ctx, k); ok || err != nil {
						t.Fatalf("%s: Exist(%s) = %v, %v after Clear", when, k, ok, err)
					}
				}
				if err := ns.lg.CheckAccounting(); err != nil {
					t.Fatalf("%s: %v", when, err)
				}
			}
			check(ns, 0, "after Clear")
			if err := storeRound(t, ns, 2, after); err != nil {
				t.Fatal(err)
			}
			check(ns, after, "stored after")
			if err := ns.Close(); err != nil {
				t.Fatal(err)
			}
			ns = mustOpen(t, o)
			if got := ns.Stats().Recovered; got != "checkpoint" {
				t.Fatalf("clean reopen by %s", got)
			}
			check(ns, after, "checkpoint")
			if got := roundPresent(t, ns, 2, after); got != after {
				t.Fatalf("checkpoint: %d of the %d keys stored after Clear", got, after)
			}
			if err := storeRound(t, ns, 3, after); err != nil {
				t.Fatal(err)
			}
			if err := ns.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			ns.release() // drop without Close, as a crash would
			ns = mustOpen(t, o)
			defer ns.Close()
			if got := ns.Stats().Recovered; got != "scan" {
				t.Fatalf("reopen after a crash by %s", got)
			}
			check(ns, 2*after, "scan")
			for r := 2; r < 4; r++ {
				if got := roundPresent(t, ns, r, after); got != after {
					t.Fatalf("scan: %d of the %d keys of round %d, stored after Clear", got, after, r)
				}
			}
		})
	}
}

const clearCrashEnv = "TIERCACHE_EMU_CLEAR_CHILD"

// clearCrashKeys is how many keys each round of TestClearCrashChild stores.
const clearCrashKeys = 300

// TestClearCrashChild is the child of TestClearCrash: round after round
// it stores clearCrashKeys keys, flushes ("D r"), then clears ("C r"
// before Clear, "X r" after it returned).
func TestClearCrashChild(t *testing.T) {
	path := os.Getenv(clearCrashEnv)
	if path == "" {
		return // only does something as TestClearCrash's child
	}
	ns, err := Open(crashOptions(path, os.Getenv(clearCrashEnv+"_MODE")))
	if err != nil {
		fmt.Println("E", err)
		os.Exit(2)
	}
	base, _ := strconv.Atoi(os.Getenv(clearCrashEnv + "_BASE"))
	fmt.Println("R")
	for r := base; ; r++ {
		if err := storeRound(t, ns, r, clearCrashKeys); err != nil {
			fmt.Println("E", err)
			os.Exit(2)
		}
		if err := ns.Flush(ctx); err != nil {
			fmt.Println("E", err)
			os.Exit(2)
		}
		fmt.Println("D", r)
		fmt.Println("C", r)
		if err := ns.Clear(ctx); err != nil {
			fmt.Println("E", err)
			os.Exit(2)
		}
		fmt.Println("X", r)
	}
}

// TestClearCrash: E34, E4. A child that stores, flushes and clears round
// after round is SIGKILLed at random points, 30 times per mode, reopened
// alternately from a clean close and unclosed. After each kill: no key
// of a round whose Clear returned is found; the last flushed round
// whose Clear had not returned is found whole, or (killed inside its
// Clear) not at all, never in part; and no earlier round is found.
func TestClearCrash(t *testing.T) {
	for _, mode := range []string{"cache", "strict"} {
		t.Run(mode, func(t *testing.T) { clearCrashCycles(t, mode) })
	}
}

func clearCrashCycles(t *testing.T, mode string) {
	path := t.TempDir() + "/crash"
	rng := rand.New(rand.NewPCG(21, 21))
	inside, whole, none, carry := 0, 0, 0, 0
	for cycle := 0; cycle < 30; cycle++ {
		base := (cycle + 1) * 1000
		cmd, lines := startChild(t, "TestClearCrashChild", clearCrashEnv+"="+path, clearCrashEnv+"_BASE="+strconv.Itoa(base), clearCrashEnv+"_MODE="+mode)
		// last[c] is the last round that printed c ("D", "C", "X"; -1: none).
		last := map[string]int{"D": -1, "C": -1, "X": -1}
		seen := func(l string) {
			if f := strings.Fields(l); len(f) == 2 && len(f[0]) == 1 {
				if r, err := strconv.Atoi(f[1]); err == nil {
					last[f[0]] = r
				}
			}
			if strings.HasPrefix(l, "E ") {
				t.Fatalf("cycle %d: child: %s", cycle, l)
			}
		}
		killAt := time.Duration(rng.IntN(30000)) * time.Microsecond
		ready := killChild(cmd, lines, killAt, seen)
		if !ready {
			t.Fatalf("cycle %d: child never opened the namespace", cycle)
		}
		ns, err := Open(crashOptions(path, mode))
		if err != nil {
			t.Fatalf("cycle %d: reopen after kill: %v", cycle, err)
		}
		// Rounds base..last["X"] were cleared; the round after is the
		// one that may be present.
		for r := base; r <= last["X"]; r++ {
			if got := roundPresent(t, ns, r, clearCrashKeys); got != 0 {
				dumpKey(t, path, clearKeyOf(r, 0))
				t.Fatalf("cycle %d: %d keys of round %d, whose Clear returned", cycle, got, r)
			}
		}
		// Items counts the round after the last Clear that returned, or
		// with none this cycle, at most that and what the last cycle left.
		items := ns.Stats().Items
		{
			r := max(last["X"]+1, base)
			got := roundPresent(t, ns, r, clearCrashKeys)
			if last["X"] >= base && items != got || items > got+carry {
				t.Fatalf("cycle %d: %d items; round %d has %d keys, the last cycle left %d", cycle, items, r, got, carry)
			}
			switch {
			case last["D"] < r: // not flushed: any prefix
			case got == clearCrashKeys:
				whole++
			case got == 0 && last["C"] == r:
				none++
			default:
				t.Fatalf("cycle %d: %d of the %d keys of round %d (flushed: %v, Clear begun: %v)", cycle, got, clearCrashKeys, r, last["D"] >= r, last["C"] == r)
			}
			if last["C"] == r {
				inside++
			}
		}
		carry = items
		if cycle%2 == 0 {
			if err := ns.Close(); err != nil {
				t.Fatalf("cycle %d: close: %v", cycle, err)
			}
		} else {
			ns.release() // drop without the checkpoint, as a crash would
		}
	}
	t.Logf("%s: %d kills inside a Clear; the last flushed round was found whole %d times, gone (its Clear landed) %d times", mode, inside, whole, none)
}

// TestClearSuperblockFails: E34, E7. A Clear whose superblock write
// fails (EIO) answers the error, keeps every key readable, leaves the
// namespace read-only, and a reopen finds every key; one whose sync fails
// after the write reached the file answers the error too, and a reopen
// finds none: all or nothing either way.
func TestClearSuperblockFails(t *testing.T) {
	for _, op := range []dev.Op{dev.OpWriteAt, dev.OpSync} {
		t.Run(op.String(), func(t *testing.T) {
			o := testOptions(t)
			var armed bool
			open := func() *Namespace {
				f, err := dev.OpenFile(o.Path)
				if err != nil {
					t.Fatal(err)
				}
				o.Device = dev.NewFault(f, func(got dev.Op, off int64, n int) (int32, bool) {
					return -int32(syscall.EIO), armed && got == op && off == 0
				})
				return mustOpen(t, o)
			}
			ns := open()
			if err := storeRound(t, ns, 0, 200); err != nil {
				t.Fatal(err)
			}
			if err := ns.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			armed = true
			err := ns.Clear(ctx)
			armed = false
			if !errors.Is(err, syscall.EIO) || !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), o.Path) {
				t.Fatalf("Clear with a failing superblock %s = %v", op, err)
			}
			if got := roundPresent(t, ns, 0, 200); got != 200 {
				t.Fatalf("%d of 200 keys readable after a failed Clear", got)
			}
			if err := ns.Store(ctx, []byte("x"), []byte("v"), 0); !errors.Is(err, ErrReadOnly) {
				t.Fatalf("Store after a failed Clear = %v", err)
			}
			ns.Close()
			ns = open()
			defer ns.Close()
			want := 200
			if op == dev.OpSync {
				want = 0 // the write reached the file
			}
			if got := roundPresent(t, ns, 0, 200); got != want {
				t.Fatalf("reopened after a failed Clear: %d keys, want %d", got, want)
			}
		})
	}
}

// TestClearOnFullFilesystem: E34, E14. Clear allocates nothing, so it
// succeeds on a full filesystem, and the store takes keys after it.
func TestClearOnFullFilesystem(t *testing.T) {
	o, ns := fullStore(t)
	if err := ns.Clear(ctx); err != nil {
		t.Fatalf("Clear on a full filesystem: %v", err)
	}
	if err := storeN(t, ns, 200, 300, 2000); err != nil {
		t.Fatal(err)
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ns.release()
	ns = mustOpen(t, o)
	defer ns.Close()
	if items := ns.Stats().Items; items != 100 {
		t.Fatalf("%d items after Clear, 100 stores and a crash", items)
	}
	checkN(t, ns, 200, 300, 2000)
}

// TestClearConcurrent: E34 with other callers. Four writers store and
// read back their own keys, and flush, while Clear runs twice (and on
// until each stored 100 keys after it):
// every read answers the value stored or Key Does Not Exist, every key
// whose Store began after the last Clear returned is present after it,
// also after a crash, and the accounting adds up (run under -race too).
func TestClearConcurrent(t *testing.T) {
	o := Options{Path: t.TempDir() + "/ns", Capacity: 64 << 20, RegionBytes: 1 << 20, MaxValueBytes: 4096, ReadSlots: 8, RingEntries: 64}
	ns := mustOpen(t, o)
	var cleared atomic.Int32 // Clears returned
	const writers, each = 4, 3000
	after := make([][]int, writers) // keys whose Store began after the second Clear returned
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2 {
			time.Sleep(time.Millisecond)
			if err := ns.Clear(ctx); err != nil {
				t.Error(err)
			}
			cleared.Add(1)
		}
	}()
	inGoroutines(t, writers, func(g int) error {
		buf := make([]byte, 64)
		// At least each Stores, and on until 100 began after the Clears.
		for i := 0; i < each || len(after[g]) < 100; i++ {
			late := cleared.Load() == 2
			k := clearKeyOf(g, i)
			v := fmt.Appendf(nil, "%d/%d", g, i)
			if err := ns.Store(ctx, k, v, 0); err != nil {
				return err
			}
			if late {
				after[g] = append(after[g], i)
			}
			n, err := ns.Retrieve(ctx, k, buf)
			if err == nil && string(buf[:n]) != string(v) {
				return fmt.Errorf("key %s read %q, stored %q", k, buf[:n], v)
			}
			if err != nil && !errors.Is(err, nvmekv.ErrKeyNotFound) {
				return err
			}
			if i%500 == 0 {
				if err := ns.Flush(ctx); err != nil {
					return err
				}
			}
		}
		return nil
	})
	<-done
	check := func(ns *Namespace, when string) {
		t.Helper()
		total := 0
		for g := range writers {
			for _, i := range after[g] {
				if ok, err := ns.Exist(ctx, clearKeyOf(g, i)); !ok || err != nil {
					t.Fatalf("%s: key %s, stored after the last Clear: %v, %v", when, clearKeyOf(g, i), ok, err)
				}
			}
			total += len(after[g])
		}
		if items := ns.Stats().Items; items < total {
			t.Fatalf("%s: %d items, %d keys stored after the last Clear", when, items, total)
		}
		if err := ns.lg.CheckAccounting(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
	}
	check(ns, "open")
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ns.release()
	ns = mustOpen(t, o)
	defer ns.Close()
	check(ns, "after a crash")
}

// TestClearEmptiesUndoJournal: E34, E21. Changes not yet flushed when
// Clear runs (a Delete and an overwrite of flushed keys) leave the undo
// journal with it: a failed write after the Clear puts back only what was
// stored after it, so no cleared key comes back, then or after a reopen.
func TestClearEmptiesUndoJournal(t *testing.T) {
	o, fail := failingWrites(t)
	ns := mustOpen(t, o)
	key := key16
	for _, k := range []string{"overwritten", "deleted"} {
		if err := ns.Store(ctx, key(k), []byte("old "+k), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ns.Store(ctx, key("overwritten"), []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	if err := ns.Delete(ctx, key("deleted")); err != nil {
		t.Fatal(err)
	}
	if err := ns.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ns.Store(ctx, key("after"), []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if err := ns.Flush(ctx); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Flush with failing writes: %v", err)
	}
	absent := func(when string) {
		t.Helper()
		for _, k := range []string{"overwritten", "deleted", "after"} {
			if n, err := ns.Retrieve(ctx, key(k), make([]byte, 64)); !errors.Is(err, nvmekv.ErrKeyNotFound) {
				t.Fatalf("%s: %s reads %d bytes, %v; want Key Does Not Exist", when, k, n, err)
			}
		}
		if items := ns.Stats().Items; items != 0 {
			t.Fatalf("%s: %d items", when, items)
		}
	}
	absent("after the failed Flush")
	if st := ns.Stats(); st.Undone != 1 {
		t.Errorf("Stats.Undone = %d, want 1 (the Store after the Clear)", st.Undone)
	}
	ns.Close()
	fail.Store(false)
	ns = mustOpen(t, o)
	defer ns.Close()
	absent("reopened")
}
