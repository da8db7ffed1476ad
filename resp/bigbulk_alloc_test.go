//go:build !race

package resp

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// The race detector drops sync.Pool items on purpose, so the pieces a big
// bulk borrows are not all lent again and allocation counts mean nothing
// under it.

// TestBigBulkAllocatesOnce (R6): a 64 MiB bulk, arriving at most 64 KiB
// per read, allocates about its own size once (its pieces come back to
// the pool and are lent again), where a slice that doubled as bytes
// arrived allocated three times that; the bulk reads back byte for byte,
// and Keep gives the big bulk's slice (only) to the caller.
func TestBigBulkAllocatesOnce(t *testing.T) {
	const size = 64 << 20
	val := make([]byte, size)
	for i := range val {
		val[i] = byte(i * 7)
	}
	in := io.MultiReader(strings.NewReader(fmt.Sprintf("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n", size)),
		bytes.NewReader(val), strings.NewReader("\r\n"))
	rd := NewReader(&smallReads{r: in, max: 64 << 10}, Limits{MaxBulkBytes: size})
	// Warm the piece pool, as a sidecar that received a big bulk before.
	ps := make([][]byte, 32)
	for i := range ps {
		ps[i] = bigPieces.get()
	}
	for _, p := range ps {
		bigPieces.put(p)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	args, err := rd.ReadCommand()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 3 || !bytes.Equal(args[2], val) {
		t.Fatalf("read %d arguments, the value of %d bytes is not the one sent", len(args), len(args[len(args)-1]))
	}
	if rd.Keep(args[1]) || !rd.Keep(args[2]) {
		t.Fatal("Keep: want false for the small key, true for the big bulk")
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a 64 MiB bulk allocated %.1f MiB", float64(alloc)/(1<<20))
	if alloc > size+size/4 {
		t.Fatalf("a 64 MiB bulk allocated %d bytes, want at most 1.25 times its size", alloc)
	}
}

// TestBigBulkRecycled (R6): with MayKeep false, a big bulk is received
// into an off-heap buffer that goes back at Recycle (not before: a reply
// may refer to it), and the next big bulk of its size class is received
// straight into it, allocating nothing of its size; Keep never gives one
// away; Release gives back every one, and TrimBigBuffers unmaps them.
func TestBigBulkRecycled(t *testing.T) {
	const size = 9<<20 + 12345 // the sizes below are all in the class of 10 MiB
	cmd := func(fill byte, n int) []byte {
		b := fmt.Appendf(nil, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n", n)
		b = append(b, bytes.Repeat([]byte{fill}, n)...)
		return append(b, "\r\n"...)
	}
	var in []byte
	in = append(in, cmd('a', size)...)   // 1: recycled before 3
	in = append(in, cmd('b', size-1)...) // 2: before any Recycle: a buffer of its own
	in = append(in, cmd('c', size-3)...) // 3: received into 1's buffer
	rd := NewReader(&smallReads{r: bytes.NewReader(in), max: 64 << 10}, Limits{})
	rd.MayKeep = func(int) bool { return false }
	read := func(fill byte, n int) []byte {
		t.Helper()
		args, err := rd.ReadCommand()
		if err != nil {
			t.Fatal(err)
		}
		if len(args) != 3 || len(args[2]) != n || bytes.IndexFunc(args[2], func(r rune) bool { return r != rune(fill) }) >= 0 {
			t.Fatalf("the bulk of %q is not the one sent", fill)
		}
		return args[2]
	}
	mapped := BigBufferBytes()
	first := read('a', size)
	if rd.Keep(first) {
		t.Fatal("Keep gave away an off-heap buffer")
	}
	second := read('b', size-1)
	if &second[0] == &first[0] {
		t.Fatal("a big bulk's buffer was lent again before Recycle")
	}
	rd.Recycle()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	third := read('c', size-3)
	runtime.ReadMemStats(&after)
	if &third[0] != &first[0] {
		t.Fatal("the third bulk was not received into the first's buffer")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/8 {
		t.Fatalf("a bulk received into a recycled buffer allocated %d bytes", alloc)
	}
	if got := BigBufferBytes() - mapped; got != int64(2*bigClass(size+2)) {
		t.Fatalf("%d bytes mapped for two buffers of %d", got, bigClass(size+2))
	}
	rd.Release()
	if left := TrimBigBuffers(0); left != mapped {
		t.Fatalf("%d bytes mapped after Release and TrimBigBuffers, want %d", left, mapped)
	}
}
