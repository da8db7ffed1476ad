package dev

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// queueLimits reads the block layer limits the NVMe driver set for the
// namespace behind a generic char device: /dev/ngXnY belongs to the block
// device nvmeXnY (drivers/nvme/host/core.c nvme_add_ns_cdev names it
// "ng%dn%d" after the disk's "nvme%dn%d"), whose queue directory holds
// max_hw_sectors_kb and max_segments. 0 where unknown (multipath names,
// no sysfs).
func queueLimits(path string) (hwKB, segs int) {
	name := filepath.Base(path)
	if !strings.HasPrefix(name, "ng") {
		return 0, 0
	}
	q := filepath.Join("/sys/block", "nvme"+name[2:], "queue")
	return readInt(filepath.Join(q, "max_hw_sectors_kb")), readInt(filepath.Join(q, "max_segments"))
}

func readInt(p string) int {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// kernelVersion is the running kernel's major and minor version
// (/proc/sys/kernel/osrelease), 0, 0 if unknown.
func kernelVersion() (major, minor int) {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return 0, 0
	}
	parts := strings.SplitN(strings.TrimSpace(string(b)), ".", 3)
	if len(parts) < 2 {
		return 0, 0
	}
	major, _ = strconv.Atoi(parts[0])
	minor, _ = strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return major, minor
}
