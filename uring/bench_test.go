package uring

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Flags for BenchmarkRandRead (used by scripts/bench-uring).
var (
	benchFile = flag.String("uring.file", "", "BenchmarkRandRead: file to read (default: a 64 MiB temp file)")
	benchQD   = flag.Int("uring.qd", 8, "BenchmarkRandRead: queue depth")
	benchOff  = flag.Int64("uring.offset", 0, "BenchmarkRandRead*: first byte of the span read (a multiple of 4096)")
	benchSize = flag.Int64("uring.size", 0, "BenchmarkRandRead*: bytes of the span read (0: to the end of the file), as fio's --offset and --size")
)

// benchSpan is the span BenchmarkRandRead* read: its first offset and its
// number of 4096-byte blocks. A file with holes reads them without I/O, so
// a peer run of fio and these must read the same written span.
func benchSpan(b *testing.B, fileSize int64) (base, blocks uint64) {
	const bs = 4096
	off, size := *benchOff, *benchSize
	if size == 0 {
		size = fileSize - off
	}
	if off < 0 || off%bs != 0 || size < bs || off+size > fileSize {
		b.Fatalf("-uring.offset %d -uring.size %d: not a span of whole 4096-byte blocks inside the %d-byte file", off, size, fileSize)
	}
	return uint64(off), uint64(size / bs)
}

