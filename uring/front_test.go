package uring

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

func newFront(t testing.TB, opts FrontOptions) *Front {
	t.Helper()
	f, err := NewFront(opts)
	if err != nil {
		t.Fatalf("NewFront: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("Front.Close: %v", err)
		}
	})
	return f
}

// frontVariants are the ring flavours every Front test runs on.
var frontVariants = []struct {
	name string
	opts Options
}{
	{"plain", Options{Entries: 64}},
	{"single-defer", Options{Entries: 64, SingleIssuer: true, DeferTaskrun: true, CoopTaskrun: true}},
	{"big-nosqarray", Options{Entries: 32, SQE128: true, CQE32: true, NoSQArray: true}},
	{"sqpoll", Options{Entries: 64, SQPoll: true, SQThreadCPU: -1, SQThreadIdle: 2 * time.Millisecond}},
}

// TestFrontNOPsExactlyOnce: 1,000,000 NOPs (100,000 under -short) from 8
// goroutines; every completion is delivered exactly once.
func TestFrontNOPsExactlyOnce(t *testing.T) {
	total := 1_000_000
	if testing.Short() {
		total = 100_000
	}
	for _, v := range frontVariants {
		t.Run(v.name, func(t *testing.T) {
			n := total
			if v.name != "plain" {
				n = total / 10
			}
			f := newFront(t, FrontOptions{Ring: v.opts})
			const workers = 8
			per := n / workers
			counts := make([]atomic.Uint32, n)
			var wg sync.WaitGroup
			var doneAll sync.WaitGroup
			doneAll.Add(workers * per)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := 0; i < per; i++ {
						id := w*per + i
						req := &Request{
							Prep: func(s *SQE) { s.PrepNop() },
							Done: func(r Result) {
								if r.Res != 0 {
									t.Errorf("NOP %d res %d", id, r.Res)
								}
								counts[id].Add(1)
								doneAll.Done()
							},
						}
						if err := f.Submit(req); err != nil {
							t.Errorf("Submit: %v", err)
							doneAll.Done()
							return
						}
					}
				}(w)
			}
			wg.Wait()
			doneAll.Wait()
			for id := 0; id < workers*per; id++ {
				if c := counts[id].Load(); c != 1 {
					t.Fatalf("NOP %d completed %d times", id, c)
				}
			}
			st := f.Stats()
			if st.EnterErrors != 0 {
				t.Fatalf("%d enter errors, last %v", st.EnterErrors, st.LastError)
			}
			t.Logf("%+v", st)
		})
	}
}

func TestFrontDoReadWrite(t *testing.T) {
	for _, v := range frontVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFront(t, FrontOptions{Ring: v.opts})
			file, _ := tempFile(t, 0, 0)
			fd := int32(file.Fd())
			w := make([]byte, 10000) // Go heap memory: pinned by the Front
			fill(w, 11)
			rb := make([]byte, 10000)
			res, err := f.Do(context.Background(),
				&Request{Prep: func(s *SQE) { s.PrepWrite(fd, w, 0); s.Flags |= FlagIOLink }, Pin: [][]byte{w}},
				&Request{Prep: func(s *SQE) { s.PrepFsync(fd, true); s.Flags |= FlagIOLink }},
				&Request{Prep: func(s *SQE) { s.PrepRead(fd, rb, 0) }, Pin: [][]byte{rb}},
			)
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			if res[0].Res != 10000 || res[1].Res != 0 || res[2].Res != 10000 || !bytes.Equal(w, rb) {
				t.Fatalf("results %+v, data equal %v", res, bytes.Equal(w, rb))
			}
		})
	}
}

