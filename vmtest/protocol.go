package vmtest

import "time"

// The guest init and the host talk through the serial console only: the
// init prints marker lines that start with MarkerPrefix, and everything else
// is the test binaries' own -test.v output (plus any kernel message).
const (
	MarkerPrefix = "@@vmtest "
	// MarkerBoot is printed once the init runs: "@@vmtest boot kernel=<release>".
	MarkerBoot = "boot"
	// MarkerBegin precedes a test binary: "@@vmtest begin <name> <import path>".
	MarkerBegin = "begin"
	// MarkerEnd follows it: "@@vmtest end <name> exit=<code> elapsed=<duration>".
	MarkerEnd = "end"
	// MarkerError reports a failure of the init itself (module load, missing device).
	MarkerError = "error"
	// MarkerDone is the last line before power-off: "@@vmtest done".
	MarkerDone = "done"
)

// GuestConfigPath is where the host puts the GuestConfig (JSON) in the initramfs.
const GuestConfigPath = "/etc/vmtest.json"

// GuestConfig tells the guest init what to do.
type GuestConfig struct {
	Modules     []GuestModule // in load order
	Devices     []string      // device nodes to wait for before running tests
	DeviceWait  time.Duration // how long to wait for them
	Tests       []GuestTest   // run in this order
	TestTimeout time.Duration // passed as -test.timeout
	Run         string        // passed as -test.run when not empty
	Short       bool          // pass -test.short
	Bench       string        // passed as -test.bench when not empty
	BenchTime   string        // passed as -test.benchtime when not empty
	Env         []string      // extra KEY=VALUE for every test binary
}

// GuestModule is one kernel module in the initramfs.
type GuestModule struct {
	Path       string // absolute path inside the initramfs
	Compressed bool   // still compressed: load with MODULE_INIT_COMPRESSED_FILE
	Params     string // module parameters passed to finit_module (ModuleParams)
}

// ModuleParams are the parameters the guest loads modules by name with.
// The NVMe driver gets one poll queue (nvme.poll_queues=1), so that an
// IOPOLL ring's passthrough commands (IORING_SETUP_IOPOLL on /dev/ngXnY)
// go to a queue without interrupts and complete only by being polled: on
// Linux 6.12 nvme_uring_cmd_io allocates them with REQ_POLLED, the block
// layer maps them to the poll queue, and nvme_ns_chr_uring_cmd_iopoll
// polls their request (blk_rq_poll; drivers/nvme/host/ioctl.c). Linux 6.1
// polled only bios with a block device, which passthrough bios lack, so a
// polled command on a poll queue never completed there; the guest no
// longer boots 6.1 (scripts/guest-kernel), and nvmekv/emu/dev refuses that
// combination before 6.2 (dev.NVMe.CheckIOPoll). Every other queue of the
// driver is interrupt-driven as without the parameter.
var ModuleParams = map[string]string{"nvme": "poll_queues=1"}

// ModuleInitCompressedFile is finit_module's flag for a compressed module
// (include/uapi/linux/module.h, Linux 5.17+ with CONFIG_MODULE_DECOMPRESS).
const ModuleInitCompressedFile = 4

// GuestTest is one test binary in the initramfs.
type GuestTest struct {
	Name string // short name, e.g. "nvmept"
	Pkg  string // import path, printed in the summary line
	Path string // absolute path inside the initramfs
}
