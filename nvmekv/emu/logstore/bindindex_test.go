package logstore

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"
)

// mappingOf is the address a mapping starts at, to match the tables an
// index holds against the mappings its bind hook was given.
func mappingOf(mem []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(mem))) }

// TestIndexBindsEveryOffHeapTable (E28): the bind hook is given the whole
// mapping of the first off-heap tables and of every segment or table
// growth and splits make, before any slot is written, and never a table
// on the Go heap; a hook that fails leaves its tables unbound and the
// index exact.
func TestIndexBindsEveryOffHeapTable(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail=%v", fail), func(t *testing.T) {
			given := map[uintptr]int{}
			bind := func(mem []byte) error {
				for _, b := range mem {
					if b != 0 {
						t.Fatal("the hook was given a table with a slot written")
					}
				}
				if len(mem)%pageBytes != 0 {
					t.Fatalf("the hook was given %d bytes, not the whole mapping (whole pages)", len(mem))
				}
				given[mappingOf(mem)] = len(mem)
				if fail {
					return errors.New("no such node")
				}
				return nil
			}
			if small := newKeyIndex(1000, testLay, bind); len(small.mappings()) != 2 || small.ext.cur.off != nil || len(given) != 0 {
				t.Fatalf("a heap table went to the hook (%d calls)", len(given))
			}
			x := newKeyIndex(hugeTableBytes/tslotBytes, testLay, bind)
			tables := map[uintptr]bool{}
			check := func() {
				t.Helper()
				mapped, bound := x.offHeap()
				n := 0
				x.eachMapping(func(mem []byte, b bool) {
					n++
					tables[mappingOf(mem)] = true
					if given[mappingOf(mem)] != len(mem) {
						t.Fatalf("a %d-byte table was never given to the hook", len(mem))
					}
					if b == fail {
						t.Fatalf("table bound = %v with a hook that fails = %v", b, fail)
					}
				})
				if n == 0 || mapped == 0 || (bound == mapped) == fail || (bound == 0) != fail {
					t.Fatalf("%d off-heap tables, %d bytes mapped, %d bound (hook fails: %v)", n, mapped, bound, fail)
				}
			}
			check()
			const keys = 300_000 // grows and splits the segments
			key := func(i int) [16]byte { return joinKey(uint64(i)*0x9e3779b97f4a7c15, uint64(i)) }
			for i := 1; i <= keys; i++ {
				k := key(i)
				x.replace(&k, 0, mkLoc(i%1000+1, 16, 16*(i%1000), 64))
				if i%10_000 == 0 {
					check()
				}
			}
			if len(tables) < 3 {
				t.Fatalf("saw %d off-heap tables, want the first and at least two grown", len(tables))
			}
			for i := 1; i <= keys; i++ {
				k := key(i)
				if !x.has(&k, mkLoc(i%1000+1, 16, 16*(i%1000), 64)) {
					t.Fatalf("key %d not found", i)
				}
			}
		})
	}
}

// TestLogBindIndexHook (E28): Options.BindIndex reaches the index of a
// log opened fresh and of one reopened from its checkpoint; Stats reports
// the bytes bound, and a hook that fails is counted, not fatal: the log
// stores and finds its keys as without one.
func TestLogBindIndexHook(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail=%v", fail), func(t *testing.T) {
			o := testOptions(t)
			o.ExpectedItems = 200_000 // 2.6 MB of tag segments: off the heap from Open
			calls := 0
			o.BindIndex = func(mem []byte) error {
				calls++
				if fail {
					return errors.New("mbind: operation not permitted")
				}
				return nil
			}
			for round := 0; round < 2; round++ { // fresh, then from the checkpoint
				calls = 0
				l := mustOpenLog(t, o)
				if round == 0 {
					for i := 0; i < 200; i++ {
						l.store(t, fmt.Sprintf("k%d", i), testValue(i, 0, 100))
					}
				}
				for i := 0; i < 200; i++ {
					if _, ok := l.lookup(fmt.Sprintf("k%d", i)); !ok {
						t.Fatalf("round %d: key k%d not found", round, i)
					}
				}
				st := l.Stats()
				wantBound, wantErrs := st.IndexOffHeapBytes, uint64(0)
				if fail {
					wantBound, wantErrs = 0, uint64(calls) // each Log counts its own
				}
				if st.IndexOffHeapBytes < hugeTableBytes || st.IndexBoundBytes != wantBound || st.IndexBindErrors != wantErrs {
					t.Fatalf("round %d (%s): %d calls, off-heap %d, bound %d, errors %d; want bound %d, errors %d (this log)",
						round, st.Recovered, calls, st.IndexOffHeapBytes, st.IndexBoundBytes, st.IndexBindErrors, wantBound, wantErrs)
				}
				n := 0
				l.EachIndexMapping(func(mem []byte, bound bool) {
					n++
					if bound == fail {
						t.Fatalf("EachIndexMapping: bound %v with a failing hook %v", bound, fail)
					}
				})
				if n < 2 || n != calls {
					t.Fatalf("round %d: EachIndexMapping saw %d tables, the hook was called %d times: want the same, the segments of a 2.6 MB tag index", round, n, calls)
				}
				l.close(t)
			}
		})
	}
}
