package server

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestPipelinedCommandsObservedTogether (S51): the same command pipelined
// in one read is observed with one call per run of at most pendingMax,
// every execution counted once; a different command, EXEC (whose own
// commands are observed one by one) and the wait for input each end a
// run (TestObserveLatency: that wait is never timed).
func TestPipelinedCommandsObservedTogether(t *testing.T) {
	var mu sync.Mutex
	execs, calls := map[string]int{}, map[string]int{}
	_, path := startServer(t, func(o *Options) {
		o.ObserveLatency = func(cmd string) func(time.Duration, int) {
			return func(d time.Duration, n int) {
				mu.Lock()
				defer mu.Unlock()
				if d < 0 || n < 1 {
					t.Errorf("%s observed %d × %v", cmd, n, d)
				}
				execs[cmd] += n
				calls[cmd]++
			}
		}
	})
	c := dialRaw(t, path)
	var cmds [][]string
	for i := range 2*pendingMax + 8 {
		cmds = append(cmds, []string{"SET", fmt.Sprint("k", i), "v"})
	}
	cmds = append(cmds, []string{"INCR", "n"}, []string{"incr", "n"}, []string{"MULTI"}, []string{"INCR", "n"},
		[]string{"INCR", "n"}, []string{"EXEC"}, []string{"INCR", "n"}, []string{"QUIT"})
	c.send(pipeline(cmds...))
	for range cmds {
		c.reply()
	}
	c.expectClosed() // after QUIT, what it left to observe is observed

	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{"set": 2*pendingMax + 8, "incr": 5, "multi": 1, "exec": 1, "quit": 1}
	for cmd, n := range want {
		if execs[cmd] != n {
			t.Errorf("%s observed %d times, want %d (all observed: %v)", cmd, execs[cmd], n, execs)
		}
	}
	// The pipeline arrives in one read: its SETs in 3 runs of at most pendingMax.
	if calls["set"] != 3 {
		t.Errorf("set observed in %d calls, want 3 (runs of at most %d)", calls["set"], pendingMax)
	}
	// INCR INCR together; the two inside EXEC one by one; the one after EXEC alone.
	if calls["incr"] != 4 {
		t.Errorf("incr observed in %d calls, want 4", calls["incr"])
	}
}
