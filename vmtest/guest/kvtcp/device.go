// Package kvtcp attaches a software KV SSD to the Linux NVMe driver in the
// vmtest QEMU guest: `tiercache kvtarget` (nvmekv/tcptarget over the
// emulated namespace) listens on 127.0.0.1:4420, the kernel's nvme-tcp
// host connects to it through /dev/nvme-fabrics, and the KV namespace
// (CSI 1) appears as a generic char device /dev/ngXnY only. Its tests
// run the nvmekv conformance suite through NVME_URING_CMD_IO on that
// device and measure Store/Retrieve against the emulated namespace called
// directly; vmtest/guest/sidecar uses Attach to run the whole sidecar on
// it.
package kvtcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// NQN is the subsystem the guest's target serves.
const NQN = "nqn.2026-12.io.tiercache:guest-kvssd"

// Port is the NVMe/TCP port (the IANA NVMe/TCP I/O port).
const Port = 4420

// Device is a KV SSD attached through nvme-tcp.
type Device struct {
	Ctrl string // controller name, e.g. nvme2
	NG   string // the namespace's generic char device, e.g. /dev/ng2n1
	NS   string // the namespace's sysfs directory (its hidden gendisk)

	t      testing.TB
	target *exec.Cmd
	out    *os.File // the target's stdout and stderr
	done   chan struct{}
	err    error
	once   sync.Once
}

// Binary is the tiercache executable the host packed into the guest.
func Binary(t testing.TB) string {
	t.Helper()
	p := os.Getenv("TIERCACHE_BIN_TIERCACHE")
	if p == "" {
		t.Fatal("TIERCACHE_BIN_TIERCACHE is not set: the host did not pack ./cmd/tiercache (vmtest.Options.Binaries)")
	}
	return p
}

// Attach starts `tiercache kvtarget` on store (a new or existing file)
// and connects the kernel to it; t.Cleanup detaches. It fails t unless the
// new controller's transport is tcp, its subsystem is NQN and its one
// namespace is reachable as /dev/ngXnY with no block device.
func Attach(t testing.TB, store string, capacity string) *Device {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "kvtarget-*.log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	d := &Device{t: t, out: out, done: make(chan struct{})}
	d.target = exec.Command(Binary(t), "kvtarget", "-listen", fmt.Sprintf("127.0.0.1:%d", Port), "-store", store,
		"-capacity", capacity, "-nqn", NQN, "-log-level", "warn")
	d.target.Stdout, d.target.Stderr = d.out, d.out
	if err := d.target.Start(); err != nil {
		t.Fatalf("start kvtarget: %v", err)
	}
	go func() {
		d.err = d.target.Wait()
		close(d.done)
	}()
	t.Cleanup(d.Detach)
	for deadline := time.Now().Add(time.Minute); !strings.Contains(d.TargetOutput(), "serving "+NQN); time.Sleep(20 * time.Millisecond) {
		select {
		case <-d.done:
			t.Fatalf("kvtarget exited (%v) before serving:\n%s", d.err, d.TargetOutput())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("kvtarget did not start within 1m:\n%s", d.TargetOutput())
		}
	}
	d.connect()
	return d
}

