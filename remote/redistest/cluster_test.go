package redistest

import (
	"bufio"
	"net"
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

// TestProxyMovesNewConnections checks RT3: a connection made before a
// Retarget keeps its server, one made after reaches the new target.
func TestProxyMovesNewConnections(t *testing.T) {
	a, b := StartServer(t), StartServer(t)
	if _, err := a.Do("SET", "who", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Do("SET", "who", "b"); err != nil {
		t.Fatal(err)
	}
	p := StartProxy(t, a.Addr)
	old, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	r := bufio.NewReader(old)
	if _, err := roundTrip(old, r, []string{"PING"}); err != nil { // the proxy dialed its target
		t.Fatal(err)
	}
	p.Retarget(b.Addr)
	if v, err := roundTrip(old, r, []string{"GET", "who"}); err != nil || v != "a" {
		t.Fatalf("the connection made before Retarget: %q %v", v, err)
	}
	nc, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if v, err := roundTrip(nc, bufio.NewReader(nc), []string{"GET", "who"}); err != nil || v != "b" {
		t.Fatalf("a connection made after Retarget: %q %v", v, err)
	}
}
