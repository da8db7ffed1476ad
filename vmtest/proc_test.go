package vmtest

import (
	"bufio"
	"strings"
	"testing"
)

func TestReleaseAtLeast(t *testing.T) {
	for _, tc := range []struct {
		rel          string
		major, minor int
		want         bool
	}{
		{"6.12.57+deb12-amd64", 6, 2, true},
		{"6.1.0-57-amd64", 6, 2, false},
		{"6.2.0", 6, 2, true},
		{"5.19.3", 6, 2, false},
		{"7.0.0-rc1", 6, 2, true},
		{"junk", 6, 2, false},
	} {
		if got := releaseAtLeast(tc.rel, tc.major, tc.minor); got != tc.want {
			t.Errorf("releaseAtLeast(%q, %d, %d) = %v", tc.rel, tc.major, tc.minor, got)
		}
	}
}

func TestQueueInterrupts(t *testing.T) {
	in := `           CPU0       CPU1
  24:          0          0   PCI-MSIX-0000:00:04.0   0-edge      nvme0q0
  25:         10          3   PCI-MSIX-0000:00:04.0   1-edge      nvme0q1
  26:          7          0   PCI-MSIX-0000:00:05.0   0-edge      nvme1q0
  27:        100          5   PCI-MSIX-0000:00:05.0   1-edge      nvme1q1
  28:          1          2   PCI-MSIX-0000:00:05.0   2-edge      nvme1q2
  29:          9          9   PCI-MSIX-0000:00:06.0   1-edge      nvme10q1
 NMI:          0          0   Non-maskable interrupts
`
	n, err := queueInterrupts(bufio.NewScanner(strings.NewReader(in)), "nvme1")
	if err != nil || n != 108 {
		t.Fatalf("nvme1 I/O queues: %d, %v; want 108 (q1 and q2, not q0 nor nvme10)", n, err)
	}
	if _, err := queueInterrupts(bufio.NewScanner(strings.NewReader(in)), "nvme3"); err == nil {
		t.Fatal("a controller without vectors: no error")
	}
}