func TestFrontSubmitErrors(t *testing.T) {
	f := newFront(t, FrontOptions{Ring: Options{Entries: 8}})
	reqs := make([]*Request, f.MaxGroup()+1)
	for i := range reqs {
		reqs[i] = &Request{Prep: func(s *SQE) { s.PrepNop() }}
	}
	if err := f.Submit(reqs...); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Submit of %d requests: %v, want ErrTooLarge", len(reqs), err)
	}
	if err := f.Submit(&Request{}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("Submit without Prep: %v, want ErrBadRequest", err)
	}
	if f.MaxGroup() != 8 {
		t.Fatalf("MaxGroup %d, want the SQ size 8", f.MaxGroup())
	}
	for i := 0; i < 20; i++ { // a full-SQ group fits even right after the eventfd re-arm
		res, err := f.Do(context.Background(), reqs[:f.MaxGroup()]...)
		if err != nil || len(res) != f.MaxGroup() {
			t.Fatalf("Do of MaxGroup NOPs: %d results, %v", len(res), err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Submit(reqs[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Close: %v, want ErrClosed", err)
	}
	if _, err := f.Probe(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Probe after Close: %v, want ErrClosed", err)
	}
}

// TestFrontDoCancel: a read on an empty pipe never completes by itself; when
// Do's context ends the Front cancels it and Do returns ctx.Err() after the
// completion (-ECANCELED or -EINTR).
func TestFrontDoCancel(t *testing.T) {
	f := newFront(t, FrontOptions{Ring: Options{Entries: 8}})
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	res, err := f.Do(ctx, &Request{Prep: func(s *SQE) { s.PrepRead(int32(p[0]), buf, 0) }, Pin: [][]byte{buf}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do: %v, want DeadlineExceeded", err)
	}
	if e := res[0].Err(); !errors.Is(e, unix.ECANCELED) && !errors.Is(e, unix.EINTR) {
		t.Fatalf("cancelled read res %d, want -ECANCELED or -EINTR", res[0].Res)
	}
}

// TestFrontSingleIssuerNoEEXIST: many goroutines submit while the scheduler
// is pushed to move goroutines between threads; the owner stays on its
// thread, so the kernel never answers EEXIST.
func TestFrontSingleIssuerNoEEXIST(t *testing.T) {
	// First prove the premise: an enter from a foreign thread is refused.
	r := newRingOnThread(t, Options{Entries: 4, SingleIssuer: true})
	if err := foreignEnter(r); !errors.Is(err, unix.EEXIST) {
		t.Fatalf("enter from a foreign thread: %v, want EEXIST", err)
	}

	old := runtime.GOMAXPROCS(8)
	defer runtime.GOMAXPROCS(old)
	for _, defer_ := range []bool{false, true} {
		f := newFront(t, FrontOptions{Ring: Options{Entries: 16, SingleIssuer: true, DeferTaskrun: defer_}})
		n := 20000
		if testing.Short() {
			n = 4000
		}
		var wg sync.WaitGroup
		var got atomic.Int64
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < n/16; i++ {
					if i%7 == 0 {
						runtime.Gosched()
					}
					if i%101 == 0 {
						runtime.GC() // stop-the-world moves goroutines around
					}
					res, err := f.Do(context.Background(), &Request{Prep: func(s *SQE) { s.PrepNop() }})
					if err != nil || res[0].Res != 0 {
						t.Errorf("Do: %v %+v", err, res)
						return
					}
					got.Add(1)
				}
			}()
		}
		for i := 0; i < 50; i++ { // register/probe calls from foreign goroutines too
			if _, err := f.Probe(); err != nil {
				t.Fatalf("Probe: %v", err)
			}
		}
		wg.Wait()
		st := f.Stats()
		if st.EnterErrors != 0 || errors.Is(st.LastError, unix.EEXIST) {
			t.Fatalf("defer=%v: %d enter errors, last %v", defer_, st.EnterErrors, st.LastError)
		}
		if got.Load() != int64(n/16*16) {
			t.Fatalf("%d of %d requests completed", got.Load(), n/16*16)
		}
	}
}

// newRingOnThread creates a ring on a goroutine locked to a thread that stays
// alive (and locked) until cleanup.
func newRingOnThread(t *testing.T, opts Options) *Ring {
	type out struct {
		r   *Ring
		err error
	}
	ch := make(chan out)
	stop := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r, err := New(opts)
		ch <- out{r, err}
		<-stop
		if r != nil {
			r.Close()
		}
	}()
	o := <-ch
	t.Cleanup(func() { close(stop) })
	if o.err != nil {
		t.Fatalf("New: %v", o.err)
	}
	return o.r
}

// foreignEnter submits a NOP to r from a new thread.
func foreignEnter(r *Ring) error {
	ch := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		s := r.NextSQE()
		s.PrepNop()
		_, err := r.SubmitAndWait(1)
		ch <- err
	}()
	return <-ch
}

