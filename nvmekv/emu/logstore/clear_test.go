package logstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"testing"
)

// clearOptions: 48 regions of 1 MiB, room for 100k small keys in Strict
// mode too.
func clearOptions(t testing.TB, m Mode) Options {
	return Options{Path: t.TempDir() + "/log", Capacity: 48 << 20, RegionBytes: 1 << 20, MaxValueBytes: 4096, Mode: m}
}

// crash drops the log as a killed process would: its rings and file are
// closed, the log is not (no checkpoint, the superblock stays dirty).
func (l *testLog) crash() {
	l.rg.Close()
	l.d.Close()
}

func (l *testLog) flush(t testing.TB) {
	t.Helper()
	if err := l.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// clearKey names key i of a generation: "g<gen>-<i>".
func clearKey(gen, i int) string { return fmt.Sprintf("g%d-%d", gen, i) }

// storeGen stores n keys of generation gen: one in 100 with a 4096-byte
// value (an extent), the others 16 bytes (inline).
func storeGen(t testing.TB, l *testLog, gen, n int) {
	t.Helper()
	for i := range n {
		size := 16
		if i%100 == 0 {
			size = 4096
		}
		l.store(t, clearKey(gen, i), testValue(i, gen, size))
	}
}

// checkGen checks that every key of generation gen is present (or every
// one absent).
func checkGen(t testing.TB, l *testLog, gen, n int, present bool, when string) {
	t.Helper()
	for i := range n {
		if _, ok := l.lookup(clearKey(gen, i)); ok != present {
			t.Fatalf("%s: key %s present = %v, want %v", when, clearKey(gen, i), ok, present)
		}
	}
}

func checkItems(t testing.TB, l *testLog, want int, when string) {
	t.Helper()
	if s := l.Stats(); s.Items != want {
		t.Fatalf("%s: Stats.Items = %d, want %d", when, s.Items, want)
	}
	if err := l.CheckAccounting(); err != nil {
		t.Fatalf("%s: %v", when, err)
	}
}

// TestClear: E34. Clear of 100k keys (inline and extent, some flushed,
// some still in the write buffer) drops them all from the index at once
// (Items 0, the index back to its first size, the accounting right); keys
// stored after it are kept; and so it stays after a clean reopen (from
// the checkpoint) and after a crash (a scan that reads no cleared
// region). In Cache and Strict mode.
func TestClear(t *testing.T) {
	for _, m := range []Mode{Cache, Strict} {
		t.Run(m.String(), func(t *testing.T) {
			const n, after = 100_000, 1000
			o := clearOptions(t, m)
			l := mustOpenLog(t, o)
			storeGen(t, l, 0, n/2)
			l.flush(t)
			storeGen(t, l, 1, n/2) // partly unflushed
			full := l.Stats()
			checkItems(t, l, n, "before Clear")
			if err := l.Clear(context.Background()); err != nil {
				t.Fatal(err)
			}
			s := l.Stats()
			fresh := newKeyIndex(l.expected(), &l.lay, nil).bytes()
			if s.Items != 0 || s.LiveBytes != 0 || s.IndexBytes != fresh || s.Clears != 1 {
				t.Fatalf("after Clear: Items %d LiveBytes %d IndexBytes %d (a fresh index: %d, before: %d) Clears %d",
					s.Items, s.LiveBytes, s.IndexBytes, fresh, full.IndexBytes, s.Clears)
			}
			checkItems(t, l, 0, "after Clear")
			checkGen(t, l, 0, n/2, false, "after Clear")
			checkGen(t, l, 1, n/2, false, "after Clear")
			storeGen(t, l, 2, after)
			checkGen(t, l, 2, after, true, "after Clear")
			l.close(t)

			l = mustOpenLog(t, o)
			if s := l.Stats(); s.Recovered != "checkpoint" {
				t.Fatalf("clean reopen recovered by %s", s.Recovered)
			}
			checkItems(t, l, after, "checkpoint")
			checkGen(t, l, 0, n/2, false, "checkpoint")
			checkGen(t, l, 2, after, true, "checkpoint")
			storeGen(t, l, 3, after)
			l.flush(t)
			l.crash()

			l = mustOpenLog(t, o)
			if s := l.Stats(); s.Recovered != "scan" {
				t.Fatalf("reopen after a crash recovered by %s", s.Recovered)
			}
			checkItems(t, l, 2*after, "scan")
			checkGen(t, l, 0, n/2, false, "scan")
			checkGen(t, l, 1, n/2, false, "scan")
			checkGen(t, l, 2, after, true, "scan")
			checkGen(t, l, 3, after, true, "scan")
			l.close(t)
		})
	}
}

// TestClearThenCrash: E34. A crash right after Clear returns, before
// anything else is written, finds the store empty; the next Store goes in
// a region above the clear seq and survives the next crash.
func TestClearThenCrash(t *testing.T) {
	o := clearOptions(t, Cache)
	l := mustOpenLog(t, o)
	storeGen(t, l, 0, 5000)
	l.flush(t)
	if err := l.Clear(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.crash()
	l = mustOpenLog(t, o)
	checkItems(t, l, 0, "crash after Clear")
	checkGen(t, l, 0, 5000, false, "crash after Clear")
	storeGen(t, l, 1, 100)
	l.flush(t)
	l.crash()
	l = mustOpenLog(t, o)
	defer l.close(t)
	checkItems(t, l, 100, "second crash")
	checkGen(t, l, 1, 100, true, "second crash")
}

// TestClearThenReclaim: E34, E6. After a Clear the log is filled past its
// capacity again: the cleared regions are reused (Cache mode reclaims
// them and reports none of their keys; Strict mode evacuates nothing from
// them), the accounting stays right, and the keys stored after the Clear
// are where each mode keeps them; and so after a scan.
func TestClearThenReclaim(t *testing.T) {
	for _, m := range []Mode{Cache, Strict} {
		t.Run(m.String(), func(t *testing.T) {
			o := clearOptions(t, m)
			o.CheckpointPath = "-"
			l := mustOpenLog(t, o)
			storeGen(t, l, 0, 100_000)
			l.flush(t)
			l.Lock()
			l.TakeReclaimedLocked()
			l.Unlock()
			if err := l.Clear(context.Background()); err != nil {
				t.Fatal(err)
			}
			// 500 keys stored once (Strict mode moves them forward,
			// Cache mode drops them), then 2,000 keys of 3,000 bytes
			// rewritten 20 times: 120 MB through a 48 MiB log, 6 MB live.
			const static, keys, rounds = 500, 2000, 20
			storeGen(t, l, 2, static)
			for r := range rounds {
				for i := range keys {
					l.store(t, clearKey(1, i), testValue(i, r, 3000))
				}
			}
			l.Lock()
			dropped := l.TakeReclaimedLocked()
			l.Unlock()
			kept := static
			for _, k := range dropped {
				if k[1] != '2' {
					t.Fatalf("reclaim reported %q, a key the Clear dropped or a live one", k)
				}
				kept--
			}
			if m == Strict && kept != static || m == Cache && kept != 0 {
				t.Fatalf("%d of the %d keys stored once are left, %d reported dropped", kept, static, len(dropped))
			}
			s := l.Stats()
			if s.Reclaimed == 0 {
				t.Fatal("the log never wrapped")
			}
			if m == Strict && s.Evacuated == 0 {
				t.Fatal("Strict mode never evacuated")
			}
			checkItems(t, l, keys+kept, "refilled")
			checkGen(t, l, 1, keys, true, "refilled")
			checkGen(t, l, 2, static, m == Strict, "refilled")
			l.flush(t)
			l.crash()
			l = mustOpenLog(t, o)
			defer l.close(t)
			checkItems(t, l, keys+kept, "refilled, scan")
			checkGen(t, l, 2, static, m == Strict, "refilled, scan")
			checkGen(t, l, 0, 100_000, false, "refilled, scan")
			checkGen(t, l, 1, keys, true, "refilled, scan")
		})
	}
}

// TestClearSuperblockVersions: E34, E11. A store is formatted as version
// 3 and stays so until its first Clear writes version 4 with the clear
// seq (a version-3 superblock reads as clear seq 0, so a store written by
// a build before Clear opens with every key); the clear seq survives
// every later superblock write; a damaged clear record is refused; and a
// version-2 store refuses Clear with errors.ErrUnsupported, keeping its
// keys.
func TestClearSuperblockVersions(t *testing.T) {
	o := testOptions(t)
	l := mustOpenLog(t, o)
	storeGen(t, l, 0, 300)
	l.close(t)
	_, sb := readStore(t, o.Path)
	if sb.version != sbVersion || sb.clearSeq != 0 {
		t.Fatalf("a store never cleared has superblock version %d clear seq %d", sb.version, sb.clearSeq)
	}
	l = mustOpenLog(t, o)
	checkGen(t, l, 0, 300, true, "version 3")
	if err := l.Clear(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := l.sb.clearSeq
	storeGen(t, l, 1, 10)
	l.close(t) // writes the superblock again (clean)
	img, sb := readStore(t, o.Path)
	if sb.version != sbVersionClr || sb.clearSeq != want || want == 0 {
		t.Fatalf("after Clear and Close: superblock version %d clear seq %d, want %d/%d", sb.version, sb.clearSeq, sbVersionClr, want)
	}
	bad := append([]byte(nil), img[:blockBytes]...)
	bad[sbClearOff] ^= 1
	if _, _, err := parseSuperblock(bad); !errors.Is(err, ErrFormat) {
		t.Fatalf("a damaged clear record parses: %v", err)
	}

	// Version 2.
	o2 := testOptions(t)
	l = mustOpenLog(t, o2)
	storeGen(t, l, 0, 50)
	l.close(t)
	asVersion2(t, o2.Path)
	l = mustOpenLog(t, o2)
	defer l.close(t)
	if err := l.Clear(context.Background()); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Clear of a version-2 store = %v, want errors.ErrUnsupported", err)
	}
	checkGen(t, l, 0, 50, true, "version 2 after a refused Clear")
	storeGen(t, l, 1, 10) // still writable
}

// readStore reads the store image at path and parses its superblock.
func readStore(t *testing.T, path string) ([]byte, superblock) {
	t.Helper()
	img, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sb, _, err := parseSuperblock(img)
	if err != nil {
		t.Fatal(err)
	}
	return img, sb
}

// asVersion2 rewrites the store at path as version 2 wrote it: its
// superblock and its region headers.
func asVersion2(t *testing.T, path string) {
	t.Helper()
	img, sb := readStore(t, path)
	binary.LittleEndian.PutUint32(img[8:], sbVersionV2)
	binary.LittleEndian.PutUint32(img[56:], crc32.Checksum(img[:56], castagnoli))
	v2 := superblock{version: sbVersionV2}
	R := int(sb.regionBytes)
	for r := 0; r < int(sb.regions); r++ {
		h := img[blockBytes+r*R:]
		if seq := sb.regionSeq(h); seq != 0 {
			v2.putRegionHdr(h, seq)
		}
	}
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestClearReleasesIndex: E34, E25. Clear of 300k keys, whose tag table
// lives off the Go heap, gives every page of the old tables back to the
// kernel at once, and the index is back to its first size.
func TestClearReleasesIndex(t *testing.T) {
	l := mustOpenLog(t, clearOptions(t, Cache))
	defer l.close(t)
	storeGen(t, l, 0, 300_000)
	l.Lock()
	var old []*offHeap
	for _, h := range l.idx.mappings() {
		if h != nil {
			old = append(old, h)
		}
	}
	l.Unlock()
	if len(old) == 0 {
		t.Fatal("300k keys and no off-heap table")
	}
	if err := l.Clear(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, h := range old {
		if want := cap(h.mem) &^ (h.grain - 1); h.released != want {
			t.Fatalf("an old table of %d bytes has %d released after Clear, want %d", cap(h.mem), h.released, want)
		}
	}
	if s := l.Stats(); s.IndexOffHeapBytes != 0 || s.Items != 0 {
		t.Fatalf("after Clear: %d off-heap index bytes, %d items", s.IndexOffHeapBytes, s.Items)
	}
	checkItems(t, l, 0, "after Clear")
}