// connect writes the option string to /dev/nvme-fabrics (what `nvme
// connect` does: drivers/nvme/host/fabrics.c nvmf_dev_write parses it,
// nvmf_dev_read answers "instance=N,cntlid=M") and waits for the
// namespace's char device.
func (d *Device) connect() {
	t := d.t
	t.Helper()
	f, err := os.OpenFile("/dev/nvme-fabrics", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open /dev/nvme-fabrics (is nvme-fabrics loaded?): %v", err)
	}
	defer f.Close()
	opts := fmt.Sprintf("transport=tcp,traddr=127.0.0.1,trsvcid=%d,nqn=%s", Port, NQN)
	start := time.Now()
	if _, err := f.Write([]byte(opts)); err != nil {
		t.Fatalf("write %q to /dev/nvme-fabrics: %v\nkernel: %s\ntarget: %s", opts, err, KernelLog("nvme"), d.TargetOutput())
	}
	b := make([]byte, 256)
	n, err := f.Read(b)
	if err != nil {
		t.Fatalf("read /dev/nvme-fabrics: %v", err)
	}
	m := regexp.MustCompile(`instance=(\d+),cntlid=(\d+)`).FindStringSubmatch(string(b[:n]))
	if m == nil {
		t.Fatalf("/dev/nvme-fabrics answered %q", b[:n])
	}
	inst, _ := strconv.Atoi(m[1])
	d.Ctrl = fmt.Sprintf("nvme%d", inst)
	t.Logf("connected %s (cntlid %s) in %v", d.Ctrl, m[2], time.Since(start).Round(time.Millisecond))
	sys := "/sys/class/nvme/" + d.Ctrl
	for attr, want := range map[string]string{"transport": "tcp", "subsysnqn": NQN, "state": "live"} {
		got := ""
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if got = readAttr(sys + "/" + attr); got == want {
				break
			}
		}
		if got != want {
			t.Fatalf("%s/%s = %q, want %q", sys, attr, got, want)
		}
	}
	// The namespace: the generic char device ng<ctrl>n<head instance>
	// (nvme_add_ns_cdev; the head instance is not the NSID).
	for deadline := time.Now().Add(2 * time.Minute); d.NG == ""; time.Sleep(100 * time.Millisecond) {
		if ms, _ := filepath.Glob(fmt.Sprintf("/dev/ng%dn*", inst)); len(ms) == 1 {
			d.NG = ms[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no /dev/ng%dn* within 2m of connecting\nkernel: %s\ntarget: %s", inst, KernelLog("nvme"), d.TargetOutput())
		}
	}
	ms, _ := filepath.Glob(sys + "/" + d.Ctrl + "n*")
	if len(ms) != 1 {
		t.Fatalf("%s has namespaces %v, want one", sys, ms)
	}
	d.NS = ms[0]
	t.Logf("namespace %s, char device %s, ready %v after connect", d.NS, d.NG, time.Since(start).Round(time.Millisecond))
}

// Detach disconnects the controller (delete_controller: the host shuts it
// down with CC.SHN, drivers/nvme/host/core.c nvme_shutdown_ctrl) and stops
// the target with SIGTERM. Idempotent.
func (d *Device) Detach() {
	d.once.Do(func() {
		if d.Ctrl != "" {
			if err := os.WriteFile("/sys/class/nvme/"+d.Ctrl+"/delete_controller", []byte("1"), 0); err != nil {
				d.t.Errorf("delete %s: %v", d.Ctrl, err)
			}
		}
		select {
		case <-d.done:
		default:
			d.target.Process.Signal(os.Interrupt)
			select {
			case <-d.done:
			case <-time.After(time.Minute):
				d.target.Process.Kill()
				<-d.done
				d.t.Errorf("kvtarget did not exit within 1m of SIGINT")
			}
		}
		if d.err != nil {
			d.t.Errorf("kvtarget exit: %v\n%s", d.err, d.TargetOutput())
		}
		if d.t.Failed() {
			d.t.Logf("kvtarget output:\n%s", d.TargetOutput())
		}
	})
}

// TargetOutput is what the target printed so far.
func (d *Device) TargetOutput() string {
	b, _ := os.ReadFile(d.out.Name())
	return string(b)
}

func readAttr(p string) string {
	b, _ := os.ReadFile(p)
	return strings.TrimSpace(string(b))
}

// KernelLog returns the kernel log lines containing substr.
func KernelLog(substr string) string {
	recs, err := readKmsg()
	if err != nil {
		return "(/dev/kmsg: " + err.Error() + ")"
	}
	var out []string
	for _, r := range recs {
		// A record is "prefix;message\n" then " KEY=value" lines.
		_, msg, _ := strings.Cut(r, ";")
		msg, _, _ = strings.Cut(msg, "\n")
		if strings.Contains(msg, substr) {
			out = append(out, strings.TrimSpace(msg))
		}
	}
	return strings.Join(out, "\n")
}
