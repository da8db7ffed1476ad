package numa

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"", nil, false},
		{"0\n", []int{0}, false},
		{"0-3,5,8-9", []int{0, 1, 2, 3, 5, 8, 9}, false},
		{"3-1", nil, true},
		{"x", nil, true},
		{"1,", nil, true},
		{"0-99999999", nil, true},
	} {
		got, err := parseList(tc.in)
		if (err != nil) != tc.bad || !slices.Equal(got, tc.want) {
			t.Errorf("parseList(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
		if err == nil {
			back, _ := parseList(formatList(got))
			if len(got) > 0 && !slices.Equal(back, got) {
				t.Errorf("formatList(%v) = %q does not parse back", got, formatList(got))
			}
		}
	}
	if got := formatList([]int{0, 1, 2, 4, 6, 7}); got != "0-2,4,6-7" {
		t.Errorf("formatList = %q", got)
	}
}

func TestFakeCXLBoxTopology(t *testing.T) {
	for _, attr := range []string{"nodelist", "nodes"} {
		t.Run(attr, func(t *testing.T) {
			topo, err := ReadTopologyFrom(fakeCXLBox(t, attr))
			if err != nil {
				t.Fatal(err)
			}
			if got := topo.IDs(); !slices.Equal(got, []int{0, 1, 2}) {
				t.Fatalf("IDs = %v", got)
			}
			n0, _ := topo.Node(0)
			n1, _ := topo.Node(1)
			n2, _ := topo.Node(2)
			if !n0.HasCPU || !n0.HasMemory || !n0.HasNormalMemory || !slices.Equal(n0.CPUs, []int{0, 1, 2, 3}) ||
				n0.MemTotal != 8<<30 || n0.MemFree != 4<<30 || n0.Tier != 4 {
				t.Errorf("node 0 = %+v", n0)
			}
			if n1.HasCPU || !n1.HasMemory || n1.HasNormalMemory || len(n1.CPUs) != 0 || n1.MemTotal != 4<<30 || n1.Tier != 22 || !n1.CPULess() {
				t.Errorf("node 1 = %+v", n1)
			}
			if !n2.HasCPU || n2.HasMemory || n2.CPULess() {
				t.Errorf("node 2 = %+v", n2)
			}
			if d := topo.Distance(0, 1); d != 20 {
				t.Errorf("Distance(0,1) = %d", d)
			}
			if d := topo.Distance(2, 1); d != 24 {
				t.Errorf("Distance(2,1) = %d", d)
			}
			if d := topo.Distance(0, 7); d != -1 {
				t.Errorf("Distance(0,7) = %d, want -1", d)
			}
			if c := topo.CXLCandidates(); !slices.Equal(c, []int{1}) {
				t.Errorf("CXLCandidates = %v, want [1]", c)
			}
			if n, reason := topo.WarmNode(); n != 1 || !strings.Contains(reason, "tier 22") {
				t.Errorf("WarmNode = %d, %q", n, reason)
			}
			var buf bytes.Buffer
			n, err := topo.WriteTo(&buf)
			if err != nil || n != int64(buf.Len()) {
				t.Fatalf("WriteTo = %d, %v (buffer %d)", n, err, buf.Len())
			}
			out := buf.String()
			buf.Reset()
			topo.Print(&buf, 2)
			if !strings.Contains(buf.String(), "warm tier node: 2 UNUSABLE: numa: node has no memory: node 2 has no memory") {
				t.Errorf("Print(node 2) lacks the error:\n%s", buf.String())
			}
			if n, reason, err := topo.WarmNodeFor(0); n != 0 || err != nil || !strings.Contains(reason, "not CXL") {
				t.Errorf("WarmNodeFor(0) = %d %q %v", n, reason, err)
			}
			if n, _, err := topo.WarmNodeFor(Unbound); n != Unbound || err != nil {
				t.Errorf("WarmNodeFor(Unbound) = %d %v", n, err)
			}
			if n, _, err := topo.WarmNodeFor(AutoNode); n != 1 || err != nil {
				t.Errorf("WarmNodeFor(AutoNode) = %d %v", n, err)
			}
			if _, _, err := topo.WarmNodeFor(7); !errors.Is(err, ErrNoSuchNode) {
				t.Errorf("WarmNodeFor(7) = %v", err)
			}
			for _, want := range []string{"warm tier node: 1", "cpu-less memory", "8.0 GiB", "distances:", "CXL candidates"} {
				if !strings.Contains(out, want) {
					t.Errorf("WriteTo output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestCXLCandidatesRanking(t *testing.T) {
	root := t.TempDir()
	n := "devices/system/node/"
	writeFile(t, root, n+"online", "0-4\n")
	writeFile(t, root, n+"has_cpu", "0\n")
	writeFile(t, root, n+"has_memory", "0-4\n")
	writeFile(t, root, n+"node0/distance", "10 30 20 25 15\n")
	for i := 0; i <= 4; i++ {
		writeFile(t, root, n+"node"+string(rune('0'+i))+"/meminfo", "Node 9 MemTotal: 1024 kB\n")
	}
	mt := "devices/virtual/memory_tiering/"
	writeFile(t, root, mt+"memory_tier4/nodelist", "0\n")
	writeFile(t, root, mt+"memory_tier22/nodelist", "1-2\n")
	writeFile(t, root, mt+"memory_tier10/nodelist", "3\n")
	// node 4 has no tier: ranked last despite the shortest distance.
	topo, err := ReadTopologyFrom(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := topo.CXLCandidates(), []int{3, 2, 1, 4}; !slices.Equal(got, want) {
		t.Fatalf("CXLCandidates = %v, want %v (tier, then distance, unknown tier last)", got, want)
	}
}

func TestNoNUMASysfs(t *testing.T) {
	topo, err := ReadTopologyFrom(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(topo.IDs(), []int{0}) || len(topo.CXLCandidates()) != 0 {
		t.Fatalf("topology without node dir = %+v", topo.Nodes)
	}
	if n, _ := topo.WarmNode(); n != Unbound {
		t.Fatalf("WarmNode = %d, want Unbound", n)
	}
}

func TestBadSysfs(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "devices/system/node/online", "zero\n")
	if _, err := ReadTopologyFrom(root); !errors.Is(err, ErrTopology) {
		t.Fatalf("err = %v, want ErrTopology", err)
	}
}

func TestRealTopology(t *testing.T) {
	topo, err := ReadTopology()
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Nodes) == 0 {
		t.Fatal("no nodes")
	}
	hasMem := false
	for _, n := range topo.Nodes {
		hasMem = hasMem || n.HasMemory
		if topo.Distance(n.ID, n.ID) != 10 && topo.Distance(n.ID, n.ID) != -1 {
			t.Errorf("node %d local distance %d, want 10", n.ID, topo.Distance(n.ID, n.ID))
		}
	}
	if !hasMem {
		t.Error("no node with memory")
	}
	node := testNode(t)
	if n, ok := topo.Node(node); !ok {
		skipOrFail(t, "node %d (TIERCACHE_NUMA_NODE) is not on this machine (nodes %v)", node, topo.IDs())
	} else if n.CPULess() && !slices.Contains(topo.CXLCandidates(), node) {
		t.Errorf("CPU-less node %d missing from CXLCandidates %v", node, topo.CXLCandidates())
	} else if n.CPULess() {
		if w, _ := topo.WarmNode(); w != topo.CXLCandidates()[0] {
			t.Errorf("WarmNode = %d, want first candidate %d", w, topo.CXLCandidates()[0])
		}
	}
	var buf bytes.Buffer
	if _, err := topo.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	t.Logf("tiercache numa:\n%s", buf.String())
}
