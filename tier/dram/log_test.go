package dram

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tiercache/tiercache/numa"
)

func newLog(t *testing.T, bytes int64, seg int) *Log[int] {
	t.Helper()
	l, err := New[int](Options{Name: "test", Bytes: bytes, SegmentBytes: seg, Arena: numa.ArenaOptions{Node: numa.Unbound, NoPrefault: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestRecordsNeverOverlap is A2 and A3: a random mix of allocations, frees
// and cleanings against a model of the live records; every live record
// keeps the bytes written into it, and Live and Used add up.
func TestRecordsNeverOverlap(t *testing.T) {
	l := newLog(t, 64<<10, 4<<10)
	type rec struct {
		loc Loc
		val []byte
	}
	live := map[int]rec{} // owner → its live record
	r := rand.New(rand.NewPCG(1, 2))
	next := 0
	check := func(step int) {
		var sum int64
		for id, rc := range live {
			sum += int64(len(rc.val))
			if !bytes.Equal(l.Bytes(rc.loc, len(rc.val)), rc.val) {
				t.Fatalf("step %d: record of %d was overwritten", step, id)
			}
		}
		if sum != l.Live() {
			t.Fatalf("step %d: Live %d, the live records hold %d", step, l.Live(), sum)
		}
		if l.Used() < l.Live() || l.Used() > l.Capacity() {
			t.Fatalf("step %d: Used %d outside [Live %d, Capacity %d]", step, l.Used(), l.Live(), l.Capacity())
		}
	}
	for step := 0; step < 20000; step++ {
		switch op := r.IntN(10); {
		case op < 6:
			n := r.IntN(1500)
			loc, b, ok := l.Alloc(n, next, 1)
			if !ok {
				// Full: clean the sparsest segment, moving what is live.
				seg, _ := l.Sparsest()
				if seg < 0 {
					t.Fatalf("step %d: no room and nothing to clean", step)
				}
				for _, id := range l.BeginClean(seg, nil) {
					rc, ok := live[id]
					if !ok || !l.In(rc.loc, seg) {
						continue
					}
					nl, nb, ok := l.Alloc(len(rc.val), id, 0)
					if !ok {
						// No room to move it: drop it.
						l.Free(rc.loc, len(rc.val))
						delete(live, id)
						continue
					}
					copy(nb, rc.val)
					l.Free(rc.loc, len(rc.val))
					live[id] = rec{nl, rc.val}
				}
				l.EndClean(seg)
				continue
			}
			v := make([]byte, n)
			for i := range v {
				v[i] = byte(r.Uint32())
			}
			copy(b, v)
			live[next] = rec{loc, v}
			next++
		default:
			for id, rc := range live {
				l.Free(rc.loc, len(rc.val))
				delete(live, id)
				break
			}
		}
		if step%97 == 0 {
			check(step)
		}
	}
	check(-1)
}

// TestAllocFillsEverySegment is A4: records fill every segment, and one of
// SegmentBytes fits a free segment exactly.
func TestAllocFillsEverySegment(t *testing.T) {
	l := newLog(t, 16<<10, 4<<10)
	for i := 0; i < 4; i++ {
		if _, b, ok := l.Alloc(4<<10, i, 0); !ok || len(b) != 4<<10 {
			t.Fatalf("segment-sized record %d: ok %v, %d bytes", i, ok, len(b))
		}
	}
	if _, _, ok := l.Alloc(1, 9, 0); ok {
		t.Fatal("a full log placed a record")
	}
	if _, _, ok := l.Alloc(4<<10+1, 9, 0); ok {
		t.Fatal("a record over SegmentBytes was placed")
	}
}

// TestOwnersListTheSegmentsRecords is A1: BeginClean lists the owners of
// a segment's records in the order they were placed.
func TestOwnersListTheSegmentsRecords(t *testing.T) {
	l := newLog(t, 8<<10, 4<<10)
	for i := 0; i < 5; i++ {
		l.Alloc(1000, i, 0) // 4 in segment 0, the fifth opens segment 1
	}
	seg := l.Oldest()
	got := l.BeginClean(seg, nil)
	if len(got) != 4 || got[0] != 0 || got[3] != 3 {
		t.Fatalf("owners of the first segment = %v, want [0 1 2 3]", got)
	}
	if l.EndClean(seg) {
		t.Fatal("a segment with live records was freed")
	}
}

// TestCleaningOrder is A5.
func TestCleaningOrder(t *testing.T) {
	l := newLog(t, 16<<10, 4<<10)
	var locs []Loc
	for i := 0; i < 16; i++ {
		loc, _, _ := l.Alloc(1024, i, 0) // 4 a segment; the 13th opens the 4th
		locs = append(locs, loc)
	}
	if got := l.Oldest(); got != locs[0].Segment() {
		t.Fatalf("Oldest = %d, want %d", got, locs[0].Segment())
	}
	l.Free(locs[4], 1024)
	l.Free(locs[5], 1024)
	if got, live := l.Sparsest(); got != locs[4].Segment() || live != 2048 {
		t.Fatalf("Sparsest = %d (%d live), want %d (2048)", got, live, locs[4].Segment())
	}
	for i := 8; i < 12; i++ {
		l.Free(locs[i], 1024)
	}
	if l.FreeSegments() != 1 {
		t.Fatalf("a sealed segment freed whole is not free: %d free", l.FreeSegments())
	}
}

// TestCloseIsFinal is A6.
func TestCloseIsFinal(t *testing.T) {
	l, err := New[int](Options{Name: "c", Bytes: 8 << 10, SegmentBytes: 4 << 10, Arena: numa.ArenaOptions{Node: numa.Unbound}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, _, ok := l.Alloc(1, 0, 0); ok {
		t.Fatal("Alloc after Close placed a record")
	}
}

func TestOptionsValidate(t *testing.T) {
	o := Options{Name: "x", Bytes: 4096, SegmentBytes: 4096}
	if err := o.Validate(); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("one segment: %v", err)
	}
}

// TestWithheldSegments is A7: withheld segments take no records, their
// bytes read as zeros (their pages went back to the kernel), the keep
// free segments are never withheld, and a returned segment takes records
// again.
func TestWithheldSegments(t *testing.T) {
	const seg = 4 << 10
	l := newLog(t, 8*seg, seg)
	for i := range l.mem {
		l.mem[i] = 0xaa
	}
	taken := 0
	for l.Withhold(2) {
		taken++
	}
	if taken != 6 || l.Withheld() != 6 || l.FreeSegments() != 2 {
		t.Fatalf("withheld %d (%d), %d free; want 6 withheld, the 2 kept free", taken, l.Withheld(), l.FreeSegments())
	}
	zeros := 0
	for i := 0; i < len(l.mem); i += seg {
		if l.mem[i] == 0 {
			zeros++
		}
	}
	if zeros != 6 {
		t.Fatalf("%d segments read zeros, want the 6 withheld", zeros)
	}
	n := 0
	for {
		loc, _, ok := l.Alloc(seg, n, 0)
		if !ok {
			break
		}
		if l.segs[loc.Segment()].state == segWithheld {
			t.Fatalf("a record went to withheld segment %d", loc.Segment())
		}
		n++
	}
	if n != 2 {
		t.Fatalf("placed %d segment-sized records beside 6 withheld segments, want 2", n)
	}
	if !l.Return() || l.Withheld() != 5 {
		t.Fatalf("Return: %d withheld", l.Withheld())
	}
	if _, _, ok := l.Alloc(seg, n, 0); !ok {
		t.Fatal("a returned segment takes no record")
	}
}
