package main

import (
	"fmt"
	"io"
	"os"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/numa"
)

// cmdNuma prints the topology and the node the warm tier would use with
// the configuration (warm.node, warm.fallback); it exits 1 when serve would
// refuse to start because of the warm node.
func cmdNuma(args []string, stdout, stderr io.Writer) int {
	cfg, err := loadConfig("numa", args, os.Environ(), stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	node, err := cfg.warmNode()
	if err != nil {
		return exitCode(err, stderr)
	}
	topo, err := numa.ReadTopology()
	if err != nil {
		return exitCode(fmt.Errorf("read NUMA topology: %w", err), stderr)
	}
	if _, err := topo.Print(stdout, node); err != nil {
		return exitCode(err, stderr)
	}
	fmt.Fprintf(stdout, "warm tier config: node %s, policy %s, mode %s, fallback %s, %v\n",
		cfg.Warm.Node, cfg.Warm.Policy, cfg.Warm.Mode, cfg.Warm.Fallback, cfg.Warm.Bytes)
	rc := 0
	if _, _, err := topo.WarmNodeFor(node); err != nil {
		if cfg.Warm.Fallback == "strict" {
			fmt.Fprintln(stdout, "tiercache serve would refuse to start (warm.fallback strict)")
			rc = 1
		} else {
			fmt.Fprintln(stdout, "tiercache serve would start with the warm arena unbound (warm.fallback preferred)")
		}
	}
	if !printColdIndexNode(stdout, cfg) {
		rc = 1
	}
	return rc
}

// printColdIndexNode prints where cold.index_node puts the emulated
// store's off-heap index (backends emulated and nvme, which keep one) and
// reports false when serve would refuse to start because of it (C10).
func printColdIndexNode(w io.Writer, cfg *Config) bool {
	if cfg.Cold.Backend != "emulated" && cfg.Cold.Backend != "nvme" {
		fmt.Fprintf(w, "cold index: none (cold.backend %s keeps no index in DRAM)\n", cfg.Cold.Backend)
		return true
	}
	b, err := cfg.build(zap.NewNop())
	if err != nil {
		fmt.Fprintf(w, "cold index config: node %s: %v\n", cfg.Cold.IndexNode, err)
		return false
	}
	n, err := b.cold.IndexNodeFor(b.tier.WarmNode())
	switch {
	case err != nil:
		fmt.Fprintf(w, "cold index config: node %s: UNUSABLE: %v\ntiercache serve would refuse to start (cold.index_node)\n", cfg.Cold.IndexNode, err)
		return false
	case n == numa.Unbound:
		fmt.Fprintf(w, "cold index config: node %s: unbound (its off-heap tables, tag segments from 64KiB and extent tables from 2MiB, go where the kernel puts them)\n", cfg.Cold.IndexNode)
	default:
		fmt.Fprintf(w, "cold index config: node %s: NUMA node %d (its off-heap tables, tag segments from 64KiB and extent tables from 2MiB, mbind)\n", cfg.Cold.IndexNode, n)
	}
	return true
}
