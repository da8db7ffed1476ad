package redistest

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of redis-server processes on loopback.
type Cluster struct {
	Nodes []*Server // masters first as created; a failover may change roles
	tb    testing.TB
}

// StartCluster starts masters × (1 + replicas) servers in cluster mode and
// joins them with redis-cli --cluster create; it returns once the cluster
// serves every slot (RT1). Extra server arguments (e.g. a password) go to
// every node.
func StartCluster(tb testing.TB, masters, replicas int, extra ...string) *Cluster {
	tb.Helper()
	_, cli := binaries(tb)
	c := &Cluster{tb: tb}
	args := append([]string{"--cluster-enabled", "yes", "--cluster-node-timeout", "1000",
		"--cluster-require-full-coverage", "no", "--cluster-allow-reads-when-down", "no",
		"--repl-diskless-sync-delay", "0"}, extra...)
	if pw := password(extra); pw != "" {
		args = append(args, "--masterauth", pw) // replicas sync from their master with it
	}
	for _, p := range freePorts(tb, masters*(1+replicas)) {
		s := newServer(tb, p, append(args, "--cluster-config-file", "nodes.conf")...)
		c.Nodes = append(c.Nodes, s)
	}
	tb.Cleanup(c.KillAll)
	for _, s := range c.Nodes {
		s.start()
	}
	create := []string{"--cluster", "create"}
	for _, s := range c.Nodes {
		create = append(create, s.Addr)
	}
	create = append(create, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if pw := password(extra); pw != "" {
		create = append(create, "-a", pw, "--no-auth-warning")
	}
	out, err := exec.Command(cli, create...).CombinedOutput()
	if err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.WaitOK(30 * time.Second)
	return c
}

// password is the --requirepass among extra, if any.
func password(extra []string) string {
	for i := 0; i+1 < len(extra); i++ {
		if extra[i] == "--requirepass" {
			return extra[i+1]
		}
	}
	return ""
}

// Addrs are the nodes' addresses.
func (c *Cluster) Addrs() []string {
	var a []string
	for _, s := range c.Nodes {
		a = append(a, s.Addr)
	}
	return a
}

// WaitOK waits until every running node reports cluster_state:ok with all
// 16384 slots served, and every running replica is in sync with its master
// (master_link_status:up: one that never synced cannot take over), or
// fails the test after d.
func (c *Cluster) WaitOK(d time.Duration) {
	c.tb.Helper()
	deadline := time.Now().Add(d)
	for {
		if c.ok() {
			return
		}
		if time.Now().After(deadline) {
			var logs strings.Builder
			for _, s := range c.Nodes {
				info, err := s.do("CLUSTER", "INFO")
				logs.WriteString(s.Addr + ": " + strings.ReplaceAll(info, "\r\n", " ") + " " + errString(err) + "\n")
			}
			c.tb.Fatalf("the cluster is not ok after %v:\n%s", d, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (c *Cluster) ok() bool {
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		info, err := s.do("CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
			return false
		}
		repl, err := s.do("INFO", "replication")
		if err != nil || strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return false
		}
	}
	return true
}

// MasterOf is the node serving slot now, by CLUSTER NODES of a running node.
func (c *Cluster) MasterOf(slot int) *Server {
	c.tb.Helper()
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		nodes, err := s.do("CLUSTER", "NODES")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(nodes, "\n") {
			f := strings.Fields(line)
			if len(f) < 9 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
				continue
			}
			for _, r := range f[8:] {
				lo, hi, _ := strings.Cut(r, "-")
				a, err1 := strconv.Atoi(lo)
				b, err2 := strconv.Atoi(hi)
				if err2 != nil {
					b, err2 = a, err1
				}
				if err1 == nil && err2 == nil && slot >= a && slot <= b {
					addr, _, _ := strings.Cut(f[1], "@")
					for _, n := range c.Nodes {
						if n.Addr == addr {
							return n
						}
					}
				}
			}
		}
		return nil
	}
	return nil
}

// KillAll stops every node.
func (c *Cluster) KillAll() {
	for _, s := range c.Nodes {
		s.Kill()
	}
}

// RestartAll starts every stopped node again and waits for the cluster to
// be ok (each node keeps its nodes.conf, so the cluster re-forms).
func (c *Cluster) RestartAll() {
	c.tb.Helper()
	for _, s := range c.Nodes {
		if !s.Running() {
			s.start()
		}
	}
	c.WaitOK(60 * time.Second)
}

// ReplicaOf is a running replica of master m, by CLUSTER NODES of m, or
// nil.
func (c *Cluster) ReplicaOf(m *Server) *Server {
	c.tb.Helper()
	nodes, err := m.do("CLUSTER", "NODES")
	if err != nil {
		return nil
	}
	var id string
	lines := strings.Split(nodes, "\n")
	for _, line := range lines {
		if f := strings.Fields(line); len(f) > 2 && strings.Contains(f[2], "myself") {
			id = f[0]
		}
	}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != id || !strings.Contains(f[2], "slave") || strings.Contains(f[2], "fail") {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		for _, n := range c.Nodes {
			if n.Addr == addr && n.Running() {
				return n
			}
		}
	}
	return nil
}
