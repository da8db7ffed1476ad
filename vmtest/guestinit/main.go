// Command guestinit is /init of the vmtest QEMU guest: it mounts the
// pseudo file systems, loads the NVMe kernel modules, waits for the NVMe
// devices, runs every test binary listed in /etc/vmtest.json with -test.v
// (output goes straight to the serial console), prints the vmtest markers
// the host parses, and powers the guest off. It is built static
// (CGO_ENABLED=0) by vmtest.Run; it is useless outside the guest.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tiercache/tiercache/vmtest"
)

func mark(format string, args ...any) {
	fmt.Printf("\n"+vmtest.MarkerPrefix+format+"\n", args...)
}

func main() {
	defer powerOff()
	defer func() {
		if r := recover(); r != nil {
			mark("%s init panicked: %v", vmtest.MarkerError, r)
		}
	}()
	if err := mountAll(); err != nil {
		mark("%s %v", vmtest.MarkerError, err)
		return
	}
	// Keep kernel messages off the console: they would split test lines.
	_ = os.WriteFile("/proc/sys/kernel/printk", []byte("1 4 1 7"), 0)
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	mark("%s kernel=%s", vmtest.MarkerBoot, unix.ByteSliceToString(uts.Release[:]))

	if err := loopbackUp(); err != nil {
		mark("%s %v", vmtest.MarkerError, err)
	}
	cfg, err := readConfig()
	if err != nil {
		mark("%s %v", vmtest.MarkerError, err)
		return
	}
	// The NVMe driver probes its controllers asynchronously, so with
	// autoprobing their names (nvme0, nvme1, ...) follow whichever probe
	// ran first. Bind them by hand in PCI order instead: a probe numbers
	// its controller before it returns.
	if err := os.WriteFile(pciAutoprobe, []byte("0"), 0); err != nil {
		mark("%s guestinit: %s: %v", vmtest.MarkerError, pciAutoprobe, err)
	}
	for _, m := range cfg.Modules {
		if err := loadModule(m); err != nil {
			mark("%s %v", vmtest.MarkerError, err)
		}
	}
	if err := bindNVMeInOrder(); err != nil {
		mark("%s %v", vmtest.MarkerError, err)
	}
	if err := waitDevices(cfg.Devices, cfg.DeviceWait); err != nil {
		mark("%s %v", vmtest.MarkerError, err)
	}
	for _, t := range cfg.Tests {
		runTest(cfg, t)
	}
	unix.Sync()
	mark("%s", vmtest.MarkerDone)
}

func mountAll() error {
	mounts := []struct{ src, dst, fstype, data string }{
		{"proc", "/proc", "proc", ""},
		{"sysfs", "/sys", "sysfs", ""},
		{"devtmpfs", "/dev", "devtmpfs", ""},
		{"tmpfs", "/tmp", "tmpfs", "mode=1777"},
		{"tmpfs", "/run", "tmpfs", "mode=0755"},
	}
	for _, m := range mounts {
		if err := os.MkdirAll(m.dst, 0o755); err != nil {
			return fmt.Errorf("guestinit: mkdir %s: %w", m.dst, err)
		}
		if err := unix.Mount(m.src, m.dst, m.fstype, 0, m.data); err != nil && !errors.Is(err, unix.EBUSY) {
			return fmt.Errorf("guestinit: mount %s on %s: %w", m.fstype, m.dst, err)
		}
	}
	return nil
}

// loopbackUp sets IFF_UP on lo, so tests can use 127.0.0.1 (QEMU runs
// with -nic none: lo is the only interface).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("guestinit: socket for lo: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("guestinit: ifreq lo: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("guestinit: SIOCGIFFLAGS lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("guestinit: SIOCSIFFLAGS lo up: %w", err)
	}
	return nil
}

func readConfig() (*vmtest.GuestConfig, error) {
	b, err := os.ReadFile(vmtest.GuestConfigPath)
	if err != nil {
		return nil, fmt.Errorf("guestinit: read config: %w", err)
	}
	var cfg vmtest.GuestConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("guestinit: parse %s: %w", vmtest.GuestConfigPath, err)
	}
	return &cfg, nil
}

func loadModule(m vmtest.GuestModule) error {
	f, err := os.Open(m.Path)
	if err != nil {
		return fmt.Errorf("guestinit: open module: %w", err)
	}
	defer f.Close()
	// The host ships uncompressed objects (vmtest.ModuleForGuest) unless it
	// could not decompress and the kernel decompresses itself.
	flags := 0
	if m.Compressed {
		flags = vmtest.ModuleInitCompressedFile
	}
	if err := unix.FinitModule(int(f.Fd()), m.Params, flags); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("guestinit: finit_module %s (flags %d): %w", m.Path, flags, err)
	}
	return nil
}

