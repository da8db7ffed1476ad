package uring

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunEach reads 100 random 512-byte blocks of a file on a ring with 8
// SQ entries: every Done runs once with its own block's bytes, each SQE
// reaches the kernel before the next is prepared (an enter of its own),
// and no more than 8 are ever in flight.
func TestRunEach(t *testing.T) {
	const blocks, bs, n = 256, 512, 100
	r := newRing(t, Options{Entries: 8})
	f, _ := tempFile(t, 0, 0)
	data := make([]byte, blocks*bs)
	for i := range blocks {
		binary.LittleEndian.PutUint64(data[i*bs:], uint64(i)+1)
		fill(data[i*bs+8:(i+1)*bs], byte(i))
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	fd := int32(f.Fd())
	reqs := make([]*Request, n)
	bufs := make([][]byte, n)
	want := make([]int, n)
	calls := make([]int, n)
	inFlight, most := 0, 0
	for i := range reqs {
		want[i] = rand.IntN(blocks)
		bufs[i] = make([]byte, bs) // Go memory: RunEach pins it (Pin)
		reqs[i] = &Request{
			Pin: [][]byte{bufs[i]},
			Prep: func(s *SQE) {
				if got := r.SQReady(); got != 1 {
					t.Errorf("request %d prepared with %d SQEs not taken by the kernel, want only its own", i, got)
				}
				inFlight++
				most = max(most, inFlight)
				s.PrepRead(fd, bufs[i], uint64(want[i]*bs))
				s.Flags |= FlagIOLink // cleared: the requests are independent
			},
			Done: func(res Result) {
				inFlight--
				calls[i]++
				if res.Res != bs {
					t.Errorf("request %d: res %d, want %d", i, res.Res, bs)
				}
			},
		}
	}
	if err := r.RunEach(reqs, RunWatch{}); err != nil {
		t.Fatal(err)
	}
	for i := range reqs {
		if calls[i] != 1 {
			t.Fatalf("request %d: Done ran %d times, want 1", i, calls[i])
		}
		if b := want[i]; !bytes.Equal(bufs[i], data[b*bs:(b+1)*bs]) {
			t.Fatalf("request %d: read other bytes than block %d", i, b)
		}
	}
	if most > 8 {
		t.Fatalf("%d requests in flight at once on a ring of 8 SQ entries", most)
	}
	if most < 2 {
		t.Fatalf("at most %d request in flight: RunEach did not overlap requests", most)
	}
}

// TestRunEachErrors: a request that fails in the kernel completes with its
// errno while the others succeed; on a closed ring every request completes
// with ECANCELED and RunEach returns ErrClosed; so on an SQPOLL ring,
// which RunEach refuses.
func TestRunEachErrors(t *testing.T) {
	r, err := New(Options{Entries: 4})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := tempFile(t, 4096, 0)
	buf := alignedBuf(t, 3*512)
	res := make([]int32, 3)
	reqs := make([]*Request, 3)
	for i := range reqs {
		fd := int32(f.Fd())
		if i == 1 {
			fd = -1
		}
		reqs[i] = &Request{
			Prep: func(s *SQE) { s.PrepRead(fd, buf[i*512:(i+1)*512], 0) },
			Done: func(rs Result) { res[i] = rs.Res },
		}
	}
	if err := r.RunEach(reqs, RunWatch{}); err != nil {
		t.Fatal(err)
	}
	if res[0] != 512 || res[1] != -int32(syscall.EBADF) || res[2] != 512 {
		t.Fatalf("results %v, want [512 %d 512]", res, -int32(syscall.EBADF))
	}
	r.Close()
	clear(res)
	if err := r.RunEach(reqs, RunWatch{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("RunEach on a closed ring: %v, want ErrClosed", err)
	}
	for i, x := range res {
		if x != -int32(syscall.ECANCELED) {
			t.Fatalf("request %d on a closed ring: res %d, want -ECANCELED", i, x)
		}
	}
	sq := newRing(t, Options{Entries: 4, SQPoll: true})
	clear(res)
	if err := sq.RunEach(reqs, RunWatch{}); err == nil || !strings.Contains(err.Error(), "SQPOLL") {
		t.Fatalf("RunEach on an SQPOLL ring: %v, want a refusal naming SQPOLL", err)
	}
	for i, x := range res {
		if x != -int32(syscall.ECANCELED) {
			t.Fatalf("request %d on an SQPOLL ring: res %d, want -ECANCELED", i, x)
		}
	}
}

// TestRunEachStall: a read of a pipe nobody writes is reported stalled
// once, with one request in flight, while a read of a file completed; it
// is not cancelled, and completes when the pipe is written.
func TestRunEachStall(t *testing.T) {
	r := newRing(t, Options{Entries: 4})
	if r.features&FeatExtArg == 0 {
		skipOrFail(t, "io_uring without IORING_FEAT_EXT_ARG: RunEach cannot time its waits")
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	f, _ := tempFile(t, 4096, 0)
	buf := alignedBuf(t, 2*512)
	res := []int32{-1, -1}
	fds := []int32{int32(f.Fd()), int32(p[0])}
	reqs := make([]*Request, 2)
	for i := range reqs {
		reqs[i] = &Request{
			Prep: func(s *SQE) { s.PrepRead(fds[i], buf[i*512:(i+1)*512], 0) },
			Done: func(rs Result) { res[i] = rs.Res },
		}
	}
	var stalls []int
	w := RunWatch{StallAfter: 20 * time.Millisecond, Stalled: func(n int) {
		stalls = append(stalls, n)
		if len(stalls) == 1 {
			go func() {
				time.Sleep(100 * time.Millisecond) // several StallAfters: one report only
				syscall.Write(p[1], []byte("late"))
			}()
		}
	}}
	if err := r.RunEach(reqs, w); err != nil {
		t.Fatal(err)
	}
	if len(stalls) != 1 || stalls[0] != 1 {
		t.Fatalf("stall reports %v, want one, of 1 request in flight", stalls)
	}
	if res[0] != 512 || res[1] != 4 {
		t.Fatalf("results %v, want [512 4]", res)
	}
}
