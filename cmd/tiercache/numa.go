package main

import (
	"fmt"
	"io"
	"os"

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
	if _, _, err := topo.WarmNodeFor(node); err != nil {
		if cfg.Warm.Fallback == "strict" {
			fmt.Fprintln(stdout, "tiercache serve would refuse to start (warm.fallback strict)")
			return 1
		}
		fmt.Fprintln(stdout, "tiercache serve would start with the warm arena unbound (warm.fallback preferred)")
	}
	return 0
}
