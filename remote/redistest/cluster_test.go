package redistest

import (
	"strings"
	"testing"
	"time"
)

// TestClusterComesUp checks RT1: a 3+3 cluster serves every slot and takes
// a write on the node that owns its key's slot.
func TestClusterComesUp(t *testing.T) {
	c := StartCluster(t, 3, 1)
	if len(c.Nodes) != 6 {
		t.Fatalf("%d nodes", len(c.Nodes))
	}
	info, err := c.Nodes[0].Do("CLUSTER", "INFO")
	if err != nil || !strings.Contains(info, "cluster_known_nodes:6") || !strings.Contains(info, "cluster_size:3") {
		t.Fatalf("CLUSTER INFO: %q, %v", info, err)
	}
	m := c.MasterOf(12182) // the slot of "foo"
	if m == nil {
		t.Fatal("no master serves slot 12182")
	}
	if _, err := m.Do("SET", "foo", "bar"); err != nil {
		t.Fatalf("SET on the slot's master: %v", err)
	}
	if v, err := m.Do("GET", "foo"); err != nil || v != "bar" {
		t.Fatalf("GET: %q %v", v, err)
	}
}

// TestKillAndRestart checks RT2: a killed master is replaced by its
// replica, and once restarted it rejoins (as a replica) and the cluster is
// ok again.
func TestKillAndRestart(t *testing.T) {
	c := StartCluster(t, 3, 1)
	m := c.MasterOf(12182)
	m.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if n := c.MasterOf(12182); n != nil && n != m {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no replica took over slot 12182")
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.WaitOK(30 * time.Second)
	m.Restart()
	c.WaitOK(30 * time.Second)
	if _, err := m.Do("PING"); err != nil {
		t.Fatal(err)
	}
}
