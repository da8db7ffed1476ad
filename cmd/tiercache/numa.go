package main

import (
	"fmt"
	"io"
	"os"

	"github.com/tiercache/tiercache/numa"
)

// cmdNuma prints the topology and the node the warm tier would use.
func cmdNuma(args []string, stdout, stderr io.Writer) int {
	cfg, err := loadConfig("numa", args, os.Environ(), stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	topo, err := numa.ReadTopology()
	if err != nil {
		return exitCode(fmt.Errorf("read NUMA topology: %w", err), stderr)
	}
	if _, err := topo.WriteTo(stdout); err != nil {
		return exitCode(err, stderr)
	}
	node, err := cfg.warmNode()
	if err != nil {
		return exitCode(err, stderr)
	}
	switch node {
	case numa.AutoNode:
		n, why := topo.WarmNode()
		if n == numa.Unbound {
			fmt.Fprintf(stdout, "warm tier: unbound (warm.node auto: %s)\n", why)
		} else {
			fmt.Fprintf(stdout, "warm tier: node %d, policy %s (warm.node auto: %s)\n", n, cfg.Warm.Policy, why)
		}
	case numa.Unbound:
		fmt.Fprintln(stdout, "warm tier: unbound (warm.node unbound)")
	default:
		fmt.Fprintf(stdout, "warm tier: node %d, policy %s, fallback %s (warm.node %d)\n", node, cfg.Warm.Policy, cfg.Warm.Fallback, node)
	}
	return 0
}
