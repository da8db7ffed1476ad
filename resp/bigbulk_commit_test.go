//go:build !race

package resp

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// declaredThenStop is a client that declares a bulk of 512 MiB, sends a
// few of its bytes and stops: at the Reader's next read it runs check on
// the buffer the Reader reads into, then ends the input.
type declaredThenStop struct {
	data  string
	check func(p []byte)
}

func (d *declaredThenStop) Read(p []byte) (int, error) {
	if d.data == "" {
		d.check(p)
		return 0, io.EOF
	}
	n := copy(p, d.data)
	d.data = d.data[n:]
	return n, nil
}

const declared512 = "*2\r\n$4\r\nECHO\r\n$536870912\r\n"

// TestBigBulkDeclaredCommitsAsArrives (R12): a client that declares a
// bulk of 512 MiB and sends 100 of its bytes makes the Reader back no
// more than those bytes' page in its off-heap buffer (no huge page of
// 2 MiB at the buffer's start), and allocate less than 512 KiB of new
// heap for it on the heap path (no piece of 1 MiB before the bytes
// arrive).
func TestBigBulkDeclaredCommitsAsArrives(t *testing.T) {
	t.Run("off-heap", func(t *testing.T) {
		checked := false
		src := &declaredThenStop{data: declared512 + strings.Repeat("x", 100), check: func(p []byte) {
			checked = true
			// The pages of the next 4 MiB the bulk's bytes go to: none
			// may be backed before a byte arrives for it.
			page := uintptr(unix.Getpagesize())
			addr := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
			start := addr &^ (page - 1)
			length := addr - start + uintptr(min(len(p), 4<<20))
			vec := make([]byte, (length+page-1)/page)
			if _, _, errno := unix.Syscall(unix.SYS_MINCORE, start, length, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
				t.Fatalf("mincore: %v", errno)
			}
			resident := 0
			for _, v := range vec {
				resident += int(v & 1)
			}
			if resident > 1 {
				t.Errorf("100 bytes of a declared 512 MiB bulk arrived and %d pages (%d KiB) of its buffer are backed", resident, resident*int(page)>>10)
			}
		}}
		rd := NewReader(src, Limits{MaxBulkBytes: 1 << 30})
		rd.MayKeep = func(int) bool { return false }
		if _, err := rd.ReadCommand(); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("err = %v, want unexpected EOF", err)
		}
		rd.Release()
		if !checked {
			t.Fatal("the bulk was not received into an off-heap buffer")
		}
	})
	t.Run("heap", func(t *testing.T) {
		for { // as after a burst of connections that each hold a piece
			if _, ok := bigPieces.tryGet(); !ok {
				break
			}
		}
		var before, after runtime.MemStats
		src := &declaredThenStop{data: declared512 + strings.Repeat("x", 100), check: func([]byte) { runtime.ReadMemStats(&after) }}
		rd := NewReader(src, Limits{MaxBulkBytes: 1 << 30})
		runtime.ReadMemStats(&before)
		if _, err := rd.ReadCommand(); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("err = %v, want unexpected EOF", err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 512<<10 {
			t.Errorf("100 bytes of a declared 512 MiB bulk arrived and %d KiB were allocated", d>>10)
		}
	})
}
