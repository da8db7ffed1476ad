package vmtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// NVMe controllers the guest gets, in PCI (hence /dev/nvmeN) order.
const (
	PassthroughSerial = "tiercachevm"   // nvme0: passthrough tests
	ColdSerial        = "tiercachecold" // nvme1: the sidecar's cold tier
	MetadataSerial    = "tiercachemeta" // nvme2: a namespace whose blocks carry metadata and protection information
)

// MetadataNamespace is how QEMU formats nvme2's namespace: 512-byte blocks
// with 8 bytes of metadata each holding protection information type 1
// (QEMU nvme-ns ms, pi), the format an NVM backend must refuse (dev D3).
const MetadataNamespace = "ms=8,pi=1"

// QEMUArgs returns the emulator arguments: software emulation (KVM hangs on
// this machine kind, docs/DESIGN.md §13) on one host thread (V29), node 0 with all CPUs, node 1 with
// memory only (how Linux presents CXL type-3 memory), an NVMe controller
// per raw image (images[0] becomes nvme0, images[1] nvme1, images[2] nvme2,
// whose namespace is formatted with MetadataNamespace), serial console on
// stdio, power-off ends QEMU.
func QEMUArgs(o *Options, kernel, initrd string, images []string) []string {
	mb := func(n int) string { return strconv.Itoa(n) + "M" }
	serials := []string{PassthroughSerial, ColdSerial, MetadataSerial}
	var disks []string
	for i, img := range images {
		// discard=unmap: the namespace's Dataset Management (deallocate)
		// punches holes in the image, so deallocated blocks read as zeros.
		disks = append(disks, "-drive", fmt.Sprintf("file=%s,if=none,id=nv%d,format=raw,discard=unmap", img, i))
		if serials[i%len(serials)] == MetadataSerial {
			disks = append(disks,
				"-device", fmt.Sprintf("nvme,id=nvme%d,serial=%s", i, MetadataSerial),
				"-device", fmt.Sprintf("nvme-ns,drive=nv%d,bus=nvme%d,nsid=1,%s", i, i, MetadataNamespace))
			continue
		}
		disks = append(disks, "-device", fmt.Sprintf("nvme,serial=%s,drive=nv%d", serials[i%len(serials)], i))
	}
	return append(disks, []string{
		"-accel", "tcg,thread=single",
		"-smp", strconv.Itoa(o.CPUs),
		"-m", mb(o.Node0MB + o.Node1MB),
		"-object", "memory-backend-ram,id=m0,size=" + mb(o.Node0MB),
		"-object", "memory-backend-ram,id=m1,size=" + mb(o.Node1MB),
		"-numa", fmt.Sprintf("node,nodeid=0,cpus=0-%d,memdev=m0", o.CPUs-1),
		"-numa", "node,nodeid=1,memdev=m1",
		"-nic", "none",
		"-kernel", kernel,
		"-initrd", initrd,
		"-append", "console=ttyS0 panic=-1 quiet loglevel=3",
		"-nographic", "-no-reboot",
	}...)
}

// Run builds the guest programs, packs the initramfs, boots QEMU and
// returns what the guest tests reported. The error is nil only if every
// guest test binary passed; it wraps ErrSkip when QEMU or a kernel is
// missing, ErrTimeout when the guest overran Options.Timeout, and
// ErrGuestFailed when a guest test failed.
func Run(ctx context.Context, o Options) (*Report, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	out, log := o.Stdout, o.Logger
	qemu, err := exec.LookPath(o.QEMU)
	if err != nil {
		return nil, fmt.Errorf("%w: %s not found (install qemu-system-x86)", ErrSkip, o.QEMU)
	}
	if o.Kernel == "" {
		if o.Kernel, o.ModulesDir, err = FindKernel(); err != nil {
			return nil, err
		}
	}
	if o.ModulesDir == "" {
		o.ModulesDir = ModulesDirFor(o.Kernel)
	}
	if f, err := os.Open(o.Kernel); err != nil {
		return nil, fmt.Errorf("%w: guest kernel %s is not readable: %v", ErrSkip, o.Kernel, err)
	} else {
		f.Close()
	}
	mods, err := ResolveModules(o.ModulesDir, o.Modules)
	if err != nil {
		return nil, err
	}

	work, err := os.MkdirTemp("", "tiercache-vm-")
	if err != nil {
		return nil, fmt.Errorf("vmtest: %w", err)
	}
	if o.KeepWork {
		fmt.Fprintf(out, "vmtest: keeping work directory %s\n", work)
	} else {
		defer os.RemoveAll(work)
	}

	t0 := time.Now()
	fmt.Fprintf(out, "vmtest: building guest init and test binaries (%s)\n", strings.Join(o.Packages, " "))
	b, err := buildGuest(ctx, &o, work)
	if err != nil {
		return nil, err
	}
	initrd := filepath.Join(work, "initrd.cpio")
	cfg, err := writeInitramfs(&o, b, mods, initrd)
	if err != nil {
		return nil, err
	}
	images := []string{filepath.Join(work, "nvme0.img"), filepath.Join(work, "nvme1.img"), filepath.Join(work, "nvme2.img")}
	for _, img := range images {
		if err := makeImage(img, o.ImageBytes); err != nil {
			return nil, err
		}
	}
	st, _ := os.Stat(initrd)
	names := make([]string, len(mods))
	for i, m := range mods {
		names[i] = m.Name
	}
	fmt.Fprintf(out, "vmtest: built in %.1fs; initramfs %d MiB; kernel %s; modules %s\n",
		time.Since(t0).Seconds(), st.Size()>>20, o.Kernel, strings.Join(names, " "))

	args := QEMUArgs(&o, o.Kernel, initrd, images)
	log.Debug("starting qemu", zap.String("qemu", qemu), zap.Strings("args", args))
	rep := NewReport(cfg.Tests)
	t1 := time.Now()
	runErr := runQEMU(ctx, &o, qemu, args, rep)
	fmt.Fprintf(out, "vmtest: guest ran %.1fs (total %.1fs)\n", time.Since(t1).Seconds(), time.Since(t0).Seconds())
	rep.WriteSummary(out)
	if runErr != nil {
		return rep, runErr
	}
	return rep, rep.Err()
}

func makeImage(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("vmtest: create NVMe image: %w", err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("vmtest: size NVMe image to %d bytes: %w", size, err)
	}
	return nil
}

// runQEMU runs the emulator under the hard timeout, streaming each console
// line to o.Stdout and into rep.
func runQEMU(ctx context.Context, o *Options, qemu string, args []string, rep *Report) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, args...)
	cmd.Stdin = nil
	cmd.WaitDelay = 5 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("vmtest: start %s: %w", qemu, err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := strings.TrimRight(sc.Text(), "\r")
			fmt.Fprintln(o.Stdout, line)
			rep.Line(line)
		}
		io.Copy(io.Discard, pr) // drain after an overlong line
	}()
	waitErr := cmd.Wait()
	pw.Close()
	wg.Wait()
	if s := strings.TrimSpace(stderr.String()); s != "" {
		fmt.Fprintf(o.Stdout, "qemu stderr: %s\n", s)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: no power-off within %s; QEMU killed", ErrTimeout, o.Timeout)
	}
	if waitErr != nil {
		return fmt.Errorf("vmtest: %s: %w", qemu, waitErr)
	}
	return nil
}