func waitDevices(devs []string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		var missing []string
		for _, d := range devs {
			if _, err := os.Stat(d); err != nil {
				missing = append(missing, d)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("guestinit: devices %s did not appear within %s", strings.Join(missing, " "), wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func runTest(cfg *vmtest.GuestConfig, t vmtest.GuestTest) {
	mark("%s %s %s", vmtest.MarkerBegin, t.Name, t.Pkg)
	args := []string{"-test.v", "-test.timeout=" + cfg.TestTimeout.String()}
	if cfg.Run != "" {
		args = append(args, "-test.run="+cfg.Run)
	}
	if cfg.Bench != "" {
		args = append(args, "-test.bench="+cfg.Bench, "-test.benchmem")
		if cfg.BenchTime != "" {
			args = append(args, "-test.benchtime="+cfg.BenchTime)
		}
	}
	if cfg.Short {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(t.Path, args...)
	cmd.Dir = "/tmp"
	cmd.Env = append([]string{"PATH=/bin:/tests", "HOME=/tmp", "TMPDIR=/tmp"}, cfg.Env...)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stdout
	start := time.Now()
	err := cmd.Run()
	code, how := 0, ""
	if err != nil {
		code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				how = " signal=" + strings.ReplaceAll(ws.Signal().String(), " ", "_")
				fmt.Printf("guestinit: %s was killed by signal %d (%v); last kernel messages:\n", t.Path, int(ws.Signal()), ws.Signal())
				dumpKmsg(40)
			}
		} else {
			fmt.Printf("guestinit: run %s: %v\n", t.Path, err)
		}
	}
	mark("%s %s exit=%d elapsed=%s%s", vmtest.MarkerEnd, t.Name, code, time.Since(start).Round(time.Millisecond), how)
}

// dumpKmsg prints the last n kernel log records (the console shows only
// level 1, so an OOM kill or a segfault report is otherwise invisible).
func dumpKmsg(n int) {
	// Raw syscalls: os.File would park a non-blocking read on the netpoller
	// and wait forever at the end of the log instead of returning EAGAIN.
	fd, err := unix.Open("/dev/kmsg", unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Printf("guestinit: open /dev/kmsg: %v\n", err)
		return
	}
	defer unix.Close(fd)
	var recs []string
	buf := make([]byte, 8192)
	for {
		k, err := unix.Read(fd, buf) // one record per read
		if errors.Is(err, unix.EPIPE) || errors.Is(err, unix.EINTR) {
			continue // records overwritten while reading, or a signal
		}
		if err != nil || k <= 0 {
			break // EAGAIN: end of the log
		}
		rec := string(buf[:k])
		if _, msg, ok := strings.Cut(rec, ";"); ok {
			rec = msg
		}
		recs = append(recs, strings.TrimRight(rec, "\n"))
	}
	for _, r := range recs[max(0, len(recs)-n):] {
		fmt.Printf("kmsg: %s\n", r)
	}
}

func powerOff() {
	unix.Sync()
	if err := unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF); err != nil {
		fmt.Printf("guestinit: power off: %v\n", err)
	}
	// If power-off failed, returning from init panics the kernel and
	// panic=-1 with -no-reboot ends QEMU.
}

// pciAutoprobe is the PCI bus's switch for binding drivers to devices as
// they (or the drivers) appear (Documentation/ABI/testing/sysfs-bus-pci).
const pciAutoprobe = "/sys/bus/pci/drivers_autoprobe"

// nvmeClass is the PCI class of an NVMe controller (mass storage,
// non-volatile memory, NVM Express).
const nvmeClass = "0x010802"

// bindNVMeInOrder binds every unbound NVMe controller to the nvme driver,
// one at a time in PCI address order (so QEMU's first -device nvme becomes
// nvme0, the second nvme1, ...: drivers/nvme/host/pci.c nvme_probe takes
// the controller's instance number before it returns), then turns
// autoprobing back on.
func bindNVMeInOrder() error {
	defer os.WriteFile(pciAutoprobe, []byte("1"), 0)
	devs, err := filepath.Glob("/sys/bus/pci/devices/*")
	if err != nil {
		return err
	}
	sort.Strings(devs)
	for _, d := range devs {
		class, _ := os.ReadFile(filepath.Join(d, "class"))
		if strings.TrimSpace(string(class)) != nvmeClass {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "driver")); err == nil {
			continue // bound already (autoprobe was on)
		}
		if err := os.WriteFile("/sys/bus/pci/drivers/nvme/bind", []byte(filepath.Base(d)), 0); err != nil {
			return fmt.Errorf("guestinit: bind %s to nvme: %w", filepath.Base(d), err)
		}
	}
	return nil
}