func TestFrontRegisterAndProbe(t *testing.T) {
	f := newFront(t, FrontOptions{Ring: Options{Entries: 8, SingleIssuer: true}})
	p, err := f.Probe()
	if err != nil || !p.Supported(OpUringCmd) {
		t.Fatalf("Probe: %v, URING_CMD supported %v", err, err == nil && p.Supported(OpUringCmd))
	}
	file, _ := tempFile(t, 0, 0)
	buf := alignedBuf(t, 4096)
	fill(buf, 77)
	if err := f.RegisterBuffers([][]byte{buf}); err != nil {
		t.Fatalf("RegisterBuffers: %v", err)
	}
	if err := f.RegisterFiles([]int{int(file.Fd())}); err != nil {
		t.Fatalf("RegisterFiles: %v", err)
	}
	res, err := f.Do(context.Background(), &Request{Prep: func(s *SQE) {
		s.PrepWriteFixed(0, buf, 0, 0)
		s.Flags |= FlagFixedFile
	}})
	if err != nil || res[0].Res != 4096 {
		t.Fatalf("write_fixed through the Front: %v %+v", err, res)
	}
	got := make([]byte, 4096)
	if _, err := file.ReadAt(got, 0); err != nil || !bytes.Equal(got, buf) {
		t.Fatalf("file content after write_fixed differs (%v)", err)
	}
	if err := f.UnregisterBuffers(); err != nil {
		t.Fatal(err)
	}
	if err := f.UnregisterFiles(); err != nil {
		t.Fatal(err)
	}
}