// BenchmarkRingNop: NOP submit+reap on a raw ring, batches of 1 and 32 per
// io_uring_enter; ns/op is per NOP.
func BenchmarkRingNop(b *testing.B) {
	for _, batch := range []int{1, 32, 128} {
		b.Run("batch"+itoa(batch), func(b *testing.B) {
			r := newRing(b, Options{Entries: 128})
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for done := 0; done < b.N; {
				n := min(batch, b.N-done)
				for i := 0; i < n; i++ {
					r.NextSQE().PrepNop()
				}
				if _, err := r.SubmitAndWait(uint32(n)); err != nil {
					b.Fatal(err)
				}
				done += r.ForEachCQE(func(*CQE) {})
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
		})
	}
}

// BenchmarkFrontNop: NOPs through a Front from GOMAXPROCS goroutines, each
// keeping a window of 64 requests in flight; ns/op is per NOP.
func BenchmarkFrontNop(b *testing.B) {
	for _, v := range []struct {
		name string
		opts Options
	}{
		{"plain", Options{Entries: 256}},
		{"single-defer", Options{Entries: 256, SingleIssuer: true, DeferTaskrun: true}},
	} {
		b.Run(v.name, func(b *testing.B) {
			f := newFront(b, FrontOptions{Ring: v.opts})
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				const window = 64
				back := make(chan *Request, window)
				for i := 0; i < window; i++ {
					req := &Request{Prep: func(s *SQE) { s.PrepNop() }}
					req.Done = func(Result) { back <- req }
					back <- req
				}
				for pb.Next() {
					if err := f.Submit(<-back); err != nil {
						b.Error(err)
						return
					}
				}
				for i := 0; i < window; i++ {
					<-back
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
		})
	}
}

// BenchmarkFrontDoNop: one NOP per Do, GOMAXPROCS goroutines (latency of the
// synchronous path).
func BenchmarkFrontDoNop(b *testing.B) {
	f := newFront(b, FrontOptions{Ring: Options{Entries: 256}})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		req := &Request{Prep: func(s *SQE) { s.PrepNop() }}
		for pb.Next() {
			if _, err := f.Do(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
}

// BenchmarkRandRead: 4 KiB O_DIRECT random reads at queue depth -uring.qd on
// -uring.file, one goroutine driving a raw ring (submit replacements and wait
// for at least one completion per io_uring_enter, as fio's io_uring engine
// does). Reports IOPS.
func BenchmarkRandRead(b *testing.B) { randRead(b, false) }

// BenchmarkRandReadEach: the same, each replacement handed to the kernel
// by an io_uring_enter of its own as soon as it is prepared (fio's default
// iodepth_batch=1; Ring.RunEach's way).
func BenchmarkRandReadEach(b *testing.B) { randRead(b, true) }

func randRead(b *testing.B, each bool) {
	const bs = 4096
	path := *benchFile
	if path == "" {
		f, p := tempFile(b, 64<<20, 0)
		buf := make([]byte, 1<<20)
		for off := int64(0); off < 64<<20; off += int64(len(buf)) {
			if _, err := f.WriteAt(buf, off); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		path = p
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	base, blocks := benchSpan(b, st.Size())
	qd := *benchQD
	if qd < 1 {
		b.Fatalf("-uring.qd %d must be at least 1", qd)
	}
	r := newRing(b, Options{Entries: uint32(max(qd, 8))})
	mem := alignedBuf(b, qd*bs)
	fd := int32(f.Fd())
	rng := uint64(0x9E3779B97F4A7C15)
	next := func() uint64 { // xorshift64
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return base + (rng%blocks)*bs
	}
	issue := func(slot int) {
		s := r.NextSQE()
		s.PrepRead(fd, mem[slot*bs:(slot+1)*bs], next())
		s.UserData = uint64(slot)
		if each {
			if _, err := r.Submit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.SetBytes(bs)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	issued := 0
	for ; issued < min(qd, b.N); issued++ {
		issue(issued)
	}
	var failed error
	for done := 0; done < b.N; {
		if _, err := r.SubmitAndWait(1); err != nil {
			b.Fatal(err)
		}
		done += r.ForEachCQE(func(c *CQE) {
			if c.Res != bs && failed == nil {
				failed = Result{Res: c.Res}.Err()
				if failed == nil {
					failed = unix.EIO // short read
				}
			}
			if issued < b.N {
				issue(int(c.UserData))
				issued++
			}
		})
		if failed != nil {
			b.Fatalf("read failed: %v", failed)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "IOPS")
}

// BenchmarkRandReadFront: the same reads through a Front, -uring.qd
// goroutines each doing one Do at a time.
func BenchmarkRandReadFront(b *testing.B) {
	const bs = 4096
	path := *benchFile
	if path == "" {
		b.Skip("needs -uring.file (scripts/bench-uring)")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	base, blocks := benchSpan(b, st.Size())
	qd := *benchQD
	fr := newFront(b, FrontOptions{Ring: Options{Entries: uint32(max(qd, 8))}})
	mem := alignedBuf(b, qd*bs)
	fd := int32(f.Fd())
	var mu sync.Mutex
	left := b.N
	b.SetBytes(bs)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < qd; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := uint64(w)*0x9E3779B97F4A7C15 + 1
			buf := mem[w*bs : (w+1)*bs]
			var off uint64
			req := &Request{Prep: func(s *SQE) { s.PrepRead(fd, buf, off) }}
			for {
				mu.Lock()
				if left == 0 {
					mu.Unlock()
					return
				}
				left--
				mu.Unlock()
				rng ^= rng << 13
				rng ^= rng >> 7
				rng ^= rng << 17
				off = base + (rng%blocks)*bs
				res, err := fr.Do(context.Background(), req)
				if err != nil || res[0].Res != bs {
					b.Errorf("read: %v %+v", err, res)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "IOPS")
	runtime.KeepAlive(mem)
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// BenchmarkRandReadFrontCB: the same reads through a Front, callback style:
// -uring.qd requests, each Done resubmits its request (no goroutine per
// request, as the flusher and the emulated namespace use the Front).
func BenchmarkRandReadFrontCB(b *testing.B) {
	const bs = 4096
	path := *benchFile
	if path == "" {
		b.Skip("needs -uring.file (scripts/bench-uring)")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	base, blocks := benchSpan(b, st.Size())
	qd := *benchQD
	fr := newFront(b, FrontOptions{Ring: Options{Entries: uint32(max(qd, 8))}})
	mem := alignedBuf(b, qd*bs)
	fd := int32(f.Fd())
	rng := uint64(0x9E3779B97F4A7C15)
	issued, done := 0, 0 // touched only by Done (owner goroutine) after the start
	finished := make(chan error, 1)
	reqs := make([]*Request, qd)
	offs := make([]uint64, qd)
	next := func(i int) {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		offs[i] = base + (rng%blocks)*bs
		issued++
	}
	for i := range reqs {
		buf := mem[i*bs : (i+1)*bs]
		reqs[i] = &Request{Prep: func(s *SQE) { s.PrepRead(fd, buf, offs[i]) }}
		reqs[i].Done = func(r Result) {
			done++
			if r.Res != bs {
				select {
				case finished <- fmt.Errorf("read res %d", r.Res):
				default:
				}
				return
			}
			if done == b.N {
				finished <- nil
				return
			}
			if issued < b.N {
				next(i)
				if err := fr.Submit(reqs[i]); err != nil {
					finished <- err
				}
			}
		}
	}
	b.SetBytes(bs)
	b.ResetTimer()
	start := time.Now()
	n := min(qd, b.N)
	for i := 0; i < n; i++ {
		next(i)
	}
	if err := fr.Submit(reqs[:n]...); err != nil { // one group: all start together
		b.Fatal(err)
	}
	if err := <-finished; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "IOPS")
}
