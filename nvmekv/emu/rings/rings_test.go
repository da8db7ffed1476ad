package rings

import (
	"bytes"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/uring"
)

// skipf skips with reason, or fails when TIERCACHE_NO_SKIP=1 (CI as root).
func skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// testFile is a 1 MiB file of known bytes.
func testFile(t *testing.T) (*dev.File, []byte) {
	t.Helper()
	path := t.TempDir() + "/dev"
	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte(i*7 + i>>12)
	}
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := dev.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, want
}

func openRings(t *testing.T, d dev.Device, o Options) *Rings {
	t.Helper()
	r, err := Open(d, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// readWave runs one read of 4096 bytes per offset on a lane of the wave's
// size, into buffer 0, and returns the lane it took (released) and the
// bytes read.
func readWave(t *testing.T, r *Rings, offs []int64) (quick, batch bool, got [][]byte) {
	t.Helper()
	l := r.Lane(len(offs))
	defer l.Release()
	buf, d := r.Buffer(0), r.Device()
	var left atomic.Int32
	left.Store(int32(len(offs)))
	done := make(chan struct{}, 1)
	res := make([]int32, len(offs))
	reqs := make([]*uring.Request, len(offs))
	for i, off := range offs {
		mem := buf[i*4096 : (i+1)*4096]
		fixed := l.Fixed()
		reqs[i] = &uring.Request{
			Prep: func(s *uring.SQE) { d.PrepRead(s, mem, off, fixed, 0) },
			Done: func(cr uring.Result) {
				res[i] = d.Done(cr.Res, 4096)
				if left.Add(-1) == 0 {
					done <- struct{}{}
				}
			},
		}
	}
	if err := l.Run(reqs); err != nil {
		t.Fatal(err)
	}
	<-done
	for i := range offs {
		if res[i] != 4096 {
			t.Fatalf("read %d: %d", i, res[i])
		}
		got = append(got, bytes.Clone(buf[i*4096:(i+1)*4096]))
	}
	return l.Quick(), l.Batch(), got
}

// TestLanes: E15, E16, E19. A lone read takes the quick ring; a wave of
// more than QuickReads the main ring; a wave of BatchMin a batch ring,
// unless a read is in flight on the main ring; with IOPoll every wave
// takes a polled ring while one is free. Every lane reads the right bytes
// and the in-flight counts come back to zero.
func TestLanes(t *testing.T) {
	f, want := testFile(t)
	r := openRings(t, f, Options{Entries: 64, WaveEntries: 64, Buffers: []int{64 * 4096}})
	offs := func(n int) []int64 {
		o := make([]int64, n)
		for i := range o {
			o[i] = int64(i*4096*3) % (1 << 20)
		}
		return o
	}
	check := func(what string, o []int64, got [][]byte) {
		t.Helper()
		for i, b := range got {
			if !bytes.Equal(b, want[o[i]:o[i]+4096]) {
				t.Fatalf("%s: read %d returned other bytes", what, i)
			}
		}
	}
	if r.Quick() == nil {
		skipf(t, "no quick ring: the kernel refused SINGLE_ISSUER|DEFER_TASKRUN, so there is one plain ring")
	}
	if r.BatchRings() != BatchRings {
		skipf(t, "%d batch rings could be made, want %d", r.BatchRings(), BatchRings)
	}
	o := offs(1)
	q, b, got := readWave(t, r, o)
	check("lone read", o, got)
	if !q || b {
		t.Errorf("a lone read: quick %v batch %v, want the quick ring", q, b)
	}
	o = offs(QuickReads + 1)
	q, b, got = readWave(t, r, o)
	check("small wave", o, got)
	if q || b {
		t.Errorf("a wave of %d: quick %v batch %v, want the main ring", len(o), q, b)
	}
	o = offs(BatchMin)
	q, b, got = readWave(t, r, o)
	check("large wave", o, got)
	if q || !b {
		t.Errorf("a wave of %d: quick %v batch %v, want a batch ring", len(o), q, b)
	}
	hold := r.Lane(QuickReads + 1) // a read in flight on the main ring
	q, b, got = readWave(t, r, o)
	check("large wave while the main ring reads", o, got)
	if q || b {
		t.Errorf("a wave of %d while the main ring reads: quick %v batch %v, want the main ring", len(o), q, b)
	}
	o = offs(1)
	q, b, _ = readWave(t, r, o)
	if q || b {
		t.Errorf("a lone read while the main ring reads: quick %v batch %v, want the main ring", q, b)
	}
	hold.Release()
	if m, qk := r.InFlight(); m != 0 || qk != 0 || r.BatchRings() != BatchRings {
		t.Errorf("after every wave: %d on main, %d on quick, %d batch rings free", m, qk, r.BatchRings())
	}

	// With IOPoll every wave takes a polled ring while one is free (the
	// polled reads themselves need a device with poll queues: the QEMU
	// guest's TestNVMeIOPollOnPollQueues).
	p, err := Open(f, Options{Entries: 64, WaveEntries: 64, IOPoll: true, Buffers: []int{64 * 4096}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Quick() != nil || p.BatchRings() != PollRings {
		t.Fatalf("IOPoll: quick ring %v, %d polled rings; want none and %d", p.Quick() != nil, p.BatchRings(), PollRings)
	}
	var lanes []Lane
	for _, n := range []int{1, QuickReads + 1, BatchMin} {
		l := p.Lane(n)
		if n < BatchMin && (l.Quick() || !l.Batch()) {
			t.Errorf("IOPoll, a wave of %d: quick %v batch %v, want a polled ring", n, l.Quick(), l.Batch())
		}
		lanes = append(lanes, l)
	}
	if l := lanes[2]; l.Batch() {
		t.Errorf("IOPoll, a third wave while both polled rings are taken: batch %v, want the main ring", l.Batch())
	}
	for _, l := range lanes {
		l.Release()
	}
	if p.BatchRings() != PollRings {
		t.Errorf("%d polled rings free after release, want %d", p.BatchRings(), PollRings)
	}
}

// refusing is a file that refuses transfers at or past a limit before
// submission, and counts what reaches the kernel.
type refusing struct {
	*dev.File
	limit     int64
	submitted atomic.Int64
	maxXfer   int
}

func (r *refusing) MaxTransfer() int { return r.maxXfer }
func (r *refusing) Refuse(write bool, off int64, n int) (int32, bool) {
	if off+int64(n) > r.limit {
		return -int32(syscall.ERANGE), true
	}
	r.submitted.Add(1)
	return 0, false
}

// TestChunks: E17. Chunks splits at the device's largest transfer; Read of
// a span larger than it reads every piece into place; a piece the device
// refuses is never submitted and ends the read with the refusal; Write of
// a refused piece completes at once with it.
func TestChunks(t *testing.T) {
	f, want := testFile(t)
	d := &refusing{File: f, limit: 1 << 20, maxXfer: 16 << 10}
	r := openRings(t, d, Options{Entries: 64, Buffers: []int{256 << 10}})
	var sizes []int
	r.Chunks(make([]byte, 40<<10), 0, func(m []byte, off int64) { sizes = append(sizes, len(m)) })
	if len(sizes) != 3 || sizes[0] != 16<<10 || sizes[2] != 8<<10 {
		t.Fatalf("chunks of 40 KiB at 16 KiB: %v", sizes)
	}
	buf := r.Buffer(0)
	if n := r.ReadAt(buf[:200<<10], 4096, 0); n != 200<<10 || !bytes.Equal(buf[:200<<10], want[4096:4096+200<<10]) {
		t.Fatalf("ReadAt of 200 KiB in 16 KiB pieces: %d bytes", n)
	}
	if got := d.submitted.Load(); got != 13 {
		t.Fatalf("%d pieces submitted for 200 KiB, want 13", got)
	}
	d.submitted.Store(0)
	if n := r.ReadAt(buf[:64<<10], 1<<20-32<<10, 0); n != -int32(syscall.ERANGE) {
		t.Fatalf("ReadAt across the end: %d, want -ERANGE", n)
	}
	if got := d.submitted.Load(); got != 2 {
		t.Fatalf("%d pieces submitted of a read whose last pieces are refused, want the 2 before the end", got)
	}
	res := make(chan int32, 1)
	r.Write(buf[:4096], 1<<20, 0, func(n int32) { res <- n })
	if n := <-res; n != -int32(syscall.ERANGE) {
		t.Fatalf("Write past the end: %d, want -ERANGE", n)
	}
}

// TestFixedProbe: E23. On a file the kernel takes a transfer into part
// of a registered buffer, so the rings use them (Fixed), and a fixed
// read returns the file's bytes.
func TestFixedProbe(t *testing.T) {
	f, want := testFile(t)
	r := openRings(t, f, Options{Entries: 64, Buffers: []int{64 << 10, 128 << 10}})
	if !r.Fixed() {
		skipf(t, "buffers could not be registered (RLIMIT_MEMLOCK?)")
	}
	buf := r.Buffer(1)
	if n := r.ReadAt(buf[8192:8192+4096], 65536, 1); n != 4096 || !bytes.Equal(buf[8192:8192+4096], want[65536:65536+4096]) {
		t.Fatalf("a fixed read into part of buffer 1: %d bytes", n)
	}
}
