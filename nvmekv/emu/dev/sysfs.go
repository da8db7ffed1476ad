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