// TestFrontCloseCancelsStuck: Close with a read on an empty pipe in flight
// cancels it after CloseGrace; its Done still runs exactly once.
func TestFrontCloseCancelsStuck(t *testing.T) {
	f, err := NewFront(FrontOptions{Ring: Options{Entries: 8}, CloseGrace: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 8)
	results := make(chan Result, 2)
	for i := 0; i < 2; i++ {
		if err := f.Submit(&Request{Prep: func(s *SQE) { s.PrepRead(int32(p[0]), buf, 0) }, Pin: [][]byte{buf},
			Done: func(r Result) { results <- r }}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i := 0; i < 2; i++ {
		select {
		case r := <-results:
			if e := r.Err(); !errors.Is(e, unix.ECANCELED) && !errors.Is(e, unix.EINTR) {
				t.Fatalf("stuck read res %d, want -ECANCELED or -EINTR", r.Res)
			}
		default:
			t.Fatalf("Close returned before request %d completed", i)
		}
	}
	if len(results) != 0 {
		t.Fatal("a Done ran twice")
	}
}

// TestFrontGroupBoundary: a group's trailing IO_LINK is cleared, so a failing
// group never cancels the next one; inside a group the chain holds.
func TestFrontGroupBoundary(t *testing.T) {
	f := newFront(t, FrontOptions{Ring: Options{Entries: 16}})
	buf := make([]byte, 8)
	for i := 0; i < 200; i++ {
		var a, b1, b2 Result
		var wg sync.WaitGroup
		wg.Add(3)
		err1 := f.Submit(&Request{Prep: func(s *SQE) { s.PrepRead(-1, buf, 0); s.Flags |= FlagIOLink }, Pin: [][]byte{buf},
			Done: func(r Result) { a = r; wg.Done() }})
		err2 := f.Submit(
			&Request{Prep: func(s *SQE) { s.PrepRead(-1, buf, 0); s.Flags |= FlagIOLink }, Pin: [][]byte{buf}, Done: func(r Result) { b1 = r; wg.Done() }},
			&Request{Prep: func(s *SQE) { s.PrepNop() }, Done: func(r Result) { b2 = r; wg.Done() }})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		wg.Wait()
		if a.Res != -int32(unix.EBADF) || b1.Res != -int32(unix.EBADF) || b2.Res != -int32(unix.ECANCELED) {
			t.Fatalf("round %d: results %d, %d, %d; want -EBADF, -EBADF, -ECANCELED", i, a.Res, b1.Res, b2.Res)
		}
	}
}

func TestFrontNoGoroutineLeak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, v := range frontVariants {
		f, err := NewFront(FrontOptions{Ring: v.opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Do(context.Background(), &Request{Prep: func(s *SQE) { s.PrepNop() }}); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFrontDoCancelQueued: a Do whose request is still queued (every slot
// is held by a stuck read) when its context ends completes with -ECANCELED
// without reaching the kernel.
func TestFrontDoCancelQueued(t *testing.T) {
	f := newFront(t, FrontOptions{Ring: Options{Entries: 4, CQEntries: 4}, CloseGrace: time.Millisecond})
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 1)
	stuck := make(chan Result, 8)
	for i := 0; i < 3; i++ { // CQ 4 = 3 slots + the eventfd read
		if err := f.Submit(&Request{Prep: func(s *SQE) { s.PrepRead(int32(p[0]), buf, 0) }, Pin: [][]byte{buf},
			Done: func(r Result) { stuck <- r }}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	ran := false
	res, err := f.Do(ctx, &Request{Prep: func(s *SQE) { ran = true; s.PrepNop() }})
	if !errors.Is(err, context.DeadlineExceeded) || res[0].Res != -int32(unix.ECANCELED) || ran {
		t.Fatalf("queued Do: err %v res %+v prepared %v; want DeadlineExceeded, -ECANCELED, not prepared", err, res, ran)
	}
	if _, err := unix.Write(p[1], []byte("abc")); err != nil { // release the stuck reads
		t.Fatal(err)
	}
	if r := <-stuck; r.Res != 1 {
		t.Fatalf("released read res %d, want 1", r.Res)
	}
}

// TestFrontResubmitFromDone: Done may Submit (it never waits, even when the
// queue is full), so a request can keep itself going.
func TestFrontResubmitFromDone(t *testing.T) {
	f := newFront(t, FrontOptions{Ring: Options{Entries: 8}, MaxQueued: 1})
	const chains, hops = 16, 2000
	var wg sync.WaitGroup
	wg.Add(chains)
	for c := 0; c < chains; c++ {
		left := hops
		var req *Request
		req = &Request{Prep: func(s *SQE) { s.PrepNop() }, Done: func(r Result) {
			left--
			if left == 0 {
				wg.Done()
				return
			}
			if err := f.Submit(req); err != nil {
				t.Errorf("Submit from Done: %v", err)
				wg.Done()
			}
		}}
		if err := f.Submit(req); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if st := f.Stats(); st.Completed != chains*hops {
		t.Fatalf("%d completions, want %d", st.Completed, chains*hops)
	}
}

// TestFrontOneP (U15): with GOMAXPROCS=1, 32 goroutines each keep one
// O_DIRECT 4 KiB read of a file in flight (completed by the disk's
// interrupt). Their next reads must share io_uring_enter calls: an owner
// that went to sleep in the kernel holding the only P took them one per
// wake-up (one enter and one eventfd wake-up per read), the goroutines
// running only when sysmon took the P back.
func TestFrontOneP(t *testing.T) {
	const workers, each, bs = 32, 40, 4096
	f, _ := tempFile(t, 16<<20, unix.O_DIRECT)
	if _, err := f.WriteAt(alignedBuf(t, 16<<20), 0); err != nil { // real blocks, not a hole
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	mem := alignedBuf(t, workers*bs)
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	for _, v := range frontVariants {
		if v.opts.SQPoll {
			continue // the SQ thread submits: no enter per request to count
		}
		t.Run(v.name, func(t *testing.T) {
			fr := newFront(t, FrontOptions{Ring: v.opts})
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					buf := mem[w*bs : (w+1)*bs]
					var off uint64
					req := &Request{Prep: func(s *SQE) { s.PrepRead(int32(f.Fd()), buf, off) }}
					for i := 0; i < each; i++ {
						off = uint64((w*each+i)*7919%4096) * bs
						res, err := fr.Do(context.Background(), req)
						if err != nil || res[0].Res != bs {
							t.Errorf("read: %v %+v", err, res)
							return
						}
					}
				}()
			}
			wg.Wait()
			st := fr.Stats()
			per := float64(st.Enters) / float64(st.Completed)
			t.Logf("%d reads: %d enters (%.3f per read), %d wake-ups", st.Completed, st.Enters, per, st.Wakeups)
			if per > 0.25 {
				t.Errorf("%.3f enters per read at GOMAXPROCS=1 (%d enters, %d wake-ups for %d reads), want at most 0.25: "+
					"the owner sleeps in the kernel holding the only P while submitters wait to run", per, st.Enters, st.Wakeups, st.Completed)
			}
		})
	}
}
