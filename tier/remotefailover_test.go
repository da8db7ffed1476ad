package tier

import (
	"fmt"
	"testing"
	"time"

	"github.com/tiercache/tiercache/remote"
	"github.com/tiercache/tiercache/remote/redistest"
)

// TestRemoteFailover checks T57 on a real 3+3 Redis Cluster: a master is
// killed (SIGKILL), or replaced by its replica (CLUSTER FAILOVER), under
// two sidecars while one of them changes keys of
// its slots, which the other holds local copies of. The changes fail
// while the replica takes over and are sent again (behind W7): they land
// on the new master; the other sidecar, whose tracking connection to the
// dead master closed, checks its copies (a resync) and reads the new
// values, never the old ones once the writer's queue is empty; both
// breakers close; the counters say what happened.
func TestRemoteFailover(t *testing.T) {
	t.Run("MasterKilled", func(t *testing.T) { testRemoteFailover(t, true) })
	t.Run("ManualFailover", func(t *testing.T) { testRemoteFailover(t, false) })
}

// testRemoteFailover kills the master (kill) or has its replica take over
// with CLUSTER FAILOVER, the old master staying up as its replica.
func testRemoteFailover(t *testing.T, kill bool) {
	cl := redistest.StartCluster(t, 3, 1)
	cs := sidecars(t, 2, cl.Addrs(), "fo:", nil)
	a, b := cs[0], cs[1]
	gen := a.Stats().Remote.Store.Generation
	slotOf := func(k string) int { return int(remote.KeySlot(fmt.Appendf(nil, "fo:d%d:%s", gen, k))) }
	victim := cl.MasterOf(slotOf("k0"))
	var keys []string
	for i := 0; len(keys) < 10; i++ {
		if k := fmt.Sprint("k", i); cl.MasterOf(slotOf(k)) == victim {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		a.Set([]byte(k), []byte("v1"), SetOptions{})
	}
	settleRemote(t, a)
	for _, k := range keys { // b holds local copies (read twice: admitted)
		b.Get(nil, []byte(k))
		if v, _, _ := b.Get(nil, []byte(k)); string(v) != "v1" {
			t.Fatalf("b reads %s as %q before the failover", k, v)
		}
	}

	if kill {
		victim.Kill()
	} else {
		// The master's CLUSTER NODES may not list its replica yet, or mark
		// it fail? for a moment on a loaded machine: wait for it.
		var r *redistest.Server
		redistest.Eventually(t, 30*time.Second, "the master lists its replica", func() bool { r = cl.ReplicaOf(victim); return r != nil })
		if _, err := r.Do("CLUSTER", "FAILOVER"); err != nil {
			t.Fatal(err)
		}
		redistest.Eventually(t, 30*time.Second, "the replica takes over", func() bool { return cl.MasterOf(slotOf(keys[0])) == r })
	}
	for _, k := range keys {
		a.Set([]byte(k), []byte("v2"), SetOptions{})
	}
	redistest.Eventually(t, 60*time.Second, "a's changes are written (or given up)", func() bool {
		q := a.Stats().Remote.Queue
		return q.Queued+q.InFlight == 0
	})
	for _, k := range keys {
		coherent(t, cs, k, []byte("v2"), 10*time.Second)
	}
	for i, c := range cs {
		redistest.Eventually(t, 30*time.Second, fmt.Sprint("sidecar ", i, "'s breaker closes"), func() bool { return c.Stats().Remote.Store.Breaker == "closed" })
	}
	sa, sb := a.Stats().Remote, b.Stats().Remote
	if sa.Queue.Failed != 0 || kill && sa.Queue.Retried == 0 {
		t.Fatalf("a's queue: %d failed, %d retried; want none failed, some retried", sa.Queue.Failed, sa.Queue.Retried)
	}
	if kill && (sb.Store.Resyncs == 0 || sb.Resyncs == 0) {
		t.Fatalf("b heard of no resync (store %d, tier %d) after its connection to the dead master closed", sb.Store.Resyncs, sb.Resyncs)
	}
	t.Logf("a: %d retried, %d errors, %d timeouts, %d breaker opens; b: %d resyncs, %d invalidated, %d validated, %d replaced",
		sa.Queue.Retried, sa.Store.Errors, sa.Store.Timeouts, sa.Store.BreakerOpens, sb.Resyncs, sb.Invalidated, sb.Validated, sb.Replaced)
}
