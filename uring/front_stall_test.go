package uring

import (
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"
)

// waitFor polls cond every millisecond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// pipeRead submits an 8-byte read of an empty pipe through f: it stays in
// flight until something is written to p[1]. The pipe is closed at cleanup.
func pipeRead(t *testing.T, f *Front) (p [2]int, buf []byte, done <-chan Result) {
	t.Helper()
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	buf = make([]byte, 8)
	res := make(chan Result, 1)
	if err := f.Submit(&Request{Prep: func(s *SQE) { s.PrepRead(int32(p[0]), buf, 0) }, Pin: [][]byte{buf},
		Done: func(r Result) { res <- r }}); err != nil {
		t.Fatal(err)
	}
	return p, buf, res
}

// TestFrontStall: a read on an empty pipe stays in flight; past StallAfter
// it is reported once (a warning naming its opcode and fd, Stats.Stalled)
// and OldestInFlight shows its age. It is not cancelled: once the pipe has
// data it completes with that data, the completion is logged, and
// OldestInFlight goes back to 0.
func TestFrontStall(t *testing.T) {
	const stallAfter = 40 * time.Millisecond
	core, logs := observer.New(zapcore.WarnLevel)
	f := newFront(t, FrontOptions{Ring: Options{Entries: 8}, StallAfter: stallAfter, Logger: zap.New(core)})
	start := time.Now()
	p, buf, done := pipeRead(t, f)
	// A request that completes at once is never reported.
	if _, err := f.Do(t.Context(), &Request{Prep: func(s *SQE) { s.PrepNop() }}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the read to be reported as stalled", func() bool { return f.Stats().Stalled == 1 })
	if age := time.Since(start); age < stallAfter {
		t.Fatalf("reported as stalled after %v, before StallAfter %v", age, stallAfter)
	}
	if st := f.Stats(); st.OldestInFlight < stallAfter {
		t.Fatalf("OldestInFlight %v, want >= %v with the read stalled", st.OldestInFlight, stallAfter)
	}
	warned := logs.FilterMessageSnippet("stalled in the kernel").All()
	if len(warned) != 1 {
		t.Fatalf("%d stall warnings, want 1: %v", len(warned), logs.All())
	}
	fields := warned[0].ContextMap()
	if fields["opcode"] != uint8(OpRead) || fields["fd"] != int32(p[0]) {
		t.Fatalf("stall warning fields %v, want opcode %d and fd %d", fields, OpRead, p[0])
	}
	// Several more checks pass: still reported once.
	time.Sleep(3 * f.opts.stallCheckEvery())
	if n := f.Stats().Stalled; n != 1 {
		t.Fatalf("Stalled = %d after more checks, want 1 (each request is reported once)", n)
	}
	if _, err := unix.Write(p[1], []byte("late")); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.Res != 4 || string(buf[:4]) != "late" {
			t.Fatalf("stalled read completed with %d %q, want 4 \"late\"", r.Res, buf[:4])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not complete after the pipe got data")
	}
	waitFor(t, "OldestInFlight to go back to 0", func() bool { return f.Stats().OldestInFlight == 0 })
	if n := logs.FilterMessageSnippet("stalled request completed").Len(); n != 1 {
		t.Fatalf("%d completion logs of the stalled request, want 1", n)
	}
}

// TestFrontStallOff: with StallAfter < 0 nothing is tracked.
func TestFrontStallOff(t *testing.T) {
	f := newFront(t, FrontOptions{Ring: Options{Entries: 8}, StallAfter: -1})
	p, _, done := pipeRead(t, f)
	time.Sleep(50 * time.Millisecond)
	if st := f.Stats(); st.Stalled != 0 || st.OldestInFlight != 0 {
		t.Fatalf("stall tracking off, yet Stalled %d OldestInFlight %v", st.Stalled, st.OldestInFlight)
	}
	unix.Write(p[1], []byte("x"))
	<-done
}

func TestFrontStallAfterValidation(t *testing.T) {
	o := FrontOptions{StallAfter: time.Millisecond}
	o.EnsureDefaults()
	if err := o.Validate(); !errors.Is(err, ErrBadOptions) {
		t.Fatalf("StallAfter 1ms: %v, want ErrBadOptions", err)
	}
	o = FrontOptions{}
	o.EnsureDefaults()
	if o.StallAfter != 30*time.Second || o.Validate() != nil {
		t.Fatalf("default StallAfter %v (%v), want 30s and valid", o.StallAfter, o.Validate())
	}
}
