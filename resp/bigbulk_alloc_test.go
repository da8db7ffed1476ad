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
// arrived allocated three times that; the bulk reads back byte for byte.
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
	if !rd.Owned(args[2]) || rd.Owned(args[1]) {
		t.Fatalf("Owned: the big bulk %v, the small key %v; want true, false", rd.Owned(args[2]), rd.Owned(args[1]))
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a 64 MiB bulk allocated %.1f MiB", float64(alloc)/(1<<20))
	if alloc > size+size/4 {
		t.Fatalf("a 64 MiB bulk allocated %d bytes, want at most 1.25 times its size", alloc)
	}
}
