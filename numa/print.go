package numa

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTo prints the topology as `tiercache numa` shows it: one line per
// node, the distance matrix, the CXL candidates and the node the warm tier
// would use with AutoNode. It implements io.WriterTo.
func (t *Topology) WriteTo(w io.Writer) (int64, error) { return t.Print(w, AutoNode) }

// Print is WriteTo for a configured warm-tier node (a node id, Unbound or
// AutoNode): the last line says which node the warm arena would use, or
// why the configured node cannot be used.
func (t *Topology) Print(w io.Writer, warmNode int) (int64, error) {
	cw := &countWriter{w: w}
	tw := tabwriter.NewWriter(cw, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "node\tcpus\tmemory\tfree\ttier\tkind\n")
	for _, n := range t.Nodes {
		tier := "-"
		if n.Tier >= 0 {
			tier = strconv.Itoa(n.Tier)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", n.ID, formatList(n.CPUs),
			humanBytes(n.MemTotal), humanBytes(n.MemFree), tier, nodeKind(n))
	}
	tw.Flush()
	fmt.Fprintf(cw, "\ndistances:\n")
	tw = tabwriter.NewWriter(cw, 0, 4, 2, ' ', tabwriter.AlignRight)
	var hdr strings.Builder
	hdr.WriteString("\t")
	for _, n := range t.Nodes {
		fmt.Fprintf(&hdr, "%d\t", n.ID)
	}
	fmt.Fprintln(tw, hdr.String())
	for _, a := range t.Nodes {
		fmt.Fprintf(tw, "%d\t", a.ID)
		for _, b := range t.Nodes {
			fmt.Fprintf(tw, "%d\t", t.Distance(a.ID, b.ID))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintf(cw, "\nCXL candidates (CPU-less memory nodes, best first): %s\n", formatList(t.CXLCandidates()))
	node, reason, err := t.WarmNodeFor(warmNode)
	switch {
	case err != nil:
		fmt.Fprintf(cw, "warm tier node: %d UNUSABLE: %v\n", warmNode, err)
	case node == Unbound:
		fmt.Fprintf(cw, "warm tier node: unbound (%s)\n", reason)
	default:
		fmt.Fprintf(cw, "warm tier node: %d (%s)\n", node, reason)
	}
	return cw.n, cw.err
}

func nodeKind(n Node) string {
	switch {
	case n.CPULess():
		return "cpu-less memory (CXL candidate)"
	case n.HasCPU && n.HasMemory:
		return "cpu+memory"
	case n.HasCPU:
		return "cpu only"
	}
	return "empty"
}

func humanBytes(v uint64) string {
	const unit = 1024
	if v < unit {
		return fmt.Sprintf("%d B", v)
	}
	div, exp := uint64(unit), 0
	for n := v / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(v)/float64(div), "KMGTPE"[exp])
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}
