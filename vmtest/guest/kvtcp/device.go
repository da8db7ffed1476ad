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
	"bytes"
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

// Binary is the tiercache executable the host packed into the guest.
func Binary(t testing.TB) string {
	t.Helper()
	return packed(t, "TIERCACHE_BIN_TIERCACHE", "./cmd/tiercache (vmtest.Options.Binaries)")
}

// NVMeCLI is Debian's nvme-cli in the guest (packed by the host:
// vmtest DefaultHostPrograms).
func NVMeCLI(t testing.TB) string {
	t.Helper()
	return packed(t, "TIERCACHE_BIN_NVME", "nvme-cli (vmtest.Options.HostPrograms)")
}

// packed is the guest path of a program the host packed, from env.
func packed(t testing.TB, env, what string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Fatalf("%s is not set: the host did not pack %s", env, what)
	}
	return p
}

// Run runs the program at path with args and returns its exit status,
// stdout and stderr; it fails t when the program does not run at all.
func Run(t testing.TB, path string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatalf("%s %v: %v", path, args, err)
	}
	return 0, out.String(), errb.String()
}

// Target is a running `tiercache kvtarget`.
type Target struct {
	t    testing.TB
	cmd  *exec.Cmd
	out  *os.File // the target's stdout and stderr
	done chan struct{}
	err  error
	once sync.Once
}

// StartTarget runs `tiercache kvtarget` on 127.0.0.1:Port for NQN with
// args (-store or -dir and the rest) until it says it serves; t.Cleanup
// stops it.
func StartTarget(t testing.TB, args ...string) *Target {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "kvtarget-*.log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	tg := &Target{t: t, out: out, done: make(chan struct{})}
	tg.cmd = exec.Command(Binary(t), append([]string{"kvtarget", "-listen", fmt.Sprintf("127.0.0.1:%d", Port), "-nqn", NQN, "-log-level", "info"}, args...)...)
	tg.cmd.Stdout, tg.cmd.Stderr = tg.out, tg.out
	if err := tg.cmd.Start(); err != nil {
		t.Fatalf("start kvtarget: %v", err)
	}
	go func() {
		tg.err = tg.cmd.Wait()
		close(tg.done)
	}()
	t.Cleanup(tg.Stop)
	for deadline := time.Now().Add(time.Minute); !strings.Contains(tg.Output(), "serving "+NQN); time.Sleep(20 * time.Millisecond) {
		select {
		case <-tg.done:
			t.Fatalf("kvtarget exited (%v) before serving:\n%s", tg.err, tg.Output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("kvtarget did not start within 1m:\n%s", tg.Output())
		}
	}
	return tg
}

// Output is what the target printed so far.
func (tg *Target) Output() string {
	b, _ := os.ReadFile(tg.out.Name())
	return string(b)
}

// Stop stops the target with SIGINT and requires exit status 0.
// Idempotent.
func (tg *Target) Stop() {
	tg.once.Do(func() {
		select {
		case <-tg.done:
		default:
			tg.cmd.Process.Signal(os.Interrupt)
			select {
			case <-tg.done:
			case <-time.After(time.Minute):
				tg.cmd.Process.Kill()
				<-tg.done
				tg.t.Errorf("kvtarget did not exit within 1m of SIGINT")
			}
		}
		if tg.err != nil {
			tg.t.Errorf("kvtarget exit: %v\n%s", tg.err, tg.Output())
		}
		if tg.t.Failed() {
			tg.t.Logf("kvtarget output:\n%s", tg.Output())
		}
	})
}

// Device is a KV SSD attached through nvme-tcp.
type Device struct {
	Ctrl string // controller name, e.g. nvme2
	NG   string // the namespace's generic char device, e.g. /dev/ng2n1 ("" when it has none)
	NS   string // the namespace's sysfs directory (its hidden gendisk)

	t      testing.TB
	target *Target
	once   sync.Once
}

// Attach starts `tiercache kvtarget` on store (a new or existing file)
// and connects the kernel to it; t.Cleanup detaches. It fails t unless the
// new controller's transport is tcp, its subsystem is NQN and its one
// namespace is reachable as /dev/ngXnY with no block device.
func Attach(t testing.TB, store string, capacity string) *Device {
	t.Helper()
	tg := StartTarget(t, "-store", store, "-capacity", capacity)
	d, err := tg.Connect("", true)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TargetOutput is what the device's target printed so far.
func (d *Device) TargetOutput() string { return d.target.Output() }

// Connect connects the kernel to the target by writing the option string
// to /dev/nvme-fabrics (what `nvme connect` does:
// drivers/nvme/host/fabrics.c nvmf_dev_write parses it, nvmf_dev_read
// answers "instance=N,cntlid=M"), with extra options appended (e.g.
// ",hostnqn=...,dhchap_secret=..."). It returns the write's error when the
// kernel refuses, fails t when the controller does not become live, and
// with oneNS waits for the namespace's char device. t.Cleanup disconnects.
func (tg *Target) Connect(extra string, oneNS bool) (*Device, error) {
	t := tg.t
	t.Helper()
	f, err := os.OpenFile("/dev/nvme-fabrics", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open /dev/nvme-fabrics (is nvme-fabrics loaded?): %v", err)
	}
	defer f.Close()
	opts := fmt.Sprintf("transport=tcp,traddr=127.0.0.1,trsvcid=%d,nqn=%s%s", Port, NQN, extra)
	start := time.Now()
	if _, err := f.Write([]byte(opts)); err != nil {
		return nil, fmt.Errorf("write the connect options to /dev/nvme-fabrics: %w", err)
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
	d := &Device{t: t, target: tg, Ctrl: fmt.Sprintf("nvme%d", inst)}
	t.Cleanup(d.Disconnect)
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
	if !oneNS {
		return d, nil
	}
	// The namespace: the generic char device ng<ctrl>n<head instance>
	// (nvme_add_ns_cdev; the head instance is not the NSID).
	for deadline := time.Now().Add(2 * time.Minute); d.NG == ""; time.Sleep(100 * time.Millisecond) {
		if ms, _ := filepath.Glob(fmt.Sprintf("/dev/ng%dn*", inst)); len(ms) == 1 {
			d.NG = ms[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no /dev/ng%dn* within 2m of connecting\nkernel: %s\ntarget: %s", inst, KernelLog("nvme"), tg.Output())
		}
	}
	ms, _ := filepath.Glob(sys + "/" + d.Ctrl + "n*")
	if len(ms) != 1 {
		t.Fatalf("%s has namespaces %v, want one", sys, ms)
	}
	d.NS = ms[0]
	t.Logf("namespace %s, char device %s, ready %v after connect", d.NS, d.NG, time.Since(start).Round(time.Millisecond))
	return d, nil
}

// Disconnect deletes the controller (delete_controller: the host shuts it
// down with CC.SHN, drivers/nvme/host/core.c nvme_shutdown_ctrl).
// Idempotent.
func (d *Device) Disconnect() {
	d.once.Do(func() {
		if err := os.WriteFile("/sys/class/nvme/"+d.Ctrl+"/delete_controller", []byte("1"), 0); err != nil {
			d.t.Errorf("delete %s: %v", d.Ctrl, err)
		}
	})
}

// Detach disconnects the controller and stops the target.
func (d *Device) Detach() {
	d.Disconnect()
	d.target.Stop()
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
