package numanode

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tiercache/tiercache/numa"
)

// numaScanSeq reads mm->numa_scan_seq of this process from
// /proc/self/sched: how many full passes the NUMA balancing scanner has
// made over its address space (kernel/sched/debug.c, CONFIG_SCHED_DEBUG).
func numaScanSeq(t *testing.T) int {
	t.Helper()
	f, err := os.Open("/proc/self/sched")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "mm->numa_scan_seq"); ok {
			// "mm->numa_scan_seq      :      N"
			v = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("mm->numa_scan_seq %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatal("/proc/self/sched has no mm->numa_scan_seq (kernel without CONFIG_NUMA_BALANCING or CONFIG_SCHED_DEBUG)")
	return 0
}

// TestRangeArenaImmuneToNumaBalancing: with automatic NUMA balancing on
// (Debian's default with two nodes) and the CPUs (all on node 0) touching
// the arena continuously, a range-mode arena (mbind VMA policy) keeps every
// page on node 1 while the balancer makes several full passes over the
// process. A thread-mode arena, which has no VMA policy, is measured in the
// same conditions and reported (in this guest it moves to node 0 within a
// few seconds), not asserted: when the balancer gets to it is up to the
// kernel. This is why the warm tier defaults to range mode.
func TestRangeArenaImmuneToNumaBalancing(t *testing.T) {
	requireGuest(t)
	setNumaBalancing(t, "1")
	for _, mode := range []numa.Mode{numa.ModeRange, numa.ModeThread} {
		a, err := numa.NewArena(numa.ArenaOptions{Bytes: 8 << 20, Node: cxlNode, Policy: numa.PolicyBind, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		b := a.Bytes()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					for i := g * 4096; i < len(b); i += 8192 {
						b[i]++
					}
				}
			}()
		}
		start := numaScanSeq(t)
		deadline := time.Now().Add(2 * time.Minute)
		for numaScanSeq(t) < start+2 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		close(stop)
		wg.Wait()
		passes := numaScanSeq(t) - start
		rep, err := a.PlacementReport(0)
		a.Close()
		if err != nil {
			t.Fatal(err)
		}
		if passes < 2 {
			t.Fatalf("the NUMA balancer made %d passes in 2 minutes, want 2", passes)
		}
		if mode == numa.ModeRange && rep.PerNode[cxlNode] != rep.Samples {
			t.Fatalf("range mode under NUMA balancing (%d passes): pages per node %v, want all %d on node 1", passes, rep.PerNode, rep.Samples)
		}
		t.Logf("%s mode, %d balancer passes with the CPUs touching it: pages per node %v", mode, passes, rep.PerNode)
	}
}
