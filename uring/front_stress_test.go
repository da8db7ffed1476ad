package uring

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestFrontStress mixes, from many goroutines on a small ring: linked NOP
// groups up to the SQ size, Do of reads that only a cancel ends, Submit with
// callbacks and control calls. Every request completes exactly once and
// nothing hangs.
func TestFrontStress(t *testing.T) {
	iters := 400
	if testing.Short() {
		iters = 100
	}
	for _, v := range frontVariants {
		t.Run(v.name, func(t *testing.T) {
			opts := v.opts
			opts.Entries = 8
			// Not newFront: on a hang the test fails with the Front's state
			// instead of blocking in a cleanup Close.
			f, err := NewFront(FrontOptions{Ring: opts, MaxQueued: 4})
			if err != nil {
				t.Fatal(err)
			}
			var submitted, completed atomic.Int64
			var wg sync.WaitGroup
			for w := 0; w < 8; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 7))
					var p [2]int
					if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
						t.Error(err)
						return
					}
					defer unix.Close(p[0])
					defer unix.Close(p[1])
					buf := make([]byte, 4)
					for i := 0; i < iters; i++ {
						switch rng.IntN(4) {
						case 0: // a linked NOP group
							n := 1 + rng.IntN(f.MaxGroup())
							reqs := make([]*Request, n)
							for j := range reqs {
								reqs[j] = &Request{Prep: func(s *SQE) { s.PrepNop(); s.Flags |= FlagIOLink }}
							}
							res, err := f.Do(context.Background(), reqs...)
							if err != nil || len(res) != n {
								t.Errorf("Do group of %d: %v", n, err)
								return
							}
							for _, r := range res {
								if r.Res != 0 {
									t.Errorf("NOP in group res %d", r.Res)
								}
							}
						case 1: // a read only the cancel ends
							ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(300))*time.Microsecond)
							res, err := f.Do(ctx, &Request{Prep: func(s *SQE) { s.PrepRead(int32(p[0]), buf, 0) }, Pin: [][]byte{buf}})
							cancel()
							if !errors.Is(err, context.DeadlineExceeded) {
								t.Errorf("stuck read Do: %v", err)
							} else if e := res[0].Err(); !errors.Is(e, unix.ECANCELED) && !errors.Is(e, unix.EINTR) {
								t.Errorf("stuck read res %d", res[0].Res)
							}
						case 2: // fire and forget
							submitted.Add(1)
							if err := f.Submit(&Request{Prep: func(s *SQE) { s.PrepNop() }, Done: func(Result) { completed.Add(1) }}); err != nil {
								t.Errorf("Submit: %v", err)
							}
						case 3:
							if _, err := f.Probe(); err != nil {
								t.Errorf("Probe: %v", err)
							}
						}
					}
				}(w)
			}
			fin := make(chan struct{})
			go func() { wg.Wait(); close(fin) }()
			select {
			case <-fin:
			case <-time.After(60 * time.Second):
				r := f.ring
				t.Fatalf("hang on %s: sqHead %d sqTail %d sqeTail %d sqFlags %#x cqHead %d cqTail %d overflow %d free %d/%d efdArmed %v sleeping %v nq %d nattn %d backlog %d bpos %d cancels %d stats %+v",
					v.name, atomic.LoadUint32(r.sqHead), atomic.LoadUint32(r.sqTail), r.sqeTail, atomic.LoadUint32(r.sqFlags),
					atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail), atomic.LoadUint32(r.cqOverflow), len(f.free), len(f.slots), f.efdArmed, f.sleeping.Load(), f.nq.Load(), f.nattn.Load(), len(f.backlog), f.bpos, len(f.cancels), f.Stats())
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if submitted.Load() != completed.Load() {
				t.Fatalf("%d submitted, %d completed", submitted.Load(), completed.Load())
			}
		})
	}
}

// TestFrontCloseRace: Close while goroutines submit; every accepted
// request completes exactly once, the rest get ErrClosed.
func TestFrontCloseRace(t *testing.T) {
	for round := 0; round < 20; round++ {
		f, err := NewFront(FrontOptions{Ring: Options{Entries: 8}})
		if err != nil {
			t.Fatal(err)
		}
		var accepted, completed atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					err := f.Submit(&Request{Prep: func(s *SQE) { s.PrepNop() }, Done: func(Result) { completed.Add(1) }})
					if errors.Is(err, ErrClosed) {
						return
					}
					if err != nil {
						t.Errorf("Submit: %v", err)
						return
					}
					accepted.Add(1)
				}
			}()
		}
		time.Sleep(time.Millisecond)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if accepted.Load() != completed.Load() {
			t.Fatalf("round %d: %d accepted, %d completed", round, accepted.Load(), completed.Load())
		}
	}
}
