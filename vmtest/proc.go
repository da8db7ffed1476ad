package vmtest

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// KernelAtLeast reports whether the running kernel (in the guest: the
// guest kernel) is at least major.minor, from /proc/sys/kernel/osrelease.
func KernelAtLeast(major, minor int) bool {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return false
	}
	return releaseAtLeast(strings.TrimSpace(string(b)), major, minor)
}

func releaseAtLeast(rel string, major, minor int) bool {
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// QueueInterrupts is the number of interrupts the I/O queues of NVMe
// controller ctrl (e.g. "nvme1") have taken so far, summed over CPUs, from
// /proc/interrupts, where the driver names each queue's vector
// "<ctrl>q<N>" (drivers/nvme/host/pci.c queue_request_irq; q0 is the admin
// queue, not counted). A poll queue has no vector, so polled completions
// never appear here.
func QueueInterrupts(ctrl string) (uint64, error) {
	f, err := os.Open("/proc/interrupts")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return queueInterrupts(bufio.NewScanner(f), ctrl)
}

func queueInterrupts(sc *bufio.Scanner, ctrl string) (uint64, error) {
	name := regexp.MustCompile("^" + regexp.QuoteMeta(ctrl) + "q[1-9][0-9]*$")
	var total uint64
	found := false
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 || !strings.HasSuffix(fs[0], ":") || !name.MatchString(fs[len(fs)-1]) {
			continue
		}
		found = true
		for _, c := range fs[1:] {
			n, err := strconv.ParseUint(c, 10, 64)
			if err != nil {
				break // the per-CPU counts end where the chip name starts
			}
			total += n
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("vmtest: no interrupt vector named %sqN in /proc/interrupts", ctrl)
	}
	return total, nil
}
