package vmtest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.uber.org/zap"
)

// DefaultPackages are the guest test packages (run in go list order).
var DefaultPackages = []string{"./vmtest/guest/..."}

// DefaultBinaries are the programs packed into the guest's /bin.
var DefaultBinaries = []string{"./cmd/tiercache"}

// Options configure one guest run. The zero value plus EnsureDefaults is
// the CI configuration.
type Options struct {
	Dir          string        // Go module root where go build runs; default "."
	Packages     []string      // guest test packages (go list patterns); default DefaultPackages
	Binaries     []string      // main packages packed as /bin/<name>, path in $TIERCACHE_BIN_<NAME>; default DefaultBinaries
	HostPrograms []string      // host executables packed with their libraries at their own paths, path in $TIERCACHE_BIN_<NAME>; default DefaultHostPrograms
	Kernel       string        // guest kernel image; default the newest /boot/vmlinuz-* with /lib/modules/<version>/modules.dep
	ModulesDir   string        // /lib/modules/<version>; default derived from Kernel
	Modules      []string      // kernel modules to load (dependencies added); default GuestModules
	QEMU         string        // emulator binary; default "qemu-system-x86_64"
	CPUs         int           // guest CPUs, all on node 0; default 2
	Node0MB      int           // node 0 memory (has the CPUs), MiB; default 1024
	Node1MB      int           // node 1 memory (memory only, CXL-like), MiB; default 1024
	ImageBytes   int64         // size of each NVMe namespace image (nvme0: passthrough tests, nvme1: sidecar cold tier), bytes; default 256 MiB
	Timeout      time.Duration // hard limit for the guest run, QEMU is killed after it; default 20m
	TestTimeout  time.Duration // -test.timeout of each guest binary; default 10m
	DeviceWait   time.Duration // how long the guest waits for /dev/ng0n1; default 30s
	Run          string        // -test.run for every guest binary; default all tests
	Short        bool          // run the guest binaries with -test.short
	Bench        string        // -test.bench for every guest binary (with -test.benchtime BenchTime); default none
	BenchTime    string        // -test.benchtime when Bench is set; default the test binary's (1s)
	KeepWork     bool          // keep the temporary work directory (initramfs, image)
	Stdout       io.Writer     // guest console and progress lines; default os.Stdout
	Logger       *zap.Logger   // default zap.NewNop()
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Dir == "" {
		o.Dir = "."
	}
	if o.Packages == nil {
		o.Packages = DefaultPackages
	}
	if o.Binaries == nil {
		o.Binaries = DefaultBinaries
	}
	if o.HostPrograms == nil {
		o.HostPrograms = DefaultHostPrograms
	}
	if o.Modules == nil {
		o.Modules = GuestModules
	}
	if o.QEMU == "" {
		o.QEMU = "qemu-system-x86_64"
	}
	if o.CPUs == 0 {
		o.CPUs = 2
	}
	if o.Node0MB == 0 {
		o.Node0MB = 1024
	}
	if o.Node1MB == 0 {
		o.Node1MB = 1024
	}
	if o.ImageBytes == 0 {
		o.ImageBytes = 256 << 20
	}
	if o.Timeout == 0 {
		o.Timeout = 20 * time.Minute
	}
	if o.TestTimeout == 0 {
		o.TestTimeout = 10 * time.Minute
	}
	if o.DeviceWait == 0 {
		o.DeviceWait = 30 * time.Second
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
}

// Validate reports every invalid field at once.
func (o *Options) Validate() error {
	var errs []error
	if len(o.Packages) == 0 {
		errs = append(errs, errors.New("vmtest: Packages is empty: no guest tests to run"))
	}
	if o.CPUs < 1 || o.CPUs > 64 {
		errs = append(errs, fmt.Errorf("vmtest: CPUs %d is out of range 1..64", o.CPUs))
	}
	if o.Node0MB < 256 {
		errs = append(errs, fmt.Errorf("vmtest: Node0MB %d is below 256 MiB, too small to boot", o.Node0MB))
	}
	if o.Node1MB < 64 {
		errs = append(errs, fmt.Errorf("vmtest: Node1MB %d is below 64 MiB", o.Node1MB))
	}
	if o.ImageBytes < 1<<20 || o.ImageBytes%4096 != 0 {
		errs = append(errs, fmt.Errorf("vmtest: ImageBytes %d must be a multiple of 4096 and at least 1 MiB", o.ImageBytes))
	}
	if o.Timeout <= 0 || o.TestTimeout <= 0 || o.DeviceWait <= 0 {
		errs = append(errs, errors.New("vmtest: Timeout, TestTimeout and DeviceWait must be positive"))
	}
	return errors.Join(errs...)
}
